// Every rule of adx::all_unary_rules, in every mode and nesting combination, against each other
// and against finite differences up to the 4th derivative. Adding a rule to the list is all it
// takes to have it tested here.
#include <doctest/doctest.h>

#include "rules/generic_support.hpp"

using namespace adx_test::rules;
using adx_test::close;

TEST_CASE("every unary rule agrees across modes and with finite differences to 4th order") {
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_unary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    unary_fn<Rule> const f;
    for (double x0 : {-0.7, 0.3, 0.8, 1.4, 2.3}) {
      auto const modes = adx_test::unary_all_modes(f, x0);
      auto const& ref = modes[1];        // dual^4 gives every order
      if (!all_finite(ref.d)) continue;  // outside the function's domain
      INFO(std::string(Rule::name) << " at x = " << x0);
      for (auto const& m : modes) {
        INFO("mode " << std::string(m.mode));
        for (int k = 0; k < 5; ++k)
          if (!std::isnan(m.d[k])) CHECK(close(m.d[k], ref.d[k], 1e-11, 1e-12));
      }
      // each order against a finite difference of the order below (from nested duals)
      auto g = [&](int order) { return [&f, order](double x) { return adx::derivative<4>(f, x)[order]; }; };
      for (int k = 1; k <= 4; ++k) {
        INFO("order " << k);
        CHECK(close(ref.d[k], fd(g(k - 1), x0), 1e-6, 1e-7));
      }
      ++checked;
    }
  });
  CHECK(checked >= 120);
}

TEST_CASE("every unary rule: each nesting level gives the same first derivative, edges included") {
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_unary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    unary_fn<Rule> const f;
    auto const g = [&f](auto const& x, auto const&) { return f(x); };
    for (double x0 : {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, -3.0, 1e-310, 1e300, -1e300, inf, -inf, nan}) {
      INFO(std::string(Rule::name) << " at x = " << x0);
      checked += check_levels_agree(g, x0, 0.0, "d/dx");
    }
  });
  CHECK(checked > 1000);
}
