// expect: a parameter is a leaf that requires grad and cannot be assigned an expression in place
#include <adx/adx.hpp>
int main() {
  adx::parameter<double> w(adx::tensor<double>{1.0, 2.0}, "w");
  w -= 0.1 * w;
}
