// The tensor benchmark problems (mlp, matmul_grad, elementwise) with their data and
// the hand-written reference: loss and every gradient computed by hand, products by cblas_dgemm,
// everything else plain loops over preallocated buffers (the practical limit).
//
// Every problem flattens its differentiable inputs into one vector x (in a fixed order, e.g.
// W1, b1, W2, b2 for the MLP), so that every implementation returns {f, df/dx...} in the same
// layout and the checks compare them element by element. The tensor forms of the scalar
// problems (lse, normal_lpdf, matvec_quad, advection) reuse problems.hpp as they are.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "problems.hpp"

namespace adx_bench {

// ---- mlp: softmax cross-entropy of a one-hidden-layer tanh network ---------------------------
//
//   h = tanh(X W1 + b1), z = h W2 + b2, loss = mean_b (logsumexp(z_b) - z_b[label_b]),
//   gradient in W1 [D,H], b1 [H], W2 [H,C], b2 [C] (X [B,D] and the labels are data).

struct mlp_problem {
  std::string name;
  std::size_t B, D, H, C;
  std::vector<double> X;       // [B, D]
  std::vector<int> labels;     // [B], in 0..C-1
  std::vector<double> onehot;  // [B, C], the labels one-hot (for the tensor formulation)
  std::vector<double> x0;      // W1, b1, W2, b2 flattened

  mlp_problem(std::string nm, std::size_t b, std::size_t d, std::size_t h, std::size_t c)
      : name(std::move(nm)), B(b), D(d), H(h), C(c) {
    X = uniform(B * D, -1, 1, 101);
    labels.resize(B);
    onehot.assign(B * C, 0.0);
    for (std::size_t i = 0; i < B; ++i) {
      labels[i] = static_cast<int>((7 * i + 3) % C);
      onehot[i * C + static_cast<std::size_t>(labels[i])] = 1.0;
    }
    double const s1 = 1 / std::sqrt(static_cast<double>(D)), s2 = 1 / std::sqrt(static_cast<double>(H));
    auto const w1 = uniform(D * H, -s1, s1, 102), bb1 = uniform(H, -0.1, 0.1, 103);
    auto const w2 = uniform(H * C, -s2, s2, 104), bb2 = uniform(C, -0.1, 0.1, 105);
    x0.insert(x0.end(), w1.begin(), w1.end());
    x0.insert(x0.end(), bb1.begin(), bb1.end());
    x0.insert(x0.end(), w2.begin(), w2.end());
    x0.insert(x0.end(), bb2.begin(), bb2.end());
  }

  std::size_t n() const { return D * H + H + H * C + C; }
  // offsets of the parameters in x
  std::size_t off_b1() const { return D * H; }
  std::size_t off_W2() const { return D * H + H; }
  std::size_t off_b2() const { return D * H + H + H * C; }

  /// Buffers of the hand-written gradient (allocated once, outside the timing).
  struct scratch {
    std::vector<double> h, z, dz, dh;
    explicit scratch(mlp_problem const& p) : h(p.B * p.H), z(p.B * p.C), dz(p.B * p.C), dh(p.B * p.H) {}
  };

  /// Forward: fills s.h and s.z, returns the loss; with `grad`, also dz = dloss/dz in s.dz.
  double forward(double const* x, scratch& s, bool grad) const {
    double const *W1 = x, *b1 = x + off_b1(), *W2 = x + off_W2(), *b2 = x + off_b2();
    int const b = static_cast<int>(B), d = static_cast<int>(D), h = static_cast<int>(H), c = static_cast<int>(C);
    // h = tanh(X W1 + b1): rows preset to b1, then beta = 1
    for (std::size_t i = 0; i < B; ++i) std::copy(b1, b1 + H, s.h.data() + i * H);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, h, d, 1.0, X.data(), d, W1, h, 1.0, s.h.data(), h);
    for (double& v : s.h) v = std::tanh(v);
    // z = h W2 + b2
    for (std::size_t i = 0; i < B; ++i) std::copy(b2, b2 + C, s.z.data() + i * C);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, c, h, 1.0, s.h.data(), h, W2, c, 1.0, s.z.data(), c);
    // loss = mean(logsumexp(z_i) - z_i[label_i]); dz = (softmax(z) - onehot) / B
    double loss = 0;
    double const invB = 1 / static_cast<double>(B);
    for (std::size_t i = 0; i < B; ++i) {
      double const* zi = s.z.data() + i * C;
      double const m = *std::max_element(zi, zi + C);
      double se = 0;
      for (std::size_t j = 0; j < C; ++j) se += std::exp(zi[j] - m);
      double const lse = m + std::log(se);
      std::size_t const y = static_cast<std::size_t>(labels[i]);
      loss += lse - zi[y];
      if (grad) {
        double* dzi = s.dz.data() + i * C;
        for (std::size_t j = 0; j < C; ++j) dzi[j] = std::exp(zi[j] - lse) * invB;
        dzi[y] -= invB;
      }
    }
    return loss * invB;
  }

  double value(double const* x) const {
    scratch s(*this);
    return forward(x, s, false);
  }

  /// Hand-written backprop: returns the loss, writes the gradient in x's layout.
  double gradient(double const* x, double* g, scratch& s) const {
    double const loss = forward(x, s, true);
    double const* W2 = x + off_W2();
    double *gW1 = g, *gb1 = g + off_b1(), *gW2 = g + off_W2(), *gb2 = g + off_b2();
    int const b = static_cast<int>(B), d = static_cast<int>(D), h = static_cast<int>(H), c = static_cast<int>(C);
    // gW2 = h^T dz, gb2 = column sums of dz
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, c, b, 1.0, s.h.data(), h, s.dz.data(), c, 0.0, gW2, c);
    std::fill(gb2, gb2 + C, 0.0);
    for (std::size_t i = 0; i < B; ++i)
      for (std::size_t j = 0; j < C; ++j) gb2[j] += s.dz[i * C + j];
    // dh = (dz W2^T) * (1 - h^2)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, h, c, 1.0, s.dz.data(), c, W2, c, 0.0, s.dh.data(), h);
    for (std::size_t k = 0; k < B * H; ++k) s.dh[k] *= 1 - s.h[k] * s.h[k];
    // gW1 = X^T dh, gb1 = column sums of dh
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, h, b, 1.0, X.data(), d, s.dh.data(), h, 0.0, gW1, h);
    std::fill(gb1, gb1 + H, 0.0);
    for (std::size_t i = 0; i < B; ++i)
      for (std::size_t j = 0; j < H; ++j) gb1[j] += s.dh[i * H + j];
    return loss;
  }
};

