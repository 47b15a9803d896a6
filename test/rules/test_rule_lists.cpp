// Every rule is in its family's rule list, so that the generic harnesses (every rule in every
// mode against finite differences and the reference vectors) and the tensor loops see it: a rule
// defined in a rules/ header and left out of the lists would be tested by nothing. The lists'
// types satisfy adx::elementwise_rule (rules/rule_support.hpp) at compile time; this reads the
// headers' text for the rules they define.
#include <doctest/doctest.h>

#include <boost/mp11/algorithm.hpp>
#include <filesystem>
#include <regex>
#include <string>

#include <adx/adx.hpp>

#include "support/files.hpp"

using adx_test::read_all;

TEST_CASE("rules: each rule a rules/ header defines is in that header's rule lists") {
  std::filesystem::path const dir = std::filesystem::path(ADX_SOURCE_DIR) / "include" / "adx" / "rules";
  std::regex const definition(R"(\bstruct (\w+_rule)\b[^;{]*\{)");  // not a declaration `struct x_rule;`
  std::regex const list(R"(using \w+_rules\s*=\s*boost::mp11::mp_list<([^;]*)>;)");
  std::size_t rules = 0;
  for (auto const& entry : std::filesystem::directory_iterator(dir)) {
    std::string const text = read_all(entry.path());
    std::string listed;
    for (std::sregex_iterator m(text.begin(), text.end(), list), end; m != end; ++m) listed += (*m)[1].str() + ",";
    for (std::sregex_iterator m(text.begin(), text.end(), definition), end; m != end; ++m) {
      std::string const name = (*m)[1].str();
      ++rules;
      INFO(entry.path().filename().string() << " defines detail::" << name);
      CHECK_MESSAGE(std::regex_search(listed, std::regex("detail::" + name + R"(\b)")),
                    "it is in none of the header's `..._rules` lists");
    }
  }
  CHECK(rules >= 40);  // the headers were read
}

TEST_CASE("rules: the joined lists hold each family's rules once") {
  using namespace boost::mp11;
  CHECK(mp_size<adx::all_unary_rules>::value == mp_size<mp_unique<adx::all_unary_rules>>::value);
  CHECK(mp_size<adx::all_binary_rules>::value == mp_size<mp_unique<adx::all_binary_rules>>::value);
  CHECK(mp_size<adx::all_unary_rules>::value == mp_size<adx::elementary_unary_rules>::value +
                                                    mp_size<adx::gamma_unary_rules>::value +
                                                    mp_size<adx::activation_unary_rules>::value);
  CHECK(mp_contains<adx::all_unary_rules, adx::detail::sin_rule>::value);
  CHECK(mp_contains<adx::all_binary_rules, adx::detail::atan2_rule>::value);
  CHECK(mp_contains<adx::all_ternary_rules, adx::detail::clamp_rule>::value);
}

TEST_CASE("rules: each rule with constant parameters is in the unary list at its defaults") {
  // so that the generic harnesses, which take all_unary_rules, test it
  using namespace boost::mp11;
  int rules = 0;
  mp_for_each<adx::activation_parameterised_rules>([&](auto rule) {
    using Rule = decltype(rule);
    INFO(Rule::name);
    CHECK(mp_contains<adx::all_unary_rules, adx::detail::at_defaults<Rule>>::value);
    ++rules;
  });
  CHECK(rules == 4);
}
