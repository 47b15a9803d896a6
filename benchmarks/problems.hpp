// The six scalar benchmark problems of /work/shared/spec/BENCHMARKS.md.
//
// Each function is written ONCE, as a template over the scalar type T, with plain scalar loops
// as a user would write them; the same template is instantiated at double (the baseline),
// adx::dual / adx::var and every peer's scalar type. Unqualified calls after `using std::exp;`
// let argument-dependent lookup find each library's functions. Accumulators are written
// `T s(0.0)` (direct initialisation, because ceres::Jet's constructor from a number is explicit).
//
// Each problem also carries its data, its evaluation point x0, its forward direction v and a
// hand-coded gradient (checked against finite differences by check_scalar and at benchmark start).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

namespace adx_bench {

// ---- data -----------------------------------------------------------------------------------

/// The spec's 64-bit LCG: seeding sets state = s*a + c; each draw state = state*a + c,
/// u = (state >> 11) * 2^-53, value = lo + (hi - lo) u.
inline std::vector<double> uniform(std::size_t n, double lo, double hi, std::uint64_t seed) {
  constexpr std::uint64_t a = 6364136223846793005ULL, c = 1442695040888963407ULL;
  std::uint64_t state = seed * a + c;
  std::vector<double> out(n);
  for (auto& v : out) {
    state = state * a + c;
    double const u = static_cast<double>(state >> 11) * 0x1.0p-53;
    v = lo + (hi - lo) * u;
  }
  return out;
}

// ---- lse: f = log(sum_i exp(x_i)) -----------------------------------------------------------

struct lse {
  static constexpr char const* name = "lse";
  static constexpr std::size_t n = 1000;
  std::vector<double> x0 = uniform(n, -1, 1, 11);
  std::vector<double> v = uniform(n, -1, 1, 12);

  template <class T>
  T operator()(T const* x) const {
    using std::exp;
    using std::log;
    T s(0.0);
    for (std::size_t i = 0; i < n; ++i) s += exp(x[i]);
    return log(s);
  }

  void gradient(double const* x, double* g) const {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) {
      g[i] = std::exp(x[i]);
      s += g[i];
    }
    double const inv = 1 / s;
    for (std::size_t i = 0; i < n; ++i) g[i] *= inv;
  }
};

// ---- normal_lpdf: f(mu, sigma) = sum_i (-0.5 z_i^2 - log sigma), z_i = (y_i - mu) / sigma ---

struct normal_lpdf {
  static constexpr char const* name = "normal_lpdf";
  static constexpr std::size_t n = 2;
  static constexpr std::size_t m = 10000;
  std::vector<double> y = uniform(m, -2, 3, 21);
  std::vector<double> x0 = {0.3, 1.7};
  std::vector<double> v = {0.6, -0.8};

  template <class T>
  T operator()(T const* x) const {
    using std::log;
    T const& mu = x[0];
    T const& sigma = x[1];
    T ls = log(sigma);
    T s(0.0);
    for (std::size_t i = 0; i < m; ++i) {
      T z = (y[i] - mu) / sigma;
      s += -0.5 * z * z - ls;
    }
    return s;
  }

  void gradient(double const* x, double* g) const {
    double const mu = x[0], sigma = x[1], inv = 1 / sigma;
    double sz = 0, szz = 0;
    for (std::size_t i = 0; i < m; ++i) {
      double const z = (y[i] - mu) * inv;
      sz += z;
      szz += z * z;
    }
    g[0] = sz * inv;                              // d/dmu    = sum z_i / sigma
    g[1] = (szz - static_cast<double>(m)) * inv;  // d/dsigma = sum (z_i^2 - 1) / sigma
  }
};

// ---- prod_sum: f = sum_{i<n-1} x_i x_{i+1} sin(x_i) ------------------------------------------

struct prod_sum {
  static constexpr char const* name = "prod_sum";
  static constexpr std::size_t n = 1000;
  std::vector<double> x0 = uniform(n, -2, 2, 31);
  std::vector<double> v = uniform(n, -1, 1, 32);

  template <class T>
  T operator()(T const* x) const {
    using std::sin;
    T s(0.0);
    for (std::size_t i = 0; i + 1 < n; ++i) s += x[i] * x[i + 1] * sin(x[i]);
    return s;
  }

