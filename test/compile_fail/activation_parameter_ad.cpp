// expect: are plain numbers, as torch's float arguments
// A differentiable parameter of leaky_relu: its parameters are constants (rules/rule_support.hpp),
// and the entry point says so rather than failing deep inside the expression node.
#include <adx/adx.hpp>
int main() {
  adx::tape_scope<adx::var<double>> scope;
  adx::var<double> x = -1.0, slope = 0.2;
  adx::var<double> y = leaky_relu(x, slope);
  (void)y;
}
