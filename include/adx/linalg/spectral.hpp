// SPDX-License-Identifier: MIT
// adx: symmetric eigendecomposition, singular values and the matrix norms built on them.
//
// Rules (A symmetric, A = V diag(w) V^T; F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it):
//   eigh      reverse  gA = sym(V (diag(gw) + F * (V^T gV)) V^T)
//             forward  P = V^T sym(dA) V, dw = diag(P), dV = V (F * P)
//   svdvals   reverse  gA = U diag(gs) V^T    forward  ds = diag(U^T dA V)
// eigh reads A's lower triangle (torch's UPLO = "L") and gives the symmetric gradient, as
// cholesky does. Where only the eigenvalues are used (gV zero), the F term is skipped: the
// gradient then exists at repeated eigenvalues too, when the weights agree on the cluster.
// Eigenvector derivatives at a repeated eigenvalue are infinite, as torch's.
// svdvals' rule over AD values takes U and V from the eigendecomposition of A^T A (or A A^T),
// which is differentiable; its numbers come from the SVD.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "adx/linalg/lapack.hpp"
#include "adx/linalg/op.hpp"
#include "adx/linalg/structure.hpp"
#include "adx/tensor/linalg.hpp"
#include "adx/tensor/reduce.hpp"

namespace adx {
namespace detail {

/// Whether x is a constant zero at every level (a var's adjoint that nothing reached).
template <class T>
bool is_constant_zero(T const& x) {
  if constexpr (level_v<T> == 0)
    return x == T(0);
  else if constexpr (is_reverse_v<T>)
    return x.index() == 0 && is_constant_zero(x.val());
  else
    return is_constant_zero(x.val()) && is_constant_zero(x.tangent());
}

template <class T>
bool all_constant_zero(tensor<T> const& t) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!is_constant_zero(t.data()[i])) return false;
  return true;
}

/// F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it, for a batch of eigenvalue vectors.
template <class T>
tensor<T> eigen_gaps(tensor<T> const& w) {
  std::size_t const b = w.shape()[0], n = w.shape()[1];
  tensor<double> const I = identities<double>(1, n);
  tensor<T> const E = w.reshape(shape{b, 1, n}) - w.reshape(shape{b, n, 1}) + I;
  return tensor<T>((1.0 / E) * (1.0 - I));
}

struct eigh_op {
  static constexpr std::size_t inputs = 1, outputs = 2;
  char const* name = "linalg.eigh";

  template <class T>
  op_result<T, 2> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], n = in[0].shape()[1];
    op_result<T, 2> r;
    r.out[0] = tensor<T>(shape{b, n});
    r.out[1] = tensor<T>(shape{b, n, n});
    for (std::size_t q = 0; q < b; ++q)
      if (std::size_t const info = lapack::symmetric_eigen(n, in[0].data() + q * n * n, r.out[0].data() + q * n,
                                                           r.out[1].data() + q * n * n))
        throw linalg_error(std::string("adx: ") + name + ": the eigenvalue algorithm did not converge (" +
                           std::to_string(info) + " off-diagonal elements did not converge; batch element " +
                           std::to_string(q) + ")");
    return r;
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const&, std::array<tensor<T>, 2> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 2> const& g,
                                   std::array<bool, 1> const&) const {
    auto const& w = out[0];
    auto const& V = out[1];
    tensor<T> inner = diag_matrices(g[0]);
    if (!all_constant_zero(g[1])) inner = inner + eigen_gaps(w) * matmul(mT(V), g[1]);
    return {symmetric_part(tensor<T>(matmul(matmul(V, inner), mT(V))))};
  }
  template <class T>
  std::array<tensor<T>, 2> tangent(std::array<tensor<T>, 1> const&, std::array<tensor<T>, 2> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& d) const {
    auto const& w = out[0];
    auto const& V = out[1];
    tensor<T> const P = matmul(matmul(mT(V), symmetric_part(d[0])), V);
    return {diagonal_named(name, P), matmul(V, tensor<T>(eigen_gaps(w) * P))};
  }
};

