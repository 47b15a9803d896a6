// SPDX-License-Identifier: MIT
// adx: the one LAPACK dispatch point. Factorizations of row-major matrices of numbers: float
// and double go to LAPACKE (and triangular solves to CBLAS) when adx is built with LAPACK;
// every other number type, and a build without it, takes the portable kernels
// (linalg/portable.hpp) with the same interface. AD element types never come here: a linalg
// operation over tensor<var<T>> or tensor<dual<T>> factors the values, one level down.
//
// NaN in, NaN out: a factorization of a matrix holding a NaN (in the part it reads) gives NaN
// factors, eigenvalues and singular values, whichever kernel runs (LAPACKE would refuse the input
// and leave it as it was; an elimination can step around a NaN). A right-hand side holding NaN
// goes to the portable solve, which keeps each column to itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/config.hpp"
#include "adx/linalg/portable.hpp"

#if ADX_WITH_LAPACK
#include <cblas.h>

#include <cstdint>

// The LAPACKE functions adx calls, declared here: <lapacke.h> brings <complex> with it, a third of
// a second of every translation unit's compile. These are LAPACKE's own declarations for its
// default 32-bit integers (lapack_int = int32_t), so a program that includes <lapacke.h> too
// sees the same functions; with 64-bit LAPACK integers the two disagree and the program does not
// compile, rather than call LAPACK with the wrong integer size.
extern "C" {
std::int32_t LAPACKE_sgetrf(int, std::int32_t, std::int32_t, float*, std::int32_t, std::int32_t*);
std::int32_t LAPACKE_dgetrf(int, std::int32_t, std::int32_t, double*, std::int32_t, std::int32_t*);
std::int32_t LAPACKE_sgetrs(int, char, std::int32_t, std::int32_t, float const*, std::int32_t, std::int32_t const*,
                            float*, std::int32_t);
std::int32_t LAPACKE_dgetrs(int, char, std::int32_t, std::int32_t, double const*, std::int32_t, std::int32_t const*,
                            double*, std::int32_t);
std::int32_t LAPACKE_sgetri(int, std::int32_t, float*, std::int32_t, std::int32_t const*);
std::int32_t LAPACKE_dgetri(int, std::int32_t, double*, std::int32_t, std::int32_t const*);
std::int32_t LAPACKE_spotrf(int, char, std::int32_t, float*, std::int32_t);
std::int32_t LAPACKE_dpotrf(int, char, std::int32_t, double*, std::int32_t);
std::int32_t LAPACKE_ssyevd(int, char, char, std::int32_t, float*, std::int32_t, float*);
std::int32_t LAPACKE_dsyevd(int, char, char, std::int32_t, double*, std::int32_t, double*);
std::int32_t LAPACKE_sgesdd(int, char, std::int32_t, std::int32_t, float*, std::int32_t, float*, float*, std::int32_t,
                            float*, std::int32_t);
std::int32_t LAPACKE_dgesdd(int, char, std::int32_t, std::int32_t, double*, std::int32_t, double*, double*,
                            std::int32_t, double*, std::int32_t);
std::int32_t LAPACKE_sgeqrf(int, std::int32_t, std::int32_t, float*, std::int32_t, float*);
std::int32_t LAPACKE_dgeqrf(int, std::int32_t, std::int32_t, double*, std::int32_t, double*);
std::int32_t LAPACKE_sorgqr(int, std::int32_t, std::int32_t, std::int32_t, float*, std::int32_t, float const*);
std::int32_t LAPACKE_dorgqr(int, std::int32_t, std::int32_t, std::int32_t, double*, std::int32_t, double const*);
}
#endif

