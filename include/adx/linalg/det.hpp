// SPDX-License-Identifier: MIT
// adx: determinants. det, slogdet and logdet from one LU factorization, each one tape node.
//
// Rules:
//   det        reverse  gA = g cof(A)          forward  dd = sum(cof(A) * dA)
//   slogdet    reverse  gA = g A^-T            forward  dl = sum(A^-T * dA)   (sign: constant)
// cof(A), the cofactor matrix, is det(A) A^-T where A is invertible; where A is singular (a
// pivot below n * eps * the largest), it is made of the (n-1) x (n-1) minors' determinants,
// one batched det, so the gradient there is the true one (the polynomial's) and so are the
// derivatives of every order after it. torch 1.13 gives zeros there without create_graph.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "adx/linalg/lapack.hpp"
#include "adx/linalg/op.hpp"
#include "adx/linalg/solve.hpp"
#include "adx/linalg/structure.hpp"
#include "adx/tensor/linalg.hpp"

namespace adx {
namespace detail {

/// The sign of the row permutation of LU's pivots for one matrix.
inline int permutation_sign(int const* piv, std::size_t n) {
  int s = 1;
  for (std::size_t i = 0; i < n; ++i)
    if (piv[i] != static_cast<int>(i)) s = -s;
  return s;
}

/// Which matrices of the batch are singular as far as their numbers tell: a pivot of the LU
/// factorization at most n * eps times the largest one. Over numbers the forward pass's factors
/// (kept) are read; AD values factor their numbers.
template <class T>
std::vector<bool> numerically_singular(tensor<T> const& A, kept_factors<T> const& kept) {
  using N = std::remove_cvref_t<decltype(primal(std::declval<T>()))>;
  std::size_t const b = A.shape()[0], n = A.shape()[1];
  tensor<N> const lu = [&] {
    if constexpr (level_v<T> == 0)
      return kept.empty() ? factor_lu(A).kept.factors[0] : kept.factors[0];
    else
      return factor_lu(tensor<N>::generate(A.shape(), [&](std::size_t i) { return primal(A.data()[i]); }))
          .kept.factors[0];
  }();
  std::vector<bool> singular(b, false);
  for (std::size_t q = 0; q < b; ++q) {
    N lo = std::numeric_limits<N>::infinity(), hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
      N const u = std::abs(lu.data()[q * n * n + i * (n + 1)]);
      lo = std::min(lo, u), hi = std::max(hi, u);
    }
    singular[q] = n > 0 && !(lo > N(n) * std::numeric_limits<N>::epsilon() * hi);
  }
  return singular;
}

/// A^-T for a batch, from kept LU factors (numbers) or a recorded solve (AD values).
template <class T>
tensor<T> inverse_transposed(tensor<T> const& A, kept_factors<T> const& kept);

struct det_op {
  static constexpr std::size_t inputs = 1, outputs = 1;
  char const* name = "linalg.det";

  template <class T>
  op_result<T, 1> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], n = in[0].shape()[1];
    op_result<T, 1> r;
    r.kept = factor_lu(in[0]).kept;
    r.out[0] = tensor<T>::generate(shape{b}, [&](std::size_t q) {
      T d = T(permutation_sign(r.kept.pivots.data() + q * n, n));
      for (std::size_t i = 0; i < n; ++i) d *= std::as_const(r.kept.factors[0]).data()[q * n * n + i * (n + 1)];
      return d;
    });
    return r;
  }
  /// The cofactor matrices, [b, n, n]: det A^-T, or, for a singular matrix of the batch, the
  /// (n-1) x (n-1) minors' determinants (a batched det for each row of cofactors: memory
  /// O(n^3), time O(n^5), for those matrices only).
  template <class T>
  tensor<T> cofactors(tensor<T> const& A, tensor<T> const& d, kept_factors<T> const& kept) const {
    std::size_t const b = A.shape()[0], n = A.shape()[1];
    if (n == 0) return A;
    std::vector<bool> const singular = numerically_singular(A, kept);
    if (std::none_of(singular.begin(), singular.end(), [](bool v) { return v; }))
      return tensor<T>(inverse_transposed(A, kept) * d.reshape(shape{b, 1, 1}));
    // det A^-T of the invertible matrices only: over AD values a singular one's inf would reach
    // the gradient through the recorded inverse (0 * inf)
    std::size_t const nn = n * n, m = n - 1;
    T const* a = A.data();
    std::vector<std::size_t> invertible, slot(b);
    for (std::size_t q = 0; q < b; ++q)
      if (!singular[q]) slot[q] = invertible.size(), invertible.push_back(q);
    tensor<T> regular;
    if (!invertible.empty()) {
      std::size_t const r = invertible.size();
      tensor<T> const subA = tensor<T>::generate(
          shape{r, n, n}, [&](std::size_t e) -> T const& { return a[invertible[e / nn] * nn + e % nn]; });
      tensor<T> const subd =
          tensor<T>::generate(shape{r, 1, 1}, [&](std::size_t e) -> T const& { return d.data()[invertible[e]]; });
      regular = inverse_transposed(subA, r == b ? kept : kept_factors<T>{}) * subd;
    }
    std::vector<tensor<T>> rows(b * n);  // rows[q n + i]: cofactors (i, 0..n-1) of a singular A[q]
    for (std::size_t q = 0; q < b; ++q)
      for (std::size_t i = 0; singular[q] && m > 0 && i < n; ++i) {
        tensor<T> const minors = tensor<T>::generate(shape{n, m, m}, [&](std::size_t e) -> T const& {
          std::size_t const j = e / (m * m), r = (e / m) % m, c = e % m;
          return a[q * n * n + (r + (r >= i)) * n + (c + (c >= j))];
        });
        rows[q * n + i] = run_op(*this, minors)[0];
      }
    return tensor<T>::generate(A.shape(), [&](std::size_t e) {
      std::size_t const q = e / nn, i = (e / n) % n, j = e % n;
      if (!singular[q]) return regular.data()[slot[q] * nn + e % nn];
      if (m == 0) return T(1);
      T const& c = rows[q * n + i].data()[j];
      return (i + j) % 2 ? T(-c) : c;
    });
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 1> const& g,
                                   std::array<bool, 1> const&) const {
    std::size_t const b = in[0].shape()[0];
    return {tensor<T>(cofactors(in[0], out[0], kept) * g[0].reshape(shape{b, 1, 1}))};
  }
  template <class T>
  std::array<tensor<T>, 1> tangent(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 1> const& d) const {
    std::size_t const b = in[0].shape()[0];
    return {tensor<T>(sum(
        tensor<T>(cofactors(in[0], out[0], kept) * d[0]).reshape(shape{b, in[0].size() / std::max<std::size_t>(b, 1)}),
        -1))};
  }
};