// ---- matmul_grad: loss = sum(A B * W), gradient in A and B (all n x n) ----------------------

struct matmul_problem {
  std::string name;
  std::size_t N;
  std::vector<double> W;   // [N, N], data
  std::vector<double> x0;  // A, B flattened

  matmul_problem(std::string nm, std::size_t n) : name(std::move(nm)), N(n) {
    W = uniform(N * N, -1, 1, 201);
    x0 = uniform(2 * N * N, -1, 1, 202);
  }
  std::size_t n() const { return 2 * N * N; }

  struct scratch {
    std::vector<double> c;
    explicit scratch(matmul_problem const& p) : c(p.N * p.N) {}
  };

  double value(double const* x) const {
    scratch s(*this);
    return forward(x, s);
  }
  double forward(double const* x, scratch& s) const {
    int const n = static_cast<int>(N);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x, n, x + N * N, n, 0.0, s.c.data(), n);
    double loss = 0;
    for (std::size_t k = 0; k < N * N; ++k) loss += s.c[k] * W[k];
    return loss;
  }
  /// dA = W B^T, dB = A^T W (and C = A B for the loss): three GEMMs.
  double gradient(double const* x, double* g, scratch& s) const {
    double const loss = forward(x, s);
    int const n = static_cast<int>(N);
    double const *A = x, *Bm = x + N * N;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, W.data(), n, Bm, n, 0.0, g, n);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, A, n, W.data(), n, 0.0, g + N * N, n);
    return loss;
  }
};

// ---- elementwise: f = sum(a * b + sin(c) / d), gradient in a, b, c, d --------------------

struct elementwise_problem {
  std::string name;
  std::size_t N;
  std::vector<double> x0;  // a, b, c, d flattened (d in [1, 2])

  elementwise_problem(std::string nm, std::size_t n) : name(std::move(nm)), N(n) {
    auto const a = uniform(N, -1, 1, 301), b = uniform(N, -1, 1, 302), c = uniform(N, -3, 3, 303),
               d = uniform(N, 1, 2, 304);
    for (auto const* v : {&a, &b, &c, &d}) x0.insert(x0.end(), v->begin(), v->end());
  }
  std::size_t n() const { return 4 * N; }

  double value(double const* x) const {
    double const *a = x, *b = x + N, *c = x + 2 * N, *d = x + 3 * N;
    double s = 0;
    for (std::size_t i = 0; i < N; ++i) s += a[i] * b[i] + std::sin(c[i]) / d[i];
    return s;
  }
  /// One loop: the value and the four partials of every element.
  double gradient(double const* x, double* g) const {
    double const *a = x, *b = x + N, *c = x + 2 * N, *d = x + 3 * N;
    double *ga = g, *gb = g + N, *gc = g + 2 * N, *gd = g + 3 * N;
    double s = 0;
    for (std::size_t i = 0; i < N; ++i) {
      double const sn = std::sin(c[i]), cs = std::cos(c[i]), r = 1 / d[i];
      s += a[i] * b[i] + sn * r;
      ga[i] = b[i];
      gb[i] = a[i];
      gc[i] = cs * r;
      gd[i] = -sn * r * r;
    }
    return s;
  }
  /// The forward-only elementwise problem: y = a * b + sin(c) / d into y (a plain loop).
  void forward(double const* x, double* y) const {
    double const *a = x, *b = x + N, *c = x + 2 * N, *d = x + 3 * N;
    for (std::size_t i = 0; i < N; ++i) y[i] = a[i] * b[i] + std::sin(c[i]) / d[i];
  }
};

// ---- the instances ----------------------------------------------------------------------

inline std::vector<mlp_problem> const& mlp_problems() {
  static std::vector<mlp_problem> const v{
      {"mlp_small", 16, 64, 32, 10}, {"mlp", 64, 784, 256, 10}, {"mlp_large", 256, 1024, 1024, 10}};
  return v;
}
inline std::vector<matmul_problem> const& matmul_problems() {
  static std::vector<matmul_problem> const v{
      {"matmul_grad_32", 32}, {"matmul_grad_256", 256}, {"matmul_grad_1024", 1024}};
  return v;
}
inline elementwise_problem const& elementwise_instance() {
  static elementwise_problem const p{"elementwise", 1000000};
  return p;
}

/// Benchmark options by problem: the heavy sizes get a fixed, small iteration count so that
/// the whole suite stays within a few minutes (0 = let Google Benchmark choose, min_time 0.2 s).
inline long iterations_for(std::string const& problem) {
  if (problem == "matmul_grad_1024") return 3;
  if (problem == "mlp_large") return 10;
  return 0;
}

}  // namespace adx_bench