namespace adx::detail::lapack {

/// Whether T's factorizations go to LAPACKE (and its triangular solves and products to CBLAS).
template <class T>
inline constexpr bool native = ADX_WITH_LAPACK && (std::is_same_v<T, double> || std::is_same_v<T, float>);

#if ADX_WITH_LAPACK
/// LAPACKE's integer (its default, 32 bits) and row-major layout code.
using lapack_index = std::int32_t;
inline constexpr int row_major = 101, column_major = 102;
static_assert(sizeof(int) == sizeof(lapack_index), "adx: LAPACK's pivots are passed as int");

/// lu_factor's 0-based pivots as LAPACK's 1-based ones.
inline std::unique_ptr<lapack_index[]> one_based(int const* piv, std::size_t n) {
  auto ipiv = std::make_unique<lapack_index[]>(n);
  for (std::size_t i = 0; i < n; ++i) ipiv[i] = piv[i] + 1;
  return ipiv;
}
#endif

/// Whether one of the n numbers at p is NaN.
template <class T>
bool any_nan(T const* p, std::size_t n) {
  return std::any_of(p, p + n, [](T x) { return x != x; });
}
/// Whether the lower triangle of the n x n a holds a NaN.
template <class T>
bool nan_in_lower(T const* a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (any_nan(a + i * n, i + 1)) return true;
  return false;
}
/// NaN in every element of each [p, count) range.
template <class T>
void fill_nan(std::initializer_list<std::pair<T*, std::size_t>> ranges) {
  for (auto [p, count] : ranges) std::fill_n(p, count, std::numeric_limits<T>::quiet_NaN());
}

/// LU with partial pivoting of the n x n a, in place; piv[i] (0-based) is the row exchanged
/// with row i. Returns 0, or k (1-based) when U(k-1, k-1) is exactly zero. The factors' layout is
/// the kernel's (LAPACK factors A^T, the same bytes read column-major; the portable kernel A):
/// lu_solve reads them, and the determinant is the pivots' sign times the diagonal's product
/// either way.
template <class T>
std::size_t lu_factor(std::size_t n, T* a, int* piv) {
  if (any_nan(a, n * n)) {
    fill_nan<T>({{a, n * n}});
    for (std::size_t i = 0; i < n; ++i) piv[i] = static_cast<int>(i);
    return 0;
  }
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    if (n == 0) return 0;
    auto const f = [](auto... x) {
      if constexpr (std::is_same_v<T, double>)
        return LAPACKE_dgetrf(x...);
      else
        return LAPACKE_sgetrf(x...);
    };
    // the row-major A is the column-major A^T: its LU in place, no transposed copies
    lapack_index const info = f(column_major, lapack_index(n), lapack_index(n), a, lapack_index(n), piv);
    for (std::size_t i = 0; i < n; ++i) --piv[i];
    return info > 0 ? std::size_t(info) : 0;
  } else
#endif
  {
    return portable::lu_factor(n, a, piv);
  }
}

/// Solves A X = B (or A^T X = B if trans) from lu_factor's result; b (n x nrhs) becomes X. A
/// column of B holding NaN gives a column of NaN; NaN factors give NaN.
template <class T>
void lu_solve(bool trans, std::size_t n, std::size_t nrhs, T const* lu, int const* piv, T* b) {
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    if (n == 0 || nrhs == 0) return;
    if (any_nan(lu, n * n)) return fill_nan<T>({{b, n * nrhs}});
    auto const ipiv = one_based(piv, n);
    auto const f = [](auto... x) {
      if constexpr (std::is_same_v<T, double>)
        return LAPACKE_dgetrs(x...);
      else
        return LAPACKE_sgetrs(x...);
    };
    // lu is A^T's factorization (column-major): A X = B is (A^T)^T X = B. B goes column-major
    // (one column needs no copy); a column with NaN is solved as zeros and set to NaN after
    std::vector<char> nan_column(nrhs, 0);
    for (std::size_t i = 0; i < n * nrhs; ++i)
      if (b[i] != b[i]) nan_column[i % nrhs] = 1;
    std::unique_ptr<T[]> cm;
    T* x = b;
    if (nrhs > 1) {
      cm = std::make_unique<T[]>(n * nrhs);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < nrhs; ++j) cm[j * n + i] = nan_column[j] ? T(0) : b[i * nrhs + j];
      x = cm.get();
    } else if (nan_column[0]) {
      return fill_nan<T>({{b, n}});
    }
    f(column_major, trans ? 'N' : 'T', lapack_index(n), lapack_index(nrhs), lu, lapack_index(n), ipiv.get(), x,
      lapack_index(n));
    if (nrhs > 1)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < nrhs; ++j)
          b[i * nrhs + j] = nan_column[j] ? std::numeric_limits<T>::quiet_NaN() : cm[j * n + i];
  } else
