// A Gaussian process's hyperparameters fitted by Newton's method on its negative log marginal
// likelihood, with the gradient and the Hessian through adx::linalg (cholesky, cholesky_solve:
// one tape node each), and a multivariate normal log density's gradient against its closed form.
//
//   K = sf2 exp(-(x_i - x_j)^2 / (2 ell^2)) + sn2 I,   L L^T = K
//   nlml = y^T K^-1 y / 2 + sum(log diag(L)) + n log(2 pi) / 2
// over theta = (log ell, log sf2, log sn2).
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <numbers>

using namespace adx;

int main() {
  constexpr std::size_t n = 20;
  tensor<double> const x = tensor<double>::generate(shape{n}, [](std::size_t i) { return 0.5 * double(i); });
  tensor<double> const y = tensor<double>::generate(shape{n}, [](std::size_t i) {
    double const h = std::sin(12.9898 * double(i + 1)) * 43758.5453;
    return std::sin(0.5 * double(i)) + 0.4 * (h - std::floor(h) - 0.5);  // a smooth signal and noise
  });
  tensor<double> const d2 = tensor<double>::generate(shape{n, n}, [&](std::size_t k) {
    double const d = x[k / n] - x[k % n];
    return d * d;
  });
  tensor<double> const I = linalg::diag(tensor<double>(shape{n}, 1.0));

  auto nlml = [&](auto const& theta) {  // theta: a tensor of 3 elements of any element type
    using S = typename std::remove_cvref_t<decltype(theta)>::value_type;
    tensor<S> const p = exp(theta);
    S const ell = p[0], sf2 = p[1], sn2 = p[2];
    tensor<S> const K = sf2 * exp(d2 * (-0.5 / (ell * ell))) + sn2 * I;
    auto const L = linalg::cholesky(K);
    auto const alpha = linalg::cholesky_solve(y.reshape(shape{n, 1}), L);
    return S(0.5 * sum(y.reshape(shape{n, 1}) * alpha) + sum(log(linalg::diagonal(L))) +
             0.5 * double(n) * std::log(2 * std::numbers::pi));
  };

  tensor<double> theta{std::log(1.0), std::log(1.0), std::log(0.1)};
  for (int step = 0; step < 20; ++step) {
    tensor<double> const g = functional::jacrev(nlml, theta);
    tensor<double> const H = functional::hessian(nlml, theta);
    tensor<double> dir = linalg::solve(H, g);
    // a damped step where the Hessian is not positive definite yet
    if (linalg::eigvalsh(H)[0] <= 0) dir = g;
    double t = 1.0;
    while (nlml(tensor<double>(theta - t * dir)) > nlml(theta) && t > 1e-6) t *= 0.5;
    theta = theta - t * dir;
  }
  tensor<double> const g = functional::jacrev(nlml, theta);
  tensor<double> const H = functional::hessian(nlml, theta);
  double const gmax = std::max({std::abs(g[0]), std::abs(g[1]), std::abs(g[2])});
  std::printf("fitted: ell = %.4f, sf2 = %.4f, sn2 = %.5f, nlml = %.6f, max |gradient| = %.1e\n", std::exp(theta[0]),
              std::exp(theta[1]), std::exp(theta[2]), nlml(theta), gmax);
  // the gradient against central differences, and the Hessian positive definite at the optimum
  double fd_err = 0;
  tensor<double> const theta2{0.1, -0.2, -1.5};
  tensor<double> const g2 = functional::jacrev(nlml, theta2);
  for (std::size_t k = 0; k < 3; ++k) {
    tensor<double> e(shape{3}, 0.0);
    e[k] = 1e-6;
    double const fd = (nlml(tensor<double>(theta2 + e)) - nlml(tensor<double>(theta2 - e))) / 2e-6;
    fd_err = std::max(fd_err, std::abs(fd - g2[k]));
  }
  double const hmin = linalg::eigvalsh(H)[0];
  std::printf("gradient vs central differences: %.1e; smallest Hessian eigenvalue %.4f\n", fd_err, hmin);

  // a multivariate normal log density through cholesky: d/dmu = Sigma^-1 (z - mu)
  tensor<double> const Sigma{{2.0, 0.3, 0.1}, {0.3, 1.0, -0.2}, {0.1, -0.2, 0.5}};
  tensor<double> const z{0.4, -1.2, 0.7};
  auto logpdf = [&](auto const& mu) {
    using S = typename std::remove_cvref_t<decltype(mu)>::value_type;
    auto const L = linalg::cholesky(Sigma);
    auto const r = linalg::solve_triangular(L, tensor<S>(z - mu).reshape(shape{3, 1}), false);
    return S(-0.5 * sum(r * r) - sum(log(linalg::diagonal(L))) - 1.5 * std::log(2 * std::numbers::pi));
  };
  tensor<double> const mu{0.1, 0.2, 0.3};
  tensor<double> const dmu = functional::jacrev(logpdf, mu);
  tensor<double> const want = linalg::solve(Sigma, tensor<double>(z - mu));
  double mvn_err = 0;
  for (std::size_t k = 0; k < 3; ++k) mvn_err = std::max(mvn_err, std::abs(dmu[k] - want[k]));
  std::printf("multivariate normal: d logpdf / d mu against Sigma^-1 (z - mu): %.1e\n", mvn_err);

  bool const ok = gmax < 1e-8 && fd_err < 1e-6 && hmin > 0 && mvn_err < 1e-13;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
