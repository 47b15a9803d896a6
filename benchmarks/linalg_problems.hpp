// The linear-algebra benchmark problems of linalg_bench (mvn, gp, solve_logdet at n = 8, 64,
// 256) with their data and the hand-written reference: the textbook adjoint formulas over
// LAPACKE and CBLAS, buffers allocated once (the practical limit).
//
//   mvn           log N(z; mu, Sigma) = -r^T Sigma^-1 r / 2 - log det(Sigma) / 2 - n log(2 pi) / 2,
//                 r = z - mu, of Sigma's symmetric part; gradient in Sigma and mu:
//                 gSigma = (a a^T - Sigma^-1) / 2, gmu = a = Sigma^-1 r
//   gp            a Gaussian process's negative log marginal likelihood, RBF kernel over n points
//                 in 2-D: K = sf2 exp(-D / (2 ell^2)) + sn2 I (D the squared distances),
//                 nlml = y^T alpha / 2 + log det(K) / 2 + n log(2 pi) / 2, alpha = K^-1 y;
//                 gradient in (ell, sf2, sn2) and y: with G = (K^-1 - alpha alpha^T) / 2,
//                 dell = sum(G * E * D) / ell^3, dsf2 = sum(G * E) / sf2 (E = K - sn2 I),
//                 dsn2 = trace(G), dy = alpha
//   solve_logdet  f(A, B) = sum(W * A^-1 B) + log det(A), B and W n x 4; gradient
//                 gB = A^-T W, gA = A^-T - gB X^T (X = A^-1 B)
//
// Every problem flattens its differentiable inputs into one vector x (mvn: Sigma, mu; gp: ell,
// sf2, sn2, y; solve_logdet: A, B; matrices row-major), so that every implementation returns
// {f, df/dx...} in one layout and the start-up checks compare them element by element.
//
// The hand code keeps the problems' row-major matrices and calls LAPACK in column-major order
// on them: a row-major matrix is its transpose in column-major order, so a symmetric matrix's
// lower triangle is LAPACK's upper one ('U'). It uses LAPACKE's _work functions (no NaN scan of
// the input and no transposed copy per call), Sigma^-1 and K^-1 from the Cholesky factor
// (dpotri) and A^-1 from the LU factors (dgetri).
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <new>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "problems.hpp"

namespace adx_bench {

/// A std::vector allocator of 64-byte aligned memory (a cache line, as adx's tensors): LAPACK's
/// kernels run measurably slower on matrices at other alignments.
template <class T>
struct aligned_allocator {
  using value_type = T;  ///< what it allocates
  aligned_allocator() = default;
  /// The allocator of another element type (stateless).
  template <class U>
  aligned_allocator(aligned_allocator<U> const&) noexcept {}
  /// Room for n T at a 64-byte boundary.
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64})); }
  /// Frees what allocate gave.
  void deallocate(T* p, std::size_t) noexcept { ::operator delete (p, std::align_val_t{64}); }
  /// Any two are interchangeable.
  template <class U>
  bool operator==(aligned_allocator<U> const&) const noexcept {
    return true;
  }
};
/// The hand gradients' buffers.
using buffer = std::vector<double, aligned_allocator<double>>;

/// n log(2 pi) / 2, the normal density's constant.
inline double half_log_2pi(std::size_t n) { return 0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi); }

/// The Cholesky factor, in place, of the symmetric n x n matrix whose lower triangle a holds
/// (row-major): afterwards a's lower triangle is L (A = L L^T). Throws if A is not positive
/// definite.
inline void hand_cholesky(std::size_t n, double* a) {
  lapack_int const ln = static_cast<lapack_int>(n);
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', ln, a, ln) != 0)
    throw std::runtime_error("linalg_bench: a matrix is not positive definite");
}

/// b := A^-1 b for one vector b, from hand_cholesky's factor.
inline void hand_cholesky_solve(std::size_t n, double const* l, double* b) {
  lapack_int const ln = static_cast<lapack_int>(n);
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', ln, 1, l, ln, b, ln);
}

/// A^-1's lower triangle in place of the factor's (row-major).
inline void hand_cholesky_inverse(std::size_t n, double* l) {
  lapack_int const ln = static_cast<lapack_int>(n);
  LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'U', ln, l, ln);
}