#endif
  {
    portable::lu_solve(trans, n, nrhs, lu, piv, b);
  }
}

/// A^-T (row-major, n x n) into out from lu_factor's result: LAPACK's getri on the factors
/// (4n^3 / 3 flops) where it can, solves against the identity otherwise; inf and NaN where A is
/// singular.
template <class T>
void lu_inverse_transposed(std::size_t n, T const* lu, int const* piv, T* out) {
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    if (n == 0) return;
    auto inv = std::make_unique<T[]>(n * n);
    std::copy_n(lu, n * n, inv.get());
    auto const ipiv = one_based(piv, n);
    lapack_index info;
    if constexpr (std::is_same_v<T, double>)
      info = LAPACKE_dgetri(column_major, lapack_index(n), inv.get(), lapack_index(n), ipiv.get());
    else
      info = LAPACKE_sgetri(column_major, lapack_index(n), inv.get(), lapack_index(n), ipiv.get());
    if (info == 0) {  // inv holds (A^T)^-1 column-major, A^-1 row-major: transposed into out, by tiles
      constexpr std::size_t tile = 32;
      for (std::size_t i0 = 0; i0 < n; i0 += tile)
        for (std::size_t j0 = 0; j0 < n; j0 += tile)
          for (std::size_t i = i0; i < std::min(n, i0 + tile); ++i)
            for (std::size_t j = j0; j < std::min(n, j0 + tile); ++j) out[i * n + j] = inv[j * n + i];
      return;
    }
  }
#endif
  for (std::size_t i = 0; i < n * n; ++i) out[i] = i / n == i % n ? T(1) : T(0);
  lu_solve(true, n, n, lu, piv, out);
}

/// Cholesky A = L L^T from a's lower triangle, in place (zeros above). Returns 0, or k
/// (1-based) when the leading minor of order k is not positive definite.
template <class T>
std::size_t cholesky_factor(std::size_t n, T* a) {
  if (nan_in_lower(a, n)) {
    for (std::size_t i = 0; i < n * n; ++i) a[i] = i % n <= i / n ? std::numeric_limits<T>::quiet_NaN() : T(0);
    return 0;
  }
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    if (n == 0) return 0;
    auto const f = [](auto... x) {
      if constexpr (std::is_same_v<T, double>)
        return LAPACKE_dpotrf(x...);
      else
        return LAPACKE_spotrf(x...);
    };
    // row-major L L^T = A is column-major U^T U = A with U = L^T: no transposed copies
    lapack_index const info = f(column_major, 'U', lapack_index(n), a, lapack_index(n));
    if (info > 0) return std::size_t(info);
    for (std::size_t i = 0; i < n; ++i) std::fill(a + i * n + i + 1, a + (i + 1) * n, T(0));
    return 0;
  } else
#endif
  {
    return portable::cholesky_factor(n, a);
  }
}

/// Solves op(A) X = B for the triangular n x n a (only its lower or upper triangle is read;
/// unit: a diagonal of ones), op(A) = A^T if trans; b (n x nrhs) becomes X.
template <class T>
void triangular_solve(bool lower, bool trans, bool unit, std::size_t n, std::size_t nrhs, T const* a, T* b) {
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    if (n == 0 || nrhs == 0) return;
    auto const f = [](auto... x) {
      if constexpr (std::is_same_v<T, double>)
        cblas_dtrsm(x...);
      else
        cblas_strsm(x...);
    };
    f(CblasRowMajor, CblasLeft, lower ? CblasLower : CblasUpper, trans ? CblasTrans : CblasNoTrans,
      unit ? CblasUnit : CblasNonUnit, int(n), int(nrhs), T(1), a, int(n), b, int(nrhs));
  } else
#endif
  {
    portable::triangular_solve(lower, trans, unit, n, nrhs, a, b);
  }
}

