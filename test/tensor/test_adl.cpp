// User code outside namespace adx, with no using-directive: argument-dependent lookup must find
// adx's operators and functions for tensors, tensor expressions and scalars alike.
#include <adx/adx.hpp>

#include "support/check.hpp"

namespace user_code {
double tensor_program() {
  adx::tensor<double> a{1.0, 2.0}, b{3.0, 4.0}, c{0.5, 0.25}, d{2.0, 2.0};
  adx::tensor<double> y = a * b + sin(c) / d - exp(a * 0.1);
  return sum(y * 2.0) + amax(matmul(a, b.reshape({2, 1})));
}
double gradient_program() {
  adx::tape_scope<adx::var<double>> scope;
  adx::tensor<adx::var<double>> q(adx::tensor<double>{1.0, 2.0});
  adx::var<double> l = sum(q * q + exp(q) - 1.0) * logsumexp(q);
  adx::backward(l);
  return q[0].adjoint();
}
}  // namespace user_code

TEST_CASE("tensor: expressions compile and run in user namespaces (argument-dependent lookup)") {
  double const y0 = 1 * 3 + std::sin(0.5) / 2 - std::exp(0.1), y1 = 2 * 4 + std::sin(0.25) / 2 - std::exp(0.2);
  CHECK(adx_test::close(user_code::tensor_program(), 2 * (y0 + y1) + 11.0));
  // l = S * L with S = sum(q^2 + e^q - 1), L = logsumexp(q): dl/dq0 = (2 q0 + e^q0) L + S softmax0
  double const S = 1 + std::exp(1.0) - 1 + 4 + std::exp(2.0) - 1, L = std::log(std::exp(1.0) + std::exp(2.0));
  double const p0 = std::exp(1.0) / (std::exp(1.0) + std::exp(2.0));
  CHECK(adx_test::close(user_code::gradient_program(), (2 + std::exp(1.0)) * L + S * p0));
}