  void gradient(double const* x, double* g) const {
    for (std::size_t i = 0; i < n; ++i) g[i] = 0;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      double const s = std::sin(x[i]), c = std::cos(x[i]);
      g[i] += x[i + 1] * (s + x[i] * c);
      g[i + 1] += x[i] * s;
    }
  }
};

// ---- matvec_quad: f = 0.5 sum_i x_i (sum_j A_ij x_j) -----------------------------------------

struct matvec_quad {
  static constexpr char const* name = "matvec_quad";
  static constexpr std::size_t n = 100;
  std::vector<double> A = uniform(n * n, -1, 1, 41);  // row-major
  std::vector<double> x0 = uniform(n, -1, 1, 42);
  std::vector<double> v = uniform(n, -1, 1, 43);

  template <class T>
  T operator()(T const* x) const {
    T s(0.0);
    for (std::size_t i = 0; i < n; ++i) {
      T r(0.0);
      for (std::size_t j = 0; j < n; ++j) r += A[i * n + j] * x[j];
      s += x[i] * r;
    }
    return 0.5 * s;
  }

  void gradient(double const* x, double* g) const {  // g = 0.5 (A + A^T) x
    for (std::size_t i = 0; i < n; ++i) g[i] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double r = 0;
      for (std::size_t j = 0; j < n; ++j) {
        r += A[i * n + j] * x[j];
        g[j] += 0.5 * A[i * n + j] * x[i];
      }
      g[i] += 0.5 * r;
    }
  }
};

// ---- advection: 200 upwind-ish steps of a periodic 1-D advection, f = sum q_i^2 ------------

struct advection {
  static constexpr char const* name = "advection";
  static constexpr std::size_t n = 100;
  static constexpr int steps = 200;
  static constexpr double c = 0.125;
  std::vector<double> x0 = initial();
  std::vector<double> v = uniform(n, -1, 1, 52);

  static std::vector<double> initial() {
    std::vector<double> q(n);
    for (std::size_t i = 0; i < n; ++i)
      q[i] =
          0.5 + 0.5 * std::sin(2 * std::numbers::pi * static_cast<double>(i) / 98) + ((i > 30 && i < 50) ? 0.3 : 0.0);
    return q;
  }

  template <class T>
  T operator()(T const* x) const {
    std::array<T, n> q;
    std::array<T, n - 1> flux;
    for (std::size_t i = 0; i < n; ++i) q[i] = x[i];
    for (int step = 0; step < steps; ++step) {
      for (std::size_t i = 0; i + 1 < n; ++i) flux[i] = 0.5 * c * (q[i] + q[i + 1] + c * (q[i] - q[i + 1]));
      for (std::size_t i = 1; i + 1 < n; ++i) q[i] += flux[i - 1] - flux[i];
      q[0] = q[n - 2];
      q[n - 1] = q[1];
    }
    T s(0.0);
    for (std::size_t i = 0; i < n; ++i) s += q[i] * q[i];
    return s;
  }

  // The step is linear in q, so its adjoint needs no stored states: one forward pass for the
  // final q, then the transposed steps applied to qb = 2 q.
  void gradient(double const* x, double* g) const {
    std::array<double, n> q, qb;
    std::array<double, n - 1> flux, fb;
    for (std::size_t i = 0; i < n; ++i) q[i] = x[i];
    for (int step = 0; step < steps; ++step) {
      for (std::size_t i = 0; i + 1 < n; ++i) flux[i] = 0.5 * c * (q[i] + q[i + 1] + c * (q[i] - q[i + 1]));
      for (std::size_t i = 1; i + 1 < n; ++i) q[i] += flux[i - 1] - flux[i];
      q[0] = q[n - 2];
      q[n - 1] = q[1];
    }
    for (std::size_t i = 0; i < n; ++i) qb[i] = 2 * q[i];
    double const a0 = 0.5 * c * (1 + c), a1 = 0.5 * c * (1 - c);
    for (int step = 0; step < steps; ++step) {
      // q_99 = q_1; q_0 = q_98 (reverse order)
      qb[1] += qb[n - 1];
      qb[n - 1] = 0;
      qb[n - 2] += qb[0];
      qb[0] = 0;
      // q_i += flux_{i-1} - flux_i
      for (std::size_t i = 0; i + 1 < n; ++i) fb[i] = 0;
      for (std::size_t i = 1; i + 1 < n; ++i) {
        fb[i - 1] += qb[i];
        fb[i] -= qb[i];
      }
      // flux_i = a0 q_i + a1 q_{i+1}
      for (std::size_t i = 0; i + 1 < n; ++i) {
        qb[i] += a0 * fb[i];
        qb[i + 1] += a1 * fb[i];
      }
    }
    for (std::size_t i = 0; i < n; ++i) g[i] = qb[i];
  }
};

