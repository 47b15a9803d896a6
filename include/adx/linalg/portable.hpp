// SPDX-License-Identifier: MIT
// adx: the portable dense factorizations behind the LAPACK dispatch point (linalg/lapack.hpp),
// for every arithmetic floating type (long double, and float and double without LAPACK): LU with
// partial pivoting, Cholesky, triangular solves, the symmetric eigenproblem (cyclic Jacobi), the
// thin SVD (one-sided Jacobi) and the reduced Householder QR. Matrices are row-major and
// contiguous (leading dimension = number of columns). Each routine follows the convention of the
// LAPACK driver it stands in for (getrf, getrs, potrf, trtrs, syev, gesvd, geqrf + orgqr) where
// that convention is observable: pivots, return codes, the signs of QR's R.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

namespace adx::detail::portable {

/// sum_i x[i] y[i] over n contiguous elements.
template <class T>
T dot(std::size_t n, T const* x, T const* y) noexcept {
  T s = T(0);
  for (std::size_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

/// The 2-norm of n elements x[0], x[inc], ..., without overflow or harmful underflow.
template <class T>
T nrm2(std::size_t n, T const* x, std::size_t inc = 1) noexcept {
  T scale = T(0), ssq = T(1);
  for (std::size_t i = 0; i < n; ++i) {
    T const a = std::abs(x[i * inc]);
    if (a == T(0)) continue;
    if (scale < a) {
      ssq = T(1) + ssq * (scale / a) * (scale / a);
      scale = a;
    } else {
      ssq += (a / scale) * (a / scale);
    }
  }
  return scale * std::sqrt(ssq);
}

/// A power of two that brings amax (> 0, finite) into [1, 2) when the exponent range allows:
/// multiplying by it and dividing back is exact.
template <class T>
T pow2_scale(T amax) noexcept {
  if (!(amax > T(0))) return T(1);
  int const e =
      std::clamp(std::ilogb(amax), std::numeric_limits<T>::min_exponent - 1, std::numeric_limits<T>::max_exponent - 1);
  return std::ldexp(T(1), -e);
}

/// The Jacobi rotation (c, s) that diagonalises the symmetric 2 x 2 [[app, apq], [apq, aqq]]
/// (apq != 0): with J = [[c, s], [-s, c]], J^T [[app, apq], [apq, aqq]] J is diagonal, and
/// t = s / c is the smaller of the two roots, |t| <= 1.
template <class T>
void jacobi_rotation(T app, T aqq, T apq, T& c, T& s, T& t) noexcept {
  T const zeta = (aqq - app) / (T(2) * apq), az = std::abs(zeta);
  // beyond 1/sqrt(eps), sqrt(1 + zeta^2) is |zeta| to rounding (and zeta^2 might overflow)
  T const root = az > T(1) / std::sqrt(std::numeric_limits<T>::epsilon()) ? az : std::sqrt(T(1) + az * az);
  t = std::copysign(T(1) / (az + root), zeta);
  c = T(1) / std::sqrt(T(1) + t * t);
  s = t * c;
}

/// x <- c x - s y, y <- s x + c y over n contiguous elements, in the form x - s (y + tau x),
/// tau = s / (1 + c): a rotation by a small angle then changes the vectors by as little, where
/// c x would scale them by c's rounding each time (and their norms would drift over the sweeps).
template <class T>
void rotate(std::size_t n, T* x, T* y, T c, T s) noexcept {
  T const tau = s / (T(1) + c);
  for (std::size_t i = 0; i < n; ++i) {
    T const xi = x[i], yi = y[i];
    x[i] = xi - s * (yi + tau * xi);
    y[i] = yi + s * (xi - tau * yi);
  }
}

/// Solves op(A) X = B for the triangular n x n a (lower or upper; only that triangle is read;
/// unit: its diagonal is taken as 1), op(A) = A^T if trans; b is n x nrhs, overwritten by X
/// (LAPACK's trtrs without the singularity check: a zero on the diagonal gives infinities).
template <class T>
void triangular_solve(bool lower, bool trans, bool unit, std::size_t n, std::size_t nrhs, T const* a, T* b) {
  if (n == 0 || nrhs == 0) return;
  auto row = [&](std::size_t i) { return b + i * nrhs; };
  auto sub = [&](std::size_t i, T alpha, std::size_t j) {  // row i of b -= alpha * row j
    T* bi = row(i);
    T const* bj = row(j);
    for (std::size_t c = 0; c < nrhs; ++c) bi[c] -= alpha * bj[c];
  };
  auto divide = [&](std::size_t i) {
    if (unit) return;
    T const d = a[i * n + i];
    T* bi = row(i);
    for (std::size_t c = 0; c < nrhs; ++c) bi[c] /= d;
  };
  // a is always read along its rows: by inner products when op(A) = A, by updates of the rows
  // still to solve when op(A) = A^T
  if (lower != trans) {  // op(A) lower triangular: forward substitution
    for (std::size_t i = 0; i < n; ++i) {
      if (!trans) {
        for (std::size_t j = 0; j < i; ++j) sub(i, a[i * n + j], j);
        divide(i);
      } else {
        divide(i);
        for (std::size_t j = i + 1; j < n; ++j) sub(j, a[i * n + j], i);
      }
    }
  } else {  // op(A) upper triangular: back substitution
    for (std::size_t i = n; i-- > 0;) {
      if (!trans) {
        for (std::size_t j = i + 1; j < n; ++j) sub(i, a[i * n + j], j);
        divide(i);
      } else {
        divide(i);
        for (std::size_t j = 0; j < i; ++j) sub(j, a[i * n + j], i);
      }
    }
  }
}

/// LU with partial pivoting of the n x n a, in place: P A = L U with L unit lower triangular
/// (stored below the diagonal) and U upper triangular (on and above it). piv[i] (0-based) is the
/// row exchanged with row i at step i. Returns 0, or k (1-based) when U(k-1, k-1) is exactly zero,
/// the first such k; the factorization is completed all the same (LAPACK's getrf and its info).
template <class T>
std::size_t lu_factor(std::size_t n, T* a, int* piv) {
  std::size_t info = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t p = k;  // the first row of largest |a(i, k)|, i >= k (as BLAS's iamax)
    T big = std::abs(a[k * n + k]);
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > big) {
        big = std::abs(a[i * n + k]);
        p = i;
      }
    piv[k] = static_cast<int>(p);
    T* const rk = a + k * n;
    if (a[p * n + k] == T(0)) {  // the whole column below is zero: nothing to eliminate
      if (info == 0) info = k + 1;
      continue;
    }
    if (p != k) std::swap_ranges(rk, rk + n, a + p * n);
    T const d = rk[k];
    for (std::size_t i = k + 1; i < n; ++i) {
      T* const ri = a + i * n;
      T const l = ri[k] /= d;
      if (l == T(0)) continue;
      for (std::size_t j = k + 1; j < n; ++j) ri[j] -= l * rk[j];
    }
  }
  return info;
}

/// Solves A X = B (trans false) or A^T X = B (trans true) with lu_factor's lu and piv; b is
/// n x nrhs, overwritten by X (LAPACK's getrs).
template <class T>
void lu_solve(bool trans, std::size_t n, std::size_t nrhs, T const* lu, int const* piv, T* b) {
  if (n == 0 || nrhs == 0) return;
  auto exchange = [&](std::size_t k) {
    auto const p = static_cast<std::size_t>(piv[k]);
    if (p != k) std::swap_ranges(b + k * nrhs, b + (k + 1) * nrhs, b + p * nrhs);
  };
  if (!trans) {  // A = P^T L U: X = U^-1 L^-1 P B
    for (std::size_t k = 0; k < n; ++k) exchange(k);
    triangular_solve(true, false, true, n, nrhs, lu, b);
    triangular_solve(false, false, false, n, nrhs, lu, b);
  } else {  // A^T = U^T L^T P: X = P^T L^-T U^-T B
    triangular_solve(false, true, false, n, nrhs, lu, b);
    triangular_solve(true, true, true, n, nrhs, lu, b);
    for (std::size_t k = n; k-- > 0;) exchange(k);
  }
}

/// Cholesky A = L L^T of the symmetric n x n a, reading only its lower triangle; writes L in the
/// lower triangle and zeros above it. Returns 0, or k (1-based) when the leading minor of order k
/// is not positive definite (LAPACK's potrf and its info): then columns 0 .. k-2 hold L's, a(k-1,
/// k-1) the non-positive (or NaN) pivot, and the rows below it in that column are not factored.
template <class T>
std::size_t cholesky_factor(std::size_t n, T* a) {
  for (std::size_t i = 0; i < n; ++i) std::fill(a + i * n + i + 1, a + (i + 1) * n, T(0));
  for (std::size_t j = 0; j < n; ++j) {
    T* const rj = a + j * n;
    T const d = rj[j] - dot(j, rj, rj);
    if (!(d > T(0))) {
      rj[j] = d;
      return j + 1;
    }
    T const l = std::sqrt(d);
    rj[j] = l;
    for (std::size_t i = j + 1; i < n; ++i) {
      T* const ri = a + i * n;
      ri[j] = (ri[j] - dot(j, ri, rj)) / l;
    }
  }
  return 0;
}

/// The most sweeps the Jacobi methods make before they give up.
inline constexpr int jacobi_max_sweeps = 60;

/// Eigenvalues w (ascending) and orthonormal eigenvectors v (n x n, eigenvector j in column j) of
/// the symmetric n x n a, reading only its lower triangle; a is not modified. Cyclic Jacobi on a
/// copy scaled by a power of two, until every off-diagonal element is negligible beside its two
/// diagonal elements (|a_pq| <= eps sqrt(|a_pp a_qq|), or below eps^2 |A|_F), which gives
/// residuals |A V - V diag(w)| of order n eps |A|. Returns 0, or the number of elements still
/// not negligible after the last sweep (> 0: not converged); a non-finite element in a gives
/// NaN everywhere and returns n.
template <class T>
std::size_t symmetric_eigen(std::size_t n, T const* a, T* w, T* v) {
  if (n == 0) return 0;
  T amax = T(0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      T const x = std::abs(a[i * n + j]);
      if (!std::isfinite(x)) {
        std::fill_n(w, n, std::numeric_limits<T>::quiet_NaN());
        std::fill_n(v, n * n, std::numeric_limits<T>::quiet_NaN());
        return n;
      }
      amax = std::max(amax, x);
    }
  T const scale = pow2_scale(amax);
  std::vector<T> A(n * n), Vt(n * n, T(0));  // Vt: the eigenvectors as rows, so that rotations run along rows
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) A[i * n + j] = A[j * n + i] = a[i * n + j] * scale;
    Vt[i * n + i] = T(1);
  }
  T const eps = std::numeric_limits<T>::epsilon();
  T const tiny = std::max(eps * eps * nrm2(n * n, A.data()), std::numeric_limits<T>::min());
  std::size_t left = 0;
  for (int sweep = 0; sweep <= jacobi_max_sweeps; ++sweep) {
    left = 0;
    for (std::size_t p = 0; p + 1 < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        T* const rp = A.data() + p * n;
        T* const rq = A.data() + q * n;
        T const apq = rp[q];
        if (std::abs(apq) <= tiny || std::abs(apq) <= eps * std::sqrt(std::abs(rp[p])) * std::sqrt(std::abs(rq[q])))
          continue;
        ++left;
        if (sweep == jacobi_max_sweeps) continue;  // only counting
        T c, s, t;
        jacobi_rotation(rp[p], rq[q], apq, c, s, t);
        T const tau = s / (T(1) + c);
        for (std::size_t r = 0; r < n; ++r) {
          if (r == p || r == q) continue;
          T const arp = rp[r], arq = rq[r];
          rp[r] = A[r * n + p] = arp - s * (arq + tau * arp);
          rq[r] = A[r * n + q] = arq + s * (arp - tau * arq);
        }
        rp[p] -= t * apq;
        rq[q] += t * apq;
        rp[q] = rq[p] = T(0);
        rotate(n, Vt.data() + p * n, Vt.data() + q * n, c, s);
      }
    if (left == 0) break;
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t i, std::size_t j) { return A[i * n + i] < A[j * n + j]; });
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t const o = order[j];
    w[j] = A[o * n + o] / scale;
    for (std::size_t i = 0; i < n; ++i) v[i * n + j] = Vt[o * n + i];
  }
  return left;
}