#if ADX_WITH_LAPACK
/// The reverse Cholesky rule in place, for LAPACK's number types: g holds gL (its lower
/// triangle) on entry and the symmetric gA on return, for L L^T = A (l lower, n x n). Blocked
/// (Murray 2016, arXiv 1602.07527, the reverse of a blocked right-looking factorization): about
/// 2n^3 / 3 flops in CBLAS, where the matrix form L^-T S L^-1 takes 4n^3 with two temporaries.
template <class T>
void cholesky_adjoint(std::size_t n, T const* l, T* g) {
  static_assert(native<T>);
  if (n == 0) return;
  auto const trsm = [](auto... x) {
    if constexpr (std::is_same_v<T, double>)
      cblas_dtrsm(x...);
    else
      cblas_strsm(x...);
  };
  auto const gemm = [](auto... x) {
    if constexpr (std::is_same_v<T, double>)
      cblas_dgemm(x...);
    else
      cblas_sgemm(x...);
  };
  constexpr std::size_t nb_max = 48;
  T work[nb_max * nb_max];
  int const ld = int(n);
  for (std::size_t k = n; k > 0;) {
    // the block column j..k: D its diagonal block, R the rows beside it, C the rows below it, B below R
    std::size_t const j = k > nb_max ? k - nb_max : 0, nb = k - j, m = n - k;
    T const *R = l + j * n, *D = l + j * n + j, *B = l + k * n, *C = l + k * n + j;
    T *Rb = g + j * n, *Db = g + j * n + j, *Bb = g + k * n, *Cb = g + k * n + j;
    if (m > 0) {  // Cbar := Cbar D^-1; Bbar -= Cbar R; Dbar -= tril(Cbar^T C)
      trsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, int(m), int(nb), T(1), D, ld, Cb, ld);
      if (j > 0)
        gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(j), int(nb), T(-1), Cb, ld, R, ld, T(1), Bb, ld);
      gemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(nb), int(nb), int(m), T(1), Cb, ld, C, ld, T(0), work, int(nb));
      for (std::size_t a = 0; a < nb; ++a)
        for (std::size_t b = 0; b <= a; ++b) Db[a * n + b] -= work[a * nb + b];
    }
    for (std::size_t c = nb; c-- > 0;) {  // the diagonal block, unblocked, column by column backwards
      T const d = D[c * n + c];
      T s = 0;
      for (std::size_t i = c + 1; i < nb; ++i) s += D[i * n + c] * Db[i * n + c];
      T const db = (Db[c * n + c] - s / d) / d;
      for (std::size_t i = c + 1; i < nb; ++i) Db[i * n + c] /= d;
      for (std::size_t t = 0; t < c; ++t) Db[c * n + t] -= db * D[c * n + t];
      for (std::size_t i = c + 1; i < nb; ++i) {
        T const cb = Db[i * n + c];
        for (std::size_t t = 0; t < c; ++t) {
          Db[c * n + t] -= cb * D[i * n + t];
          Db[i * n + t] -= cb * D[c * n + t];
        }
      }
      Db[c * n + c] = db / 2;
    }
    if (j > 0) {  // Rbar -= Cbar^T B; Rbar -= (Dbar + Dbar^T) R
      if (m > 0)
        gemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(nb), int(j), int(m), T(-1), Cb, ld, B, ld, T(1), Rb, ld);
      for (std::size_t a = 0; a < nb; ++a)
        for (std::size_t b = 0; b <= a; ++b)
          work[a * nb + b] = work[b * nb + a] = Db[a * n + b] * (a == b ? T(2) : T(1));
      gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(nb), int(j), int(nb), T(-1), work, int(nb), R, ld, T(1), Rb,
           ld);
    }
    k = j;
  }
  // the lower triangle's gradient as the symmetric one: off the diagonal, half to each side
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) g[j * n + i] = g[i * n + j] *= T(0.5);
}
#endif

