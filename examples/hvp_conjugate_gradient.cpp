// Solving H x = b by conjugate gradients, where H is the Hessian of a convex function that is
// never formed: each iteration takes one Hessian-vector product (adx::hvp, forward over
// reverse: one recording, one sweep), as truncated-Newton optimisers do.
//
//   f(x) = sum_i log(1 + exp(a_i . x)) + 0.5 |x|^2   (logistic loss with a ridge term)
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  constexpr std::size_t n = 6, m = 10;
  std::vector<std::vector<double>> a(m, std::vector<double>(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      a[i][j] = std::sin(0.5 + 1.3 * static_cast<double>(i * j) + 0.4 * static_cast<double>(i));

  auto f = [&](auto const& x) {
    using S = std::remove_cvref_t<decltype(x[0])>;
    S total = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      S dot = 0.0;
      for (std::size_t j = 0; j < n; ++j) dot += a[i][j] * x[j];
      total += log1p(exp(dot));
    }
    for (std::size_t j = 0; j < n; ++j) total += 0.5 * x[j] * x[j];
    return total;
  };

  std::vector<double> const at(n, 0.1), b{1, -1, 0.5, 2, 0, -0.5};
  auto hv = [&](std::vector<double> const& v) { return adx::hvp(f, at, v); };
  auto dot = [](std::vector<double> const& u, std::vector<double> const& v) {
    double s = 0;
    for (std::size_t j = 0; j < u.size(); ++j) s += u[j] * v[j];
    return s;
  };

  std::vector<double> x(n, 0.0), r = b, p = b;
  double rr = dot(r, r);
  int iterations = 0;
  for (; iterations < 50 && std::sqrt(rr) > 1e-12; ++iterations) {
    std::vector<double> const hp = hv(p);
    double const alpha = rr / dot(p, hp);
    for (std::size_t j = 0; j < n; ++j) x[j] += alpha * p[j], r[j] -= alpha * hp[j];
    double const rr_next = dot(r, r);
    for (std::size_t j = 0; j < n; ++j) p[j] = r[j] + rr_next / rr * p[j];
    rr = rr_next;
  }
  // the residual against the Hessian formed in full
  std::vector<double> const h = adx::hessian(f, at);
  double residual = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double hx = 0;
    for (std::size_t j = 0; j < n; ++j) hx += h[i * n + j] * x[j];
    residual = std::max(residual, std::abs(hx - b[i]));
  }
  std::printf("conjugate gradients: %d iterations (one Hessian-vector product each)\n", iterations);
  std::printf("x = [");
  for (std::size_t j = 0; j < n; ++j) std::printf("%s% .6f", j ? ", " : "", x[j]);
  std::printf("]\nmax |H x - b| with the full Hessian: %.2e\n", residual);
  bool const ok = iterations <= static_cast<int>(n) + 2 && residual < 1e-10;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
