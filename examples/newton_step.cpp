// The minimiser of a function, found by Newton steps (each one linalg::solve on the Hessian),
// differentiated with respect to the function's parameters through the steps themselves, and
// checked against the implicit function theorem: at x*(p) with grad f(x*, p) = 0,
//   dx*/dp = -H^-1 d(grad f)/dp.
//
//   f(x; p) = x^T A x / 2 + sum(exp(c x)) / c^2 - p^T x, so grad f = A x + exp(c x) / c - p and
//   H = A + diag(exp(c x)), d(grad f)/dp = -I: dx*/dp = H^-1, and d(w^T x*)/dp = H^-1 w.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>

using namespace adx;

int main() {
  constexpr std::size_t n = 4;
  constexpr double c = 0.7;
  tensor<double> const A{{3.0, 0.5, 0.0, 0.2}, {0.5, 2.0, 0.3, 0.0}, {0.0, 0.3, 1.5, 0.4}, {0.2, 0.0, 0.4, 2.5}};
  tensor<double> const w{1.0, -0.5, 0.25, 2.0};
  tensor<double> const I = linalg::diag(tensor<double>(shape{n}, 1.0));

  // x after `steps` Newton steps from 0, for parameters p of any element type
  auto minimiser = [&](auto const& p, int steps) {
    using S = typename std::remove_cvref_t<decltype(p)>::value_type;
    tensor<S> x(shape{n}, S(0.0));
    for (int k = 0; k < steps; ++k) {
      tensor<S> const e = exp(c * x);
      tensor<S> const g = matmul(A, x) + e / c - p;
      tensor<S> const H = A + e.reshape(shape{n, 1}) * I;
      x = x - linalg::solve(H, g);
    }
    return x;
  };

  tensor<double> const p0{1.0, 0.5, -0.3, 2.0};
  // reverse mode through 8 steps: d(w^T x_8)/dp
  tape_scope<var<double>> scope;
  tensor<var<double>> p(p0);
  var<double> const objective = sum(minimiser(p, 8) * w);
  tensor<double> const through_steps = *gradients(objective, std::vector{p})[0];

  // the implicit function theorem at the converged x*
  tensor<double> const xs = minimiser(p0, 8);
  tensor<double> const H = A + tensor<double>(exp(c * xs)).reshape(shape{n, 1}) * I;
  tensor<double> const implicit = linalg::solve(H, w);
  tensor<double> const residual = matmul(A, xs) + exp(c * xs) / c - p0;

  double err = 0, res = 0;
  for (std::size_t i = 0; i < n; ++i)
    err = std::max(err, std::abs(through_steps[i] - implicit[i])), res = std::max(res, std::abs(residual[i]));
  std::printf("x* = [%.6f, %.6f, %.6f, %.6f], max |grad f(x*)| = %.1e\n", xs[0], xs[1], xs[2], xs[3], res);
  std::printf("d(w^T x*)/dp through the Newton steps: [%.8f, %.8f, %.8f, %.8f]\n", through_steps[0], through_steps[1],
              through_steps[2], through_steps[3]);
  std::printf("against H^-1 w (implicit function theorem): max difference %.1e\n", err);
  bool const ok = res < 1e-12 && err < 1e-10;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
