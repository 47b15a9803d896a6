// expect: operands have different element types at one nesting level
#include <adx/adx.hpp>
int main() {
  adx::tensor<adx::var<double>> a(adx::tensor<double>{{2.0, 0.0}, {0.0, 2.0}});
  adx::tensor<adx::dual<double>> b(adx::tensor<double>{1.0, 1.0});
  auto x = adx::linalg::solve(a, b);  // forward and reverse at one level: nest them instead
  (void)x;
}
