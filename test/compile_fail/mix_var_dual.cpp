// expect: different AD scalar types at the same nesting level
#include <adx/adx.hpp>
int main() {
  adx::var<double> x = 1.0;
  adx::dual<double> d(1.0, 1.0);
  auto e = x * d;  // forward and reverse at the same level: must be nested instead
  (void)e;
}