/// Eigenvalues w (ascending) and eigenvectors v (columns, n x n) of the symmetric n x n a,
/// from its lower triangle. Returns 0, or > 0 when the iteration did not converge.
template <class T>
std::size_t symmetric_eigen(std::size_t n, T const* a, T* w, T* v) {
  if (nan_in_lower(a, n)) {
    fill_nan<T>({{w, n}, {v, n * n}});
    return 0;
  }
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    if (n == 0) return 0;
    std::copy_n(a, n * n, v);
    auto const f = [](auto... x) {
      if constexpr (std::is_same_v<T, double>)
        return LAPACKE_dsyevd(x...);
      else
        return LAPACKE_ssyevd(x...);
    };
    lapack_index const info = f(row_major, 'V', 'L', lapack_index(n), v, lapack_index(n), w);
    return info > 0 ? std::size_t(info) : 0;
  } else
#endif
  {
    return portable::symmetric_eigen(n, a, w, v);
  }
}

/// Thin SVD of the m x n a: s (min(m, n), descending), u (m x k) and vt (k x n), or the
/// values alone when u and vt are null. Returns 0, or > 0 when it did not converge.
template <class T>
std::size_t svd(std::size_t m, std::size_t n, T const* a, T* s, T* u, T* vt) {
  if (any_nan(a, m * n)) {
    std::size_t const k = std::min(m, n);
    fill_nan<T>({{s, k}});
    if (u) fill_nan<T>({{u, m * k}, {vt, k * n}});
    return 0;
  }
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    std::size_t const k = std::min(m, n);
    if (k == 0) return 0;
    auto work = std::make_unique<T[]>(m * n);
    std::copy_n(a, m * n, work.get());
    auto const f = [](auto... x) {
      if constexpr (std::is_same_v<T, double>)
        return LAPACKE_dgesdd(x...);
      else
        return LAPACKE_sgesdd(x...);
    };
    bool const vectors = u != nullptr;
    T dummy[1] = {T(0)};
    lapack_index const info =
        f(row_major, vectors ? 'S' : 'N', lapack_index(m), lapack_index(n), work.get(), lapack_index(n), s,
          vectors ? u : dummy, lapack_index(vectors ? k : 1), vectors ? vt : dummy, lapack_index(vectors ? n : 1));
    return info > 0 ? std::size_t(info) : 0;
  } else
#endif
  {
    return portable::svd(m, n, a, s, u, vt);
  }
}

/// Reduced QR of the m x n a: q (m x k, orthonormal columns), r (k x n, upper triangular),
/// k = min(m, n), with LAPACK's signs (R's diagonal may be negative).
template <class T>
void qr(std::size_t m, std::size_t n, T const* a, T* q, T* r) {
  if (any_nan(a, m * n)) {
    std::size_t const k = std::min(m, n);
    fill_nan<T>({{q, m * k}, {r, k * n}});
    return;
  }
#if ADX_WITH_LAPACK
  if constexpr (native<T>) {
    std::size_t const k = std::min(m, n);
    if (k == 0) return;
    auto work = std::make_unique<T[]>(m * n);
    auto tau = std::make_unique<T[]>(k);
    std::copy_n(a, m * n, work.get());
    if constexpr (std::is_same_v<T, double>)
      LAPACKE_dgeqrf(row_major, lapack_index(m), lapack_index(n), work.get(), lapack_index(n), tau.get());
    else
      LAPACKE_sgeqrf(row_major, lapack_index(m), lapack_index(n), work.get(), lapack_index(n), tau.get());
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? work[i * n + j] : T(0);
    if constexpr (std::is_same_v<T, double>)
      LAPACKE_dorgqr(row_major, lapack_index(m), lapack_index(k), lapack_index(k), work.get(), lapack_index(n),
                     tau.get());
    else
      LAPACKE_sorgqr(row_major, lapack_index(m), lapack_index(k), lapack_index(k), work.get(), lapack_index(n),
                     tau.get());
    for (std::size_t i = 0; i < m; ++i) std::copy_n(work.get() + i * n, k, q + i * k);
  } else
#endif
  {
    portable::qr(m, n, a, q, r);
  }
}

}  // namespace adx::detail::lapack