/// Columns (or, rows = true, rows) of each matrix in reverse order; elements move.
template <class T>
tensor<T> reversed(tensor<T> const& x, bool rows) {
  std::size_t const r = x.shape()[1], c = x.shape()[2];
  T const* src = x.data();
  return tensor<T>::generate(x.shape(), [&](std::size_t e) -> T const& {
    std::size_t const q = e / (r * c), i = (e / c) % r, j = e % c;
    return rows ? src[q * r * c + (r - 1 - i) * c + j] : src[q * r * c + i * c + (c - 1 - j)];
  });
}

struct svdvals_op {
  static constexpr std::size_t inputs = 1, outputs = 1;
  char const* name = "linalg.svdvals";

  template <class T>
  op_result<T, 1> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], m = in[0].shape()[1], n = in[0].shape()[2], k = std::min(m, n);
    op_result<T, 1> r;
    r.out[0] = tensor<T>(shape{b, k});
    tensor<T> U(shape{b, m, k}), Vt(shape{b, k, n});
    for (std::size_t q = 0; q < b; ++q)
      if (std::size_t const info = lapack::svd(m, n, in[0].data() + q * m * n, r.out[0].data() + q * k,
                                               U.data() + q * m * k, Vt.data() + q * k * n))
        throw linalg_error(std::string("adx: ") + name + ": the SVD did not converge (" + std::to_string(info) +
                           " superdiagonals did not converge; batch element " + std::to_string(q) + ")");
    r.kept.factors = {std::move(U), std::move(Vt)};
    return r;
  }
  /// U and V^T of A's thin SVD: kept (numbers), or from eigh of A^T A / A A^T (AD values).
  template <class T>
  static std::array<tensor<T>, 2> vectors(tensor<T> const& A, tensor<T> const& s, kept_factors<T> const& kept) {
    if constexpr (level_v<T> == 0) {
      (void)A, (void)s;
      return {kept.factors[0], kept.factors[1]};
    } else {
      // The singular vectors of the numbers (the SVD) fix the signs and the null directions; W,
      // the eigenvectors of A^T A (A A^T when wide), carries the derivatives. The other side is
      // A W / s where s is well above 0, and the numbers' vectors (constants) where it is not.
      using N = std::remove_cvref_t<decltype(primal(std::declval<T>()))>;
      std::size_t const b = A.shape()[0], m = A.shape()[1], n = A.shape()[2], k = std::min(m, n);
      bool const tall = m >= n;
      tensor<N> const A0 = tensor<N>::generate(A.shape(), [&](std::size_t i) { return N(primal(A.data()[i])); });
      op_result<N, 1> const num = svdvals_op{}.compute(std::array<tensor<N>, 1>{A0});
      tensor<N> const U0 = num.kept.factors[0], V0 = mT(num.kept.factors[1]);
      tensor<T> const G = tall ? tensor<T>(matmul(mT(A), A)) : tensor<T>(matmul(A, mT(A)));
      tensor<T> W = reversed(run_op(eigh_op{}, G)[1], false);  // descending, as s
      tensor<N> const& ref = tall ? V0 : U0;
      tensor<N> const sign = tensor<N>::generate(shape{b, 1, k}, [&](std::size_t e) {
        std::size_t const q = e / k, j = e % k, p = W.shape()[1];
        N d = 0;
        for (std::size_t i = 0; i < p; ++i)
          d += N(primal(W.data()[(q * p + i) * k + j])) * ref.data()[(q * p + i) * k + j];
        return d < 0 ? N(-1) : N(1);
      });
      W = W * sign;
      tensor<N> const big = tensor<N>::generate(shape{b, 1, k}, [&](std::size_t e) {
        N const s_max = k ? num.out[0].data()[(e / k) * k] : N(0);
        return num.out[0].data()[e] > s_max * N(std::max(m, n)) * std::numeric_limits<N>::epsilon() ? N(1) : N(0);
      });
      tensor<T> const s_safe = s.reshape(shape{b, 1, k}) * big + (N(1) - big);
      tensor<T> const other = (tall ? tensor<T>(matmul(A, W)) : tensor<T>(matmul(mT(A), W))) / s_safe * big +
                              (tall ? U0 : V0) * (N(1) - big);
      if (tall) return {other, mT(W)};  // U = A V / s
      return {W, mT(other)};            // V = A^T U / s
    }
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 1> const& g,
                                   std::array<bool, 1> const&) const {
    auto const [U, Vt] = vectors(in[0], out[0], kept);
    std::size_t const b = g[0].shape()[0], k = g[0].shape()[1];
    return {matmul(tensor<T>(U * g[0].reshape(shape{b, 1, k})), Vt)};
  }
  template <class T>
  std::array<tensor<T>, 1> tangent(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 1> const& d) const {
    auto const [U, Vt] = vectors(in[0], out[0], kept);
    return {diagonal_named(name, tensor<T>(matmul(matmul(mT(U), d[0]), mT(Vt))))};
  }
};

}  // namespace detail

