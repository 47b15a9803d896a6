// expect: grad_position selects a parameter
// A parameter is a leaf of the weights' tape, not an argument a call can lift to its own
// variables: the message points to weights and to w.values().
#include <adx/adx.hpp>
int main() {
  adx::parameter<double> w(adx::tensor<double>{1.5, 2.0}, "w");
  auto f = [](auto const& a, auto const& b) { return adx::sum(a * b); };
  auto g = adx::grad(f, adx::position<0>)(w, adx::tensor<double>{1.0, 2.0});
  (void)g;
}