/// (sign, log |det|) of each matrix.
struct slogdet_op {
  static constexpr std::size_t inputs = 1, outputs = 2;
  char const* name = "linalg.slogdet";

  template <class T>
  op_result<T, 2> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], n = in[0].shape()[1];
    op_result<T, 2> r;
    r.kept = factor_lu(in[0]).kept;
    r.out[0] = tensor<T>(shape{b});
    r.out[1] = tensor<T>(shape{b});
    for (std::size_t q = 0; q < b; ++q) {
      T s = T(permutation_sign(r.kept.pivots.data() + q * n, n)), l = 0;
      for (std::size_t i = 0; i < n; ++i) {
        T const u = std::as_const(r.kept.factors[0]).data()[q * n * n + i * (n + 1)];
        s = u < 0 ? T(-s) : u > 0 ? s : u == 0 ? T(0) : u;  // NaN stays NaN
        l += std::log(std::abs(u));
      }
      r.out[0].data()[q] = s;
      r.out[1].data()[q] = s == 0 ? -std::numeric_limits<T>::infinity() : l;
    }
    return r;
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 2> const&,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 2> const& g,
                                   std::array<bool, 1> const&) const {
    std::size_t const b = in[0].shape()[0];
    return {tensor<T>(inverse_transposed(in[0], kept) * g[1].reshape(shape{b, 1, 1}))};
  }
  template <class T>
  std::array<tensor<T>, 2> tangent(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 2> const&,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 1> const& d) const {
    std::size_t const b = in[0].shape()[0];
    tensor<T> const p = inverse_transposed(in[0], kept) * d[0];
    return {tensor<T>(shape{b}, T(0)), tensor<T>(sum(p.reshape(shape{b, p.size() / std::max<std::size_t>(b, 1)}), -1))};
  }
};

template <class T>
tensor<T> inverse_transposed(tensor<T> const& A, kept_factors<T> const& kept) {
  std::size_t const b = A.shape()[0], n = A.shape()[1];
  if constexpr (level_v<T> != 0) {
    (void)kept;
    return run_op(solve_op{"linalg.inv", {}, false}, mT(A), identities<T>(b, n))[0];  // inf and NaN where A is singular
  } else {
    kept_factors<T> const fresh = kept.empty() ? factor_lu(A).kept : kept_factors<T>{};
    kept_factors<T> const& lu = kept.empty() ? fresh : kept;
    return tensor<T>::fill(A.shape(), [&](T* y) {
      for (std::size_t q = 0; q < b; ++q)
        lapack::lu_inverse_transposed(n, lu.factors[0].data() + q * n * n, lu.pivots.data() + q * n, y + q * n * n);
    });
  }
}

}  // namespace detail

namespace linalg {

/// The determinant of each square matrix (torch.linalg.det): a rank-0 tensor for one matrix, one
/// per matrix of a batch. Its gradient is the cofactor matrix, at a singular matrix too.
template <class X>
auto det(X const& x) {
  auto const A = eval(x);
  auto const m = detail::as_matrices("linalg.det", A, true);
  return detail::run_op(detail::det_op{}, m.t)[0].reshape(m.batch);
}

/// The sign and the log of the absolute value of each determinant (torch.linalg.slogdet):
/// {sign, logabsdet}; a singular matrix gives sign 0 and logabsdet -inf. The sign is a constant
/// (its derivative is zero); logabsdet's gradient is A^-T.
template <class X>
auto slogdet(X const& x) {
  auto const A = eval(x);
  auto const m = detail::as_matrices("linalg.slogdet", A, true);
  auto r = detail::run_op(detail::slogdet_op{}, m.t);
  using S = typename decltype(A)::value_type;
  return std::array<tensor<S>, 2>{r[0].reshape(m.batch), r[1].reshape(m.batch)};
}

/// log det A (torch.logdet): logabsdet where the determinant is positive, -inf where it is 0
/// and NaN where it is negative (its gradient NaN there too).
template <class X>
auto logdet(X const& x) {
  auto const sl = slogdet(x);
  auto const& sign = sl[0];
  auto const& logabs = sl[1];
  // logabsdet times 1 where the determinant is positive or 0 (-inf), times NaN where it is
  // negative: the value and its gradient are NaN there
  using S = typename std::remove_cvref_t<decltype(logabs)>::value_type;
  using N = std::remove_cvref_t<decltype(primal(std::declval<S>()))>;
  tensor<N> const f = tensor<N>::generate(sign.shape(), [&](std::size_t i) {
    return primal(sign.data()[i]) < 0 ? std::numeric_limits<N>::quiet_NaN() : N(1);
  });
  return tensor<S>(logabs * f);
}

}  // namespace linalg
}  // namespace adx