namespace linalg {

/// The eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix, as
/// {w, V} (torch.linalg.eigh with UPLO = "L": only the lower triangle is read). The gradient
/// is symmetric; eigenvectors are determined up to sign, so a differentiated function should
/// not depend on the sign (V diag(f(w)) V^T, projectors).
template <class X>
auto eigh(X const& x) {
  auto const A = eval(x);
  using S = typename decltype(A)::value_type;
  auto const m = detail::as_matrices("linalg.eigh", A, true);
  auto r = detail::run_op(detail::eigh_op{}, m.t);
  return std::array<tensor<S>, 2>{r[0].reshape(detail::with_batch(m.batch, {m.rows()})), r[1].reshape(A.shape())};
}

/// The eigenvalues (ascending) of each symmetric matrix (torch.linalg.eigvalsh); differentiable
/// at repeated eigenvalues where the function of them is (equal weights on the cluster).
template <class X>
auto eigvalsh(X const& x) {
  return eigh(x)[0];
}

/// The singular values (descending) of each matrix (torch.linalg.svdvals).
template <class X>
auto svdvals(X const& x) {
  auto const A = eval(x);
  auto const m = detail::as_matrices("linalg.svdvals", A);
  return detail::run_op(detail::svdvals_op{}, m.t)[0].reshape(
      detail::with_batch(m.batch, {std::min(m.rows(), m.cols())}));
}

/// A matrix norm of each matrix (torch.linalg.matrix_norm): "fro" (Frobenius) or "nuc" (the sum
/// of the singular values).
template <class X>
auto matrix_norm(X const& x, std::string_view ord = "fro") {
  auto const A = eval(x);
  using S = typename decltype(A)::value_type;
  static_assert(detail::floating_elements<S>, "adx: linalg.matrix_norm needs floating-point elements");
  auto const m = detail::as_matrices("linalg.matrix_norm", A);
  if (ord == "fro")
    return tensor<S>(adx::norm(m.t.reshape(shape{m.count(), m.rows() * m.cols()}), -1)).reshape(m.batch);
  if (ord == "nuc") return tensor<S>(sum(svdvals(m.t), -1)).reshape(m.batch);
  throw value_error(
      "adx: linalg.matrix_norm: ord must be \"fro\", \"nuc\" or a number in {2, -2, 1, -1, inf, -inf}, not \"" +
      std::string(ord) + "\"");
}

/// A matrix norm of each matrix (torch.linalg.matrix_norm with a number): 2 (the largest
/// singular value), -2 (the smallest), 1 / -1 (the largest / smallest absolute column sum),
/// inf / -inf (the largest / smallest absolute row sum). Tied extremes share the gradient
/// (amax / amin), as torch's.
template <class X>
auto matrix_norm(X const& x, double ord) {
  auto const A = eval(x);
  using S = typename decltype(A)::value_type;
  static_assert(detail::floating_elements<S>, "adx: linalg.matrix_norm needs floating-point elements");
  auto const m = detail::as_matrices("linalg.matrix_norm", A);
  double const inf = std::numeric_limits<double>::infinity();
  if (ord == 2 || ord == -2) {
    auto const s = svdvals(m.t);
    return tensor<S>(ord > 0 ? amax(s, -1) : amin(s, -1)).reshape(m.batch);
  }
  if (ord == 1 || ord == -1 || ord == inf || ord == -inf) {
    tensor<S> const sums = sum(abs(m.t), std::abs(ord) == 1 ? 1 : 2);
    return tensor<S>(ord > 0 ? amax(sums, -1) : amin(sums, -1)).reshape(m.batch);
  }
  throw value_error("adx: linalg.matrix_norm: ord must be 2, -2, 1, -1, inf or -inf (or \"fro\", \"nuc\"), not " +
                    std::to_string(ord));
}

/// torch.linalg.norm without dim: the 2-norm of all the elements (the Frobenius norm of a
/// matrix, the Euclidean norm of a vector); its gradient at 0 is 0, as torch's.
template <class X>
auto norm(X const& x) {
  auto const t = eval(x);
  using S = typename decltype(t)::value_type;
  static_assert(detail::floating_elements<S>, "adx: linalg.norm needs floating-point elements");
  return tensor<S>::scalar(S(adx::norm(t)));
}

/// torch.linalg.norm with a matrix ord, "fro" or "nuc", of each matrix (matrix_norm).
template <class X>
auto norm(X const& x, std::string_view ord) {
  return matrix_norm(x, ord);
}

/// torch.linalg.norm with a number ord: of a vector, sum(|x|^ord)^(1/ord) (inf: max |x|, -inf:
/// min |x|, ties sharing the gradient; 0: the number of non-zero elements, a constant); of each
/// matrix of a rank-2 or higher tensor, matrix_norm(x, ord). At x = 0 the gradient is 0 for
/// ord > 0, as torch's.
template <class X>
auto norm(X const& x, double ord) {
  auto const t = eval(x);
  using S = typename decltype(t)::value_type;
  static_assert(detail::floating_elements<S>, "adx: linalg.norm needs floating-point elements");
  if (t.rank() >= 2) return matrix_norm(t, ord);
  if (t.rank() != 1) detail::throw_shape_error("linalg.norm", "needs a vector or a matrix", t.shape());
  if (std::isnan(ord)) throw value_error("adx: linalg.norm: ord is NaN");
  double const inf = std::numeric_limits<double>::infinity();
  if (ord == inf) return tensor<S>::scalar(S(amax(abs(t))));
  if (ord == -inf) return tensor<S>::scalar(S(amin(abs(t))));
  if (ord == 0) {
    double count = 0;
    for (std::size_t i = 0; i < t.size(); ++i) count += primal(t.data()[i]) != 0;
    return tensor<S>::scalar(detail::to_value<S>(count));
  }
  if (ord == 2) return norm(t);
  if (ord == 1) return tensor<S>::scalar(S(sum(abs(t))));
  bool zero = ord > 0;  // the p-norm of 0: 0 with the zero gradient (the formula's is 0 * inf)
  for (std::size_t i = 0; zero && i < t.size(); ++i) zero = primal(t.data()[i]) == 0;
  if (zero) return tensor<S>::scalar(S(sum(abs(t)) * 0.0));
  using adx::pow;
  using std::pow;
  return tensor<S>::scalar(S(pow(S(sum(pow(abs(t), ord))), 1.0 / ord)));
}

}  // namespace linalg
}  // namespace adx