/// Calls f(i, j) for every j <= i < n, by tiles of 16 x 16, so that f may also touch (j, i) of a
/// row-major matrix cheaply (a column of a 256 x 256 matrix is a new cache line at every element).
template <class F>
void for_lower_tiles(std::size_t n, F&& f) {
  constexpr std::size_t tile = 16;
  for (std::size_t i0 = 0; i0 < n; i0 += tile)
    for (std::size_t j0 = 0; j0 <= i0; j0 += tile)
      for (std::size_t i = i0; i < std::min(n, i0 + tile); ++i)
        for (std::size_t j = j0; j <= std::min(i, j0 + tile - 1); ++j) f(i, j);
}

/// out = the transpose of the n x n a (row-major).
inline void transpose_into(std::size_t n, double const* a, double* out) {
  for_lower_tiles(n, [&](std::size_t i, std::size_t j) {
    out[j * n + i] = a[i * n + j];
    out[i * n + j] = a[j * n + i];
  });
}

/// sum(log(diag(L))) of an n x n factor.
inline double log_diagonal(std::size_t n, double const* l) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += std::log(l[i * (n + 1)]);
  return s;
}

// ---- mvn: the multivariate normal log density through Cholesky ------------------------------

/// mvn at one size n: its data, point and hand gradient.
struct mvn_problem {
  std::string name;        ///< "mvn_<n>"
  std::size_t N;           ///< n
  std::vector<double> z;   ///< [N], the point (data)
  std::vector<double> x0;  ///< Sigma [N, N] (symmetric positive definite), mu [N]

  /// The instance of size n (data from fixed seeds).
  explicit mvn_problem(std::size_t n) : name("mvn_" + std::to_string(n)), N(n) {
    // Sigma = F F^T / N + I / 2: symmetric, eigenvalues from 1/2 on
    auto const F = uniform(N * N, -1, 1, 401);
    z = uniform(N, -1, 1, 402);
    auto const mu = uniform(N, -0.5, 0.5, 403);
    x0.assign(N * N + N, 0.0);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double s = 0;
        for (std::size_t k = 0; k < N; ++k) s += F[i * N + k] * F[j * N + k];
        x0[i * N + j] = x0[j * N + i] = s / static_cast<double>(N) + (i == j ? 0.5 : 0.0);
      }
    std::copy(mu.begin(), mu.end(), x0.begin() + static_cast<long>(N * N));
  }
  /// The number of inputs (the gradient's length).
  std::size_t n() const { return N * N + N; }

  /// Buffers of the hand-written gradient (allocated once, outside the timing).
  struct scratch {
    buffer L, a;  ///< the factor (then Sigma^-1), Sigma^-1 r
    /// Buffers for p's size.
    explicit scratch(mvn_problem const& p) : L(p.N * p.N), a(p.N) {}
  };

  /// The density at x; leaves L and a = Sigma^-1 r in s.
  double forward(double const* x, scratch& s) const {
    double const *S = x, *mu = x + N * N;
    for_lower_tiles(N, [&](std::size_t i, std::size_t j) { s.L[i * N + j] = 0.5 * (S[i * N + j] + S[j * N + i]); });
    hand_cholesky(N, s.L.data());
    for (std::size_t i = 0; i < N; ++i) s.a[i] = z[i] - mu[i];
    hand_cholesky_solve(N, s.L.data(), s.a.data());
    double quad = 0;
    for (std::size_t i = 0; i < N; ++i) quad += (z[i] - mu[i]) * s.a[i];
    return -0.5 * quad - log_diagonal(N, s.L.data()) - half_log_2pi(N);
  }
  /// The density alone (for the finite-difference check).
  double value(double const* x) const {
    scratch s(*this);
    return forward(x, s);
  }
  /// The density and its gradient in x's layout.
  double gradient(double const* x, double* g, scratch& s) const {
    double const f = forward(x, s);
    hand_cholesky_inverse(N, s.L.data());
    double const* P = s.L.data();  // Sigma^-1, lower triangle
    double const* a = s.a.data();
    for_lower_tiles(
        N, [&](std::size_t i, std::size_t j) { g[i * N + j] = g[j * N + i] = 0.5 * (a[i] * a[j] - P[i * N + j]); });
    std::copy(a, a + N, g + N * N);
    return f;
  }
};

// ---- gp: a Gaussian process's negative log marginal likelihood ------------------------------

/// gp at one size n: its data, point and hand gradient.
struct gp_problem {
  std::string name;        ///< "gp_<n>"
  std::size_t N;           ///< n, the number of points
  std::vector<double> D;   ///< [N, N], the points' squared distances (data)
  std::vector<double> x0;  ///< ell, sf2, sn2, y [N]

