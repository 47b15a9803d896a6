// SPDX-License-Identifier: MIT
// adx: the one BLAS dispatch point. C = op(A) op(B) (+ C), row-major, op = transpose or not.
// float and double go to CBLAS when adx is built with it; every other element type (dual,
// var, nested) takes the portable blocked kernel with the same interface, whose inner
// products are single dot statements for var elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "adx/config.hpp"
#include "adx/core/expr.hpp"
#include "adx/reverse/var.hpp"

#if ADX_WITH_BLAS
#include <cblas.h>
#endif

namespace adx::detail {

/// Strided view of a row-major matrix, optionally transposed: element (i, j).
template <class T>
struct mat_view {
  T const* p;
  std::size_t ld;
  bool trans;
  T const& operator()(std::size_t i, std::size_t j) const noexcept { return trans ? p[j * ld + i] : p[i * ld + j]; }
};

/// sum_k a(k) b(k) as one value: plain loop, one tangent sum for dual, one statement for var.
template <class T, class FA, class FB>
T dot_n(std::size_t n, FA const& a, FB const& b) {
  if constexpr (!ad_scalar<T>) {
    T s = T(0);
    for (std::size_t k = 0; k < n; ++k) s += a(k) * b(k);
    return s;
  } else if constexpr (ad_traits<T>::is_reverse) {
    using V = value_type_t<T>;
    V s = constant<V>(0);
    for (std::size_t k = 0; k < n; ++k) s = to_value<V>(s + a(k).val() * b(k).val());
    auto& tp = tape<V>::current();
    index_type const idx = tp.record_n(
        2 * n,
        [&](auto& w) {
          for (std::size_t k = 0; k < n; ++k) {
            w.add(a(k).index(), a(k).epoch(), b(k).val());
            w.add(b(k).index(), b(k).epoch(), a(k).val());
          }
        },
        "dot");
    return T::recorded(s, idx, tp.epoch());
  } else {
    T s = constant<T>(0);
    for (std::size_t k = 0; k < n; ++k) s = T(s + a(k) * b(k));
    return s;
  }
}

#if ADX_WITH_BLAS
/// y (+)= op(M)[rows x cols] x with strides, through CBLAS (float or double). op(M) is M as
/// stored (row-major, row stride ld) or, if trans, its transpose.
template <class T>
void gemv(bool trans, std::size_t rows, std::size_t cols, T const* M, std::size_t ld, T const* x, std::size_t incx,
          T* y, std::size_t incy, bool accumulate) {
  // beta = 0 need not read y (reference BLAS), but not every GEMV kernel has kept to that:
  // y is zeroed first, so that whatever it held (it may be uninitialised) cannot leak in
  if (!accumulate)
    for (std::size_t i = 0; i < rows; ++i) y[i * incy] = T(0);
  // op(M) = M^T: M is stored cols x rows
  auto const t = trans ? CblasTrans : CblasNoTrans;
  auto const r = static_cast<blasint>(trans ? cols : rows), c = static_cast<blasint>(trans ? rows : cols);
  if constexpr (std::is_same_v<T, double>)
    cblas_dgemv(CblasRowMajor, t, r, c, 1.0, M, static_cast<blasint>(ld), x, static_cast<blasint>(incx),
                accumulate ? 1.0 : 0.0, y, static_cast<blasint>(incy));
  else
    cblas_sgemv(CblasRowMajor, t, r, c, 1.0f, M, static_cast<blasint>(ld), x, static_cast<blasint>(incx),
                accumulate ? 1.0f : 0.0f, y, static_cast<blasint>(incy));
}

/// gemm's product when C is one column (N == 1) or one row (M == 1).
template <class T>
void gemv_form(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T const* A, std::size_t lda,
               T const* B, std::size_t ldb, T* C, std::size_t ldc, bool accumulate) {
  if (N == 1) {  // C[:, 0] = op(A) b, b[k] = op(B)(k, 0)
    gemv(trans_a, M, K, A, lda, B, trans_b ? 1 : ldb, C, ldc, accumulate);
  } else {  // C[0, :] = op(B)^T a, a[k] = op(A)(0, k)
    gemv(!trans_b, N, K, B, ldb, A, trans_a ? lda : 1, C, 1, accumulate);
  }
}
#endif

/// C[M x N] (+)= op(A)[M x K] op(B)[K x N]; lda, ldb, ldc are the row strides of A, B, C as stored.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, T const* A, std::size_t lda,
          T const* B, std::size_t ldb, T* C, std::size_t ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
#if ADX_WITH_BLAS
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    if (K == 0) {
      if (!accumulate)
        for (std::size_t i = 0; i < M; ++i) std::fill_n(C + i * ldc, N, T(0));
      return;
    }
    if (N == 1 || M == 1) {  // a matrix-vector product: GEMV, which packs nothing
      gemv_form(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
      return;
    }
    auto const ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
    auto const m = static_cast<blasint>(M), n = static_cast<blasint>(N), k = static_cast<blasint>(K);
    if constexpr (std::is_same_v<T, double>)
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, A, static_cast<blasint>(lda), B, static_cast<blasint>(ldb),
                  accumulate ? 1.0 : 0.0, C, static_cast<blasint>(ldc));
    else
      cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, A, static_cast<blasint>(lda), B, static_cast<blasint>(ldb),
                  accumulate ? 1.0f : 0.0f, C, static_cast<blasint>(ldc));
    return;
  }
#endif
  mat_view<T> const a{A, lda, trans_a}, b{B, ldb, trans_b};
  if constexpr (std::is_arithmetic_v<T>) {
    // i-k-j order with blocks of K: unit-stride inner loop over C's row when B is not transposed
    constexpr std::size_t kb = 256;
    for (std::size_t i = 0; i < M; ++i) {
      T* c = C + i * ldc;
      if (!accumulate) std::fill_n(c, N, T(0));
      for (std::size_t k0 = 0; k0 < K; k0 += kb)
        for (std::size_t k = k0; k < std::min(K, k0 + kb); ++k) {
          T const aik = a(i, k);
          for (std::size_t j = 0; j < N; ++j) c[j] += aik * b(k, j);
        }
    }
  } else {
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        T const d = dot_n<T>(
            K, [&](std::size_t k) -> T const& { return a(i, k); }, [&](std::size_t k) -> T const& { return b(k, j); });
        T& c = C[i * ldc + j];
        c = accumulate ? T(c + d) : d;
      }
  }
}

}  // namespace adx::detail
