// expect: conv2d needs floating-point elements
#include <adx/adx.hpp>
int main() {
  adx::tensor<int> x(adx::shape{1, 1, 2, 2}, 3);
  adx::tensor<double> w(adx::shape{1, 1, 2, 2}, 0.25);
  auto y = adx::conv2d(x, w);  // torch refuses an integer input; adx would truncate the weights
  (void)y;
}