/// Replaces each row i of the k x len g with zero[i] set by a unit vector orthogonal to every
/// other row (the rows without zero[i] are orthonormal): the standard basis vector that keeps
/// the most after two Gram-Schmidt passes against them, normalised.
template <class T>
void complete_orthonormal(std::size_t k, std::size_t len, T* g, std::vector<bool> zero) {
  std::vector<T> x(len), best(len);
  for (std::size_t z = 0; z < k; ++z) {
    if (!zero[z]) continue;
    T best_norm = T(-1);
    for (std::size_t e = 0; e < len && best_norm < T(0.7); ++e) {  // 0.7: about 1/sqrt(2)
      std::fill(x.begin(), x.end(), T(0));
      x[e] = T(1);
      for (int pass = 0; pass < 2; ++pass)
        for (std::size_t j = 0; j < k; ++j) {
          if (zero[j]) continue;
          T const* gj = g + j * len;
          T const h = dot(len, gj, x.data());
          for (std::size_t i = 0; i < len; ++i) x[i] -= h * gj[i];
        }
      T const norm = nrm2(len, x.data());
      if (norm > best_norm) {
        best_norm = norm;
        best.swap(x);
      }
    }
    T* gz = g + z * len;
    for (std::size_t i = 0; i < len; ++i) gz[i] = best[i] / best_norm;
    zero[z] = false;
  }
}