  /// The instance of size n (data from fixed seeds).
  explicit gp_problem(std::size_t n) : name("gp_" + std::to_string(n)), N(n) {
    // N points in a square of side sqrt(N) (one per unit of area), a smooth signal and noise
    double const side = std::sqrt(static_cast<double>(N));
    auto const P = uniform(2 * N, 0, side, 501);
    auto const noise = uniform(N, -0.2, 0.2, 502);
    D.resize(N * N);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        double const d0 = P[2 * i] - P[2 * j], d1 = P[2 * i + 1] - P[2 * j + 1];
        D[i * N + j] = d0 * d0 + d1 * d1;
      }
    x0 = {0.8, 1.3, 0.2};
    for (std::size_t i = 0; i < N; ++i) x0.push_back(std::sin(P[2 * i]) + 0.5 * std::cos(P[2 * i + 1]) + noise[i]);
  }
  /// The number of inputs (the gradient's length).
  std::size_t n() const { return 3 + N; }

  /// Buffers of the hand-written gradient (allocated once, outside the timing).
  struct scratch {
    buffer E, L, alpha;  ///< the kernel without noise (lower), the factor, K^-1 y
    /// Buffers for p's size.
    explicit scratch(gp_problem const& p) : E(p.N * p.N), L(p.N * p.N), alpha(p.N) {}
  };

  /// nlml at x; leaves E, the factor and alpha in s.
  double forward(double const* x, scratch& s) const {
    double const sf2 = x[1], sn2 = x[2], c = -0.5 / (x[0] * x[0]);
    double const* y = x + 3;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double const e = sf2 * std::exp(c * D[i * N + j]);
        s.E[i * N + j] = e;
        s.L[i * N + j] = i == j ? e + sn2 : e;
      }
    hand_cholesky(N, s.L.data());
    std::copy(y, y + N, s.alpha.begin());
    hand_cholesky_solve(N, s.L.data(), s.alpha.data());
    double q = 0;
    for (std::size_t i = 0; i < N; ++i) q += y[i] * s.alpha[i];
    return 0.5 * q + log_diagonal(N, s.L.data()) + half_log_2pi(N);
  }
  /// nlml alone (for the finite-difference check).
  double value(double const* x) const {
    scratch s(*this);
    return forward(x, s);
  }
  /// nlml and its gradient in x's layout.
  double gradient(double const* x, double* g, scratch& s) const {
    double const f = forward(x, s);
    hand_cholesky_inverse(N, s.L.data());
    double const* Ki = s.L.data();  // K^-1, lower triangle
    double const* a = s.alpha.data();
    double dell = 0, dsf2 = 0, dsn2 = 0;
    for (std::size_t i = 0; i < N; ++i) {
      for (std::size_t j = 0; j < i; ++j) {  // G is symmetric: the strict lower triangle twice
        double const ge = (Ki[i * N + j] - a[i] * a[j]) * s.E[i * N + j];
        dsf2 += ge;
        dell += ge * D[i * N + j];
      }
      double const gd = 0.5 * (Ki[i * (N + 1)] - a[i] * a[i]);
      dsn2 += gd;
      dsf2 += gd * s.E[i * (N + 1)];  // D's diagonal is zero: nothing for dell
    }
    g[0] = dell / (x[0] * x[0] * x[0]);
    g[1] = dsf2 / x[1];
    g[2] = dsn2;
    std::copy(a, a + N, g + 3);
    return f;
  }
};

// ---- solve_logdet: sum(W * solve(A, B)) + logdet(A) -----------------------------------------

/// solve_logdet at one size n: its data, point and hand gradient.
struct solve_logdet_problem {
  static constexpr std::size_t K = 4;  ///< B's and W's columns
  std::string name;                    ///< "solve_logdet_<n>"
  std::size_t N;                       ///< n
  std::vector<double> W;               ///< [N, K] (data)
  std::vector<double> x0;              ///< A [N, N], B [N, K]

  /// The instance of size n (data from fixed seeds).
  explicit solve_logdet_problem(std::size_t n) : name("solve_logdet_" + std::to_string(n)), N(n) {
    // A = 2 I + M / sqrt(N), M uniform in [-1, 1]: its eigenvalues lie within 0.6 of 2
    auto const M = uniform(N * N, -1, 1, 601);
    auto const B = uniform(N * K, -1, 1, 602);
    W = uniform(N * K, -1, 1, 603);
    double const s = 1 / std::sqrt(static_cast<double>(N));
    x0.resize(N * N + N * K);
    for (std::size_t i = 0; i < N * N; ++i) x0[i] = M[i] * s + (i % (N + 1) == 0 ? 2.0 : 0.0);
    std::copy(B.begin(), B.end(), x0.begin() + static_cast<long>(N * N));
  }
  /// The number of inputs (the gradient's length).
  std::size_t n() const { return N * N + N * K; }

