// expect: two different AD types at one nesting level
// A grad over a var<double> argument whose function also brings in a dual<double>: the two
// perturbations are at one level and cannot be told apart, so the call does not compile.
#include <adx/adx.hpp>
int main() {
  adx::dual<double> const d(1.0, 1.0);
  adx::var<double> const x = 2.0;
  auto g = adx::grad([&](auto const& y) { return std::make_tuple(y * y, d); })(x);
  (void)g;
}
