// expect: a rule of a rule list lacks
// A rule list whose rule has no partial: the check every family's list passes names what is missing.
#include <adx/adx.hpp>
struct no_partial_rule {
  static constexpr char const* name = "no_partial";
  template <class X>
  static X value(X const& x) {
    return x;
  }
};
static_assert(adx::detail::rules_conform<1>(boost::mp11::mp_list<no_partial_rule>{}));
int main() {}