// ---- det_minor: 5x5 determinant by recursive expansion in minors along the first row --------

struct det_minor {
  static constexpr char const* name = "det_minor";
  static constexpr std::size_t dim = 5;
  static constexpr std::size_t n = dim * dim;
  std::vector<double> x0 = uniform(n, -1, 1, 61);
  std::vector<double> v = uniform(n, -1, 1, 62);

  /// The determinant of rows Row..dim-1 of a restricted to the columns in Cols (a bit set),
  /// expanded along its first row with signs alternating over the remaining columns. The rows
  /// and column sets are template arguments, so that the whole expansion is one function the
  /// compiler unrolls and inlines (the double function runs in tens of nanoseconds, as the
  /// peers' harnesses write it); the operations and their order are those of the loop over a
  /// run-time bit set, so every implementation computes the same numbers.
  template <std::size_t Row, unsigned Cols, class T>
  static T det(T const* a) {
    if constexpr (Row + 1 == dim) {
      return a[Row * dim + static_cast<std::size_t>(std::countr_zero(Cols))];
    } else {
      T d(0.0);
      expand<Row, Cols, 0, true>(a, d);
      return d;
    }
  }
  /// The terms of row Row's expansion from column J on (Plus: the sign of the next term).
  template <std::size_t Row, unsigned Cols, std::size_t J, bool Plus, class T>
  static void expand(T const* a, T& d) {
    if constexpr (J < dim) {
      if constexpr (((Cols >> J) & 1u) != 0) {
        T sub = det<Row + 1, (Cols & ~(1u << J))>(a);
        if constexpr (Plus)
          d += a[Row * dim + J] * sub;
        else
          d -= a[Row * dim + J] * sub;
        expand<Row, Cols, J + 1, !Plus>(a, d);
      } else {
        expand<Row, Cols, J + 1, Plus>(a, d);
      }
    }
  }

  template <class T>
  T operator()(T const* x) const {
    return det<0, (1u << dim) - 1>(x);
  }

  /// The cofactors: d det / d a_ij = (-1)^(i+j) det(minor_ij), each minor by the same
  /// expansion (rows other than i, columns other than j).
  void gradient(double const* x, double* g) const {
    constexpr std::size_t m = dim - 1;
    for (std::size_t i = 0; i < dim; ++i)
      for (std::size_t j = 0; j < dim; ++j) {
        std::array<double, m * m> b;
        for (std::size_t r = 0, rr = 0; r < dim; ++r) {
          if (r == i) continue;
          for (std::size_t k = 0, kk = 0; k < dim; ++k) {
            if (k == j) continue;
            b[rr * m + kk++] = x[r * dim + k];
          }
          ++rr;
        }
        double const minor = det4(b.data(), 0, (1u << m) - 1);
        g[i * dim + j] = ((i + j) % 2 == 0) ? minor : -minor;
      }
  }

 private:
  static double det4(double const* b, std::size_t row, unsigned cols) {
    constexpr std::size_t m = dim - 1;
    if (row + 1 == m) {
      std::size_t j = 0;
      while (!(cols & (1u << j))) ++j;
      return b[row * m + j];
    }
    double d = 0;
    bool plus = true;
    for (std::size_t j = 0; j < m; ++j) {
      if (!(cols & (1u << j))) continue;
      double const sub = det4(b, row + 1, cols & ~(1u << j));
      d += plus ? b[row * m + j] * sub : -b[row * m + j] * sub;
      plus = !plus;
    }
    return d;
  }
};

/// One instance of each problem (its data), shared by every translation unit.
template <class P>
P const& instance() {
  static P const p;
  return p;
}

}  // namespace adx_bench
