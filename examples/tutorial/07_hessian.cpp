// examples/tutorial/07_hessian.cpp: Hessians, Hessian-vector products and Newton's method.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using namespace adx;

  // f(v) = log(e^v0 + e^v1 + e^v2) + |v|^2 / 2 - v0, a smooth convex function.
  auto f = [](auto const& v) {
    return log(exp(v[0]) + exp(v[1]) + exp(v[2])) + (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) / 2 - v[0];
  };
  std::vector<double> v{0.5, -0.2, 0.1};

  // hessian: forward over reverse, one recording and one sweep per input; a row-major n x n
  // std::vector. hvp: H u without forming H, one sweep.
  std::vector<double> H = hessian(f, v);
  std::vector<double> Hu = hvp(f, v, std::vector{1.0, 0.0, 0.0});
  std::printf("H = [%.4f %.4f %.4f; %.4f %.4f %.4f; %.4f %.4f %.4f]\n", H[0], H[1], H[2], H[3], H[4], H[5], H[6], H[7],
              H[8]);

  // The closed form: diag(p) - p p^T + I, with p the softmax of v.
  double const z = std::exp(v[0]) + std::exp(v[1]) + std::exp(v[2]);
  double const p[] = {std::exp(v[0]) / z, std::exp(v[1]) / z, std::exp(v[2]) / z};
  bool ok = true;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double const want = (i == j ? p[i] + 1 : 0) - p[i] * p[j];
      ok = ok && std::abs(H[3 * i + j] - want) < 1e-12;
      if (j == 0) ok = ok && std::abs(Hu[i] - want) < 1e-12;  // H times (1, 0, 0): column 0
    }

  // Newton's method: v <- v - H^-1 g, solved here by Gaussian elimination on [H | g].
  for (int step = 0; step < 5; ++step) {
    std::vector<double> g = gradient(f, v);
    H = hessian(f, v);
    for (int c = 0; c < 3; ++c)
      for (int r = c + 1; r < 3; ++r) {
        double const m = H[3 * r + c] / H[3 * c + c];
        for (int k = c; k < 3; ++k) H[3 * r + k] -= m * H[3 * c + k];
        g[r] -= m * g[c];
      }
    for (int r = 2; r >= 0; --r) {  // back substitution: g becomes the Newton step
      for (int k = r + 1; k < 3; ++k) g[r] -= H[3 * r + k] * g[k];
      g[r] /= H[3 * r + r];
    }
    for (int i = 0; i < 3; ++i) v[i] -= g[i];
    std::printf("step %d: v = (%.12f, %.12f, %.12f)\n", step, v[0], v[1], v[2]);
  }
  std::vector<double> const g = gradient(f, v);
  ok = ok && std::abs(g[0]) < 1e-12 && std::abs(g[1]) < 1e-12 && std::abs(g[2]) < 1e-12;
  std::printf("minimum at (%.6f, %.6f, %.6f): %s\n", v[0], v[1], v[2], ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
