// Newton's method on the Rosenbrock function, with adx's gradient and Hessian.
//
//   f(x, y) = (1 - x)^2 + 100 (y - x^2)^2, minimum 0 at (1, 1).
//
// Each step solves H d = -g (2 x 2, by Cramer's rule) and moves by d. From (-1.2, 1), the
// classic start, Newton's method reaches the minimum in a handful of steps.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  // Written once over a generic scalar: adx calls it with var<double> (gradient) and with
  // var<dual<double>> (Hessian, forward over reverse).
  auto rosenbrock = [](auto const& v) {
    auto const& x = v[0];
    auto const& y = v[1];
    return adx::eval((1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x));
  };

  std::vector<double> p{-1.2, 1.0};
  for (int step = 0; step < 20; ++step) {
    std::vector<double> const g = adx::gradient(rosenbrock, p);
    std::vector<double> const h = adx::hessian(rosenbrock, p);  // row-major, 2 x 2
    std::printf("step %2d: x = (% .12f, % .12f), |g| = %.3e\n", step, p[0], p[1], std::hypot(g[0], g[1]));
    if (std::hypot(g[0], g[1]) < 1e-10) break;
    double const det = h[0] * h[3] - h[1] * h[2];
    p[0] -= (h[3] * g[0] - h[1] * g[1]) / det;
    p[1] -= (h[0] * g[1] - h[2] * g[0]) / det;
  }
  bool const ok = std::abs(p[0] - 1) < 1e-10 && std::abs(p[1] - 1) < 1e-10;
  std::printf("minimum at (%.6f, %.6f): %s\n", p[0], p[1], ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
