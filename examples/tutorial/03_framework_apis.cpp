// examples/tutorial/03_framework_apis.cpp: the gradient APIs of TensorFlow, PyTorch and
// MindSpore / JAX, on one function.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using namespace adx;

  // f(x, y) = x^2 y + sin(y), at x = 2, y = 3: df/dx = 2xy = 12, df/dy = x^2 + cos(y).
  double const want_x = 12, want_y = 4 + std::cos(3.0);

  // TensorFlow and PyTorch take the gradient of variables already recorded.
  tape_scope<var<double>> scope;
  var<double> x = 2.0, y = 3.0;
  var<double> z = x * x * y + sin(y);
  // Each gradient is a std::optional. gradients leaves it empty where the output does not
  // depend on the input (TensorFlow's None); autograd::grad throws there, as torch does, unless
  // allow_unused is set.
  auto tf = gradients(z, std::vector{x, y});          // tf.gradients(z, [x, y])
  auto torch = autograd::grad(z, std::vector{x, y});  // torch.autograd.grad(z, [x, y])
  std::printf("tf.gradients:        %.6f %.6f\n", *tf[0], *tf[1]);
  std::printf("torch.autograd.grad: %.6f %.6f\n", *torch[0], *torch[1]);

  // MindSpore and JAX transform a function: grad(f) is a function that returns the gradient.
  auto f = [](auto const& a, auto const& b) { return a * a * b + sin(b); };
  auto [gx, gy] = grad(f, positions<0, 1>)(2.0, 3.0);  // mindspore.grad(f, grad_position=(0, 1))
  double jx = grad(f)(2.0, 3.0);                       // jax.grad(f): the first argument
  std::printf("grad(f, (0, 1)):     %.6f %.6f\n", gx, gy);
  std::printf("grad(f):             %.6f\n", jx);

  auto near = [](double a, double b) { return std::abs(a - b) < 1e-12; };
  bool const ok = near(*tf[0], want_x) && near(*tf[1], want_y) && near(*torch[0], want_x) && near(*torch[1], want_y) &&
                  near(gx, want_x) && near(gy, want_y) && near(jx, want_x);
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