  /// Buffers of the hand-written gradient (allocated once, outside the timing).
  struct scratch {
    buffer lu, X, gB, work;       ///< A's LU (column-major), X and gB (column-major)
    std::vector<lapack_int> piv;  ///< the LU's pivots (1-based)
    /// Buffers for p's size, dgetri's workspace as LAPACK asks for it.
    explicit scratch(solve_logdet_problem const& p) : lu(p.N * p.N), X(p.N * K), gB(p.N * K), piv(p.N) {
      double query = 0;
      lapack_int const ln = static_cast<lapack_int>(p.N);
      LAPACKE_dgetri_work(LAPACK_COL_MAJOR, ln, lu.data(), ln, piv.data(), &query, -1);
      work.resize(std::max<std::size_t>(static_cast<std::size_t>(query), p.N));
    }
  };

  /// f at x; leaves A's LU (column-major: A itself, transposed in), its pivots and X in s.
  double forward(double const* x, scratch& s) const {
    double const *A = x, *B = x + N * N;
    lapack_int const ln = static_cast<lapack_int>(N);
    transpose_into(N, A, s.lu.data());
    if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, ln, ln, s.lu.data(), ln, s.piv.data()) != 0)
      throw std::runtime_error("linalg_bench: A is singular");
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t c = 0; c < K; ++c) s.X[c * N + i] = B[i * K + c];
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', ln, K, s.lu.data(), ln, s.piv.data(), s.X.data(), ln);
    double f = 0, logabs = 0;
    int sign = 1;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t c = 0; c < K; ++c) f += W[i * K + c] * s.X[c * N + i];
    for (std::size_t i = 0; i < N; ++i) {
      double const u = s.lu[i * (N + 1)];
      logabs += std::log(std::abs(u));
      if ((u < 0) != (s.piv[i] != static_cast<lapack_int>(i + 1))) sign = -sign;
    }
    return f + (sign > 0 ? logabs : std::numeric_limits<double>::quiet_NaN());
  }
  /// f alone (for the finite-difference check).
  double value(double const* x) const {
    scratch s(*this);
    return forward(x, s);
  }
  /// gB = A^-T W (one more solve on the LU), gA = A^-T - gB X^T (A^-1 from the LU, dgetri).
  double gradient(double const* x, double* g, scratch& s) const {
    double const f = forward(x, s);
    lapack_int const ln = static_cast<lapack_int>(N);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t c = 0; c < K; ++c) s.gB[c * N + i] = W[i * K + c];
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'T', ln, K, s.lu.data(), ln, s.piv.data(), s.gB.data(), ln);
    LAPACKE_dgetri_work(LAPACK_COL_MAJOR, ln, s.lu.data(), ln, s.piv.data(), s.work.data(),
                        static_cast<lapack_int>(s.work.size()));
    // s.lu holds A^-1 column-major, which is A^-T row-major; in column-major terms
    // gA^T = A^-1 - X gB^T, a rank-K update
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<int>(N), static_cast<int>(N), K, -1.0, s.X.data(),
                static_cast<int>(N), s.gB.data(), static_cast<int>(N), 1.0, s.lu.data(), static_cast<int>(N));
    std::copy(s.lu.begin(), s.lu.end(), g);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t c = 0; c < K; ++c) g[N * N + i * K + c] = s.gB[c * N + i];
    return f;
  }
};

// ---- the instances ----------------------------------------------------------------------

/// mvn at n = 8, 64, 256.
inline std::vector<mvn_problem> const& mvn_problems() {
  static std::vector<mvn_problem> const v{mvn_problem(8), mvn_problem(64), mvn_problem(256)};
  return v;
}
/// gp at n = 8, 64, 256.
inline std::vector<gp_problem> const& gp_problems() {
  static std::vector<gp_problem> const v{gp_problem(8), gp_problem(64), gp_problem(256)};
  return v;
}
/// solve_logdet at n = 8, 64, 256.
inline std::vector<solve_logdet_problem> const& solve_logdet_problems() {
  static std::vector<solve_logdet_problem> const v{solve_logdet_problem(8), solve_logdet_problem(64),
                                                   solve_logdet_problem(256)};
  return v;
}

}  // namespace adx_bench
