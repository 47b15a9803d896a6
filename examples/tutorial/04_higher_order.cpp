// examples/tutorial/04_higher_order.cpp: derivatives of derivatives, by nesting.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace adx;

  // A transform of a transform: grad(grad(f)) is f'', as jax.grad(jax.grad(f)).
  auto f = [](auto const& x) { return x * x * x + sin(x); };  // f'' = 6x - sin x
  double const x0 = 0.7;
  double f2 = grad(grad(f))(x0);
  std::printf("grad(grad(f))(0.7) = %.6f\n", f2);

  // Repeated gradients of recorded variables, as repeated tf.gradients or torch's
  // create_graph: a var<var<double>> records its own derivative, which can be swept again.
  tape_scope<var<var<double>>> scope;
  var<var<double>> x = x0;
  var<var<double>> y = x * x * x + sin(x);
  var<double> dy = *gradients(y, x)[0];       // f'(x), itself a variable
  double d2y = *gradients(dy, x.value())[0];  // f''(x)
  std::printf("gradients twice:     %.6f\n", d2y);

  // A gradient taken inside another one may use the outer function's variable: the inner
  // transform differentiates one level above it, so the outer one sees the whole dependence.
  // d/dx [ d/dy (x y^2) at y = 2 ] = d/dx (4 x) = 4.
  double nested = grad([](auto x) { return grad([&](auto y) { return x * y * y; })(2.0); })(1.5);
  std::printf("nested closure:      %.6f\n", nested);

  // Forward over forward: derivative<2> nests two duals.
  auto d = derivative<2>(f, x0);
  std::printf("derivative<2>:       %.6f\n", d[2]);

  double const want = 6 * x0 - std::sin(x0);
  auto near = [](double a, double b) { return std::abs(a - b) < 1e-12; };
  bool const ok = near(f2, want) && near(d2y, want) && near(nested, 4.0) && near(d[2], want);
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
