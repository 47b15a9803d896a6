// expect: a module.s trainable_params.. must return a parameter_list
#include <adx/adx.hpp>
#include <vector>
struct scale {
  adx::parameter<double> w{adx::tensor<double>{1.0, 2.0}, "w"};
  template <class X>
  auto operator()(X const& x) const {
    return adx::eval(x * w);
  }
  std::vector<adx::parameter<double>> trainable_params() { return {w}; }  // a temporary: no references to it
};
int main() {
  adx::nn::sequential net{scale{}, adx::nn::dense<double>(2, 1)};
  auto ps = net.trainable_params();  // would silently leave out scale's parameter
  (void)ps;
}