/// Thin SVD a = u diag(s) vt of the m x n a (not modified), k = min(m, n): s (k) descending and
/// >= 0, u (m x k) with orthonormal columns, vt (k x n) with orthonormal rows; u and vt may both
/// be nullptr (values only). One-sided Jacobi (Hestenes) on the k vectors of length max(m, n)
/// that are a's columns (m >= n) or rows (m < n), scaled by a power of two: rotations in pairs
/// until every two are orthogonal to sqrt(max(m, n)) eps, which gives the singular values to high
/// relative accuracy (those below eps^2 |a|_F are 0). u's column j and vt's row j belong together
/// (a vt^T = u diag(s)); the vectors of a zero singular value complete the orthonormal sets.
/// Returns 0, or the number of pairs still not orthogonal after the last sweep (> 0: not
/// converged); a non-finite element in a gives NaN everywhere and returns k.
template <class T>
std::size_t svd(std::size_t m, std::size_t n, T const* a, T* s, T* u, T* vt) {
  std::size_t const k = std::min(m, n), len = std::max(m, n);
  if (k == 0) return 0;
  bool const tall = m >= n, vectors = u != nullptr || vt != nullptr;
  T amax = T(0);
  for (std::size_t i = 0; i < m * n; ++i) {
    if (!std::isfinite(a[i])) {
      T const nan = std::numeric_limits<T>::quiet_NaN();
      std::fill_n(s, k, nan);
      if (u) std::fill_n(u, m * k, nan);
      if (vt) std::fill_n(vt, k * n, nan);
      return k;
    }
    amax = std::max(amax, std::abs(a[i]));
  }
  T const scale = pow2_scale(amax);
  // g: the k vectors as rows; r: the rotations applied to them (g = r g0), its rows the singular
  // vectors on the short side
  std::vector<T> g(k * len), r(vectors ? k * k : 0, T(0));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) g[tall ? j * len + i : i * len + j] = a[i * n + j] * scale;
  for (std::size_t i = 0; i < r.size(); i += k + 1) r[i] = T(1);
  // two vectors are orthogonal when their cosine is below sqrt(len) eps (as in LAPACK's gesvj),
  // the rounding of the inner product itself. A vector shorter than eps^2 |a|_F is negligible:
  // its square norm might underflow, and rotations would only shrink it by eps each time when it
  // is parallel to another (identical columns); it takes no part in rotations and its singular
  // value is 0.
  T const eps = std::numeric_limits<T>::epsilon();
  T const small = std::max(eps * eps * nrm2(k * len, g.data()), std::sqrt(std::numeric_limits<T>::min()) / eps);
  T const tol = std::sqrt(T(len)) * eps;
  std::size_t left = 0;
  for (int sweep = 0; sweep <= jacobi_max_sweeps; ++sweep) {
    left = 0;
    for (std::size_t p = 0; p + 1 < k; ++p)
      for (std::size_t q = p + 1; q < k; ++q) {
        T* const gp = g.data() + p * len;
        T* const gq = g.data() + q * len;
        T const alpha = dot(len, gp, gp), beta = dot(len, gq, gq), gamma = dot(len, gp, gq);
        if (alpha <= small * small || beta <= small * small ||
            std::abs(gamma) <= tol * std::sqrt(alpha) * std::sqrt(beta))
          continue;
        ++left;
        if (sweep == jacobi_max_sweeps) continue;  // only counting
        T c, sn, t;
        jacobi_rotation(alpha, beta, gamma, c, sn, t);
        rotate(len, gp, gq, c, sn);
        if (vectors) rotate(k, r.data() + p * k, r.data() + q * k, c, sn);
      }
    if (left == 0) break;
  }
  std::vector<T> norm(k);
  for (std::size_t j = 0; j < k; ++j) norm[j] = nrm2(len, g.data() + j * len);
  std::vector<std::size_t> order(k);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return norm[i] > norm[j]; });
  std::vector<bool> zero(k);
  for (std::size_t j = 0; j < k; ++j) {
    zero[j] = !(dot(len, g.data() + j * len, g.data() + j * len) > small * small);  // as in the sweeps
    if (zero[j]) norm[j] = T(0);
  }
  for (std::size_t j = 0; j < k; ++j) s[j] = norm[order[j]] / scale;
  if (!vectors) return left;
  for (std::size_t j = 0; j < k; ++j)
    if (!zero[j])
      for (std::size_t i = 0; i < len; ++i) g[j * len + i] /= norm[j];
  complete_orthonormal(k, len, g.data(), zero);
  // tall: a = g^T r (u from g, vt = r); wide: a^T = g^T r (u = r^T, vt from g)
  T const* const long_side = g.data();
  T const* const short_side = r.data();
  for (std::size_t j = 0; j < k; ++j) {
    std::size_t const o = order[j];
    if (u)
      for (std::size_t i = 0; i < m; ++i) u[i * k + j] = tall ? long_side[o * len + i] : short_side[o * k + i];
    if (vt)
      for (std::size_t i = 0; i < n; ++i) vt[j * n + i] = tall ? short_side[o * k + i] : long_side[o * len + i];
  }
  return left;
}

/// Reduced QR a = q r of the m x n a (not modified), k = min(m, n): q (m x k) with orthonormal
/// columns, r (k x n) upper triangular (zeros below the diagonal written). Householder reflectors
/// H_j = I - tau_j v_j v_j^T as LAPACK's geqrf makes them (dlarfg: beta = -sign(alpha) |x|, no
/// reflection when the column below the diagonal is zero), and q = H_0 ... H_{k-1} I as orgqr
/// forms it: r's diagonal has LAPACK's signs and may be negative.
template <class T>
void qr(std::size_t m, std::size_t n, T const* a, T* q, T* r) {
  std::size_t const k = std::min(m, n);
  if (k == 0) return;
  std::vector<T> f(a, a + m * n), tau(k, T(0)), y(n);  // f: r above the diagonal, the v_j below it
  for (std::size_t j = 0; j < k; ++j) {
    T const alpha = f[j * n + j];
    T const xnorm = nrm2(m - j - 1, f.data() + (j + 1) * n + j, n);
    if (xnorm == T(0)) continue;  // tau_j = 0: H_j = I
    T const beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau[j] = (beta - alpha) / beta;
    for (std::size_t i = j + 1; i < m; ++i) f[i * n + j] /= alpha - beta;
    f[j * n + j] = beta;
    // the columns right of j, rows j..m-1: C -= tau v (v^T C), with v = (1, f[j+1.., j])
    std::size_t const w = n - j - 1;
    if (w == 0) continue;
    T* const cj = f.data() + j * n + j + 1;
    std::copy_n(cj, w, y.begin());
    for (std::size_t i = j + 1; i < m; ++i) {
      T const vi = f[i * n + j];
      T const* ci = f.data() + i * n + j + 1;
      for (std::size_t c = 0; c < w; ++c) y[c] += vi * ci[c];
    }
    for (std::size_t c = 0; c < w; ++c) cj[c] -= tau[j] * y[c];
    for (std::size_t i = j + 1; i < m; ++i) {
      T const tv = tau[j] * f[i * n + j];
      T* ci = f.data() + i * n + j + 1;
      for (std::size_t c = 0; c < w; ++c) ci[c] -= tv * y[c];
    }
  }
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t c = 0; c < n; ++c) r[i * n + c] = c >= i ? f[i * n + c] : T(0);
  // q = H_0 (H_1 (... (H_{k-1} I))): H_j touches rows j.. and, there, only columns j.. are nonzero
  std::fill_n(q, m * k, T(0));
  for (std::size_t i = 0; i < k; ++i) q[i * k + i] = T(1);
  for (std::size_t j = k; j-- > 0;) {
    if (tau[j] == T(0)) continue;
    std::size_t const w = k - j;
    T* const qj = q + j * k + j;
    std::copy_n(qj, w, y.begin());
    for (std::size_t i = j + 1; i < m; ++i) {
      T const vi = f[i * n + j];
      T const* qi = q + i * k + j;
      for (std::size_t c = 0; c < w; ++c) y[c] += vi * qi[c];
    }
    for (std::size_t c = 0; c < w; ++c) qj[c] -= tau[j] * y[c];
    for (std::size_t i = j + 1; i < m; ++i) {
      T const tv = tau[j] * f[i * n + j];
      T* qi = q + i * k + j;
      for (std::size_t c = 0; c < w; ++c) qi[c] -= tv * y[c];
    }
  }
}

}  // namespace adx::detail::portable
