// SPDX-License-Identifier: MIT
// adx: the reduced QR factorization and least squares through it.
//
// Rules (A = Q R, m >= n; X = Q^T dA R^-1, Om = tril(X, -1) - tril(X, -1)^T):
//   forward  dR = (X - Om) R,  dQ = dA R^-1 - Q (X - Om)
//   reverse  M = Q^T gQ - gR R^T,  gA = (gQ + Q (tril(M - M^T, -1) - M)) R^-T
// A wide A = [A1 A2] (m < n) is A1 = Q R1 (square) and R2 = Q^T A2, composed.
#pragma once

#include <array>
#include <cstddef>

#include "adx/linalg/lapack.hpp"
#include "adx/linalg/op.hpp"
#include "adx/linalg/solve.hpp"
#include "adx/linalg/structure.hpp"
#include "adx/tensor/concat.hpp"

namespace adx {
namespace detail {

/// Y R^-1 for upper triangular R (right division), recorded for AD values.
template <class T>
tensor<T> right_divide_upper(tensor<T> const& Y, tensor<T> const& R, bool transposed) {
  // Z R = Y  <=>  R^T Z^T = Y^T;  Z R^T = Y  <=>  R Z^T = Y^T
  return mT(run_op(triangular_op{"linalg.qr", !transposed, false}, transposed ? R : mT(R), mT(Y))[0]);
}

/// Q R = A for m >= n (a wide A is composed by linalg::qr).
struct qr_op {
  static constexpr std::size_t inputs = 1, outputs = 2;
  char const* name = "linalg.qr";

  template <class T>
  op_result<T, 2> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], m = in[0].shape()[1], n = in[0].shape()[2], k = std::min(m, n);
    op_result<T, 2> r;
    r.out[0] = tensor<T>(shape{b, m, k});
    r.out[1] = tensor<T>(shape{b, k, n});
    for (std::size_t q = 0; q < b; ++q)
      lapack::qr(m, n, in[0].data() + q * m * n, r.out[0].data() + q * m * k, r.out[1].data() + q * k * n);
    return r;
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const&, std::array<tensor<T>, 2> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 2> const& g,
                                   std::array<bool, 1> const&) const {
    auto const& Q = out[0];
    auto const& R = out[1];
    tensor<T> const M = matmul(mT(Q), g[0]) - matmul(g[1], mT(R));
    tensor<T> const N = triangle(tensor<T>(M - mT(M)), true, -1) - M;
    return {right_divide_upper(tensor<T>(g[0] + matmul(Q, N)), R, true)};
  }
  template <class T>
  std::array<tensor<T>, 2> tangent(std::array<tensor<T>, 1> const&, std::array<tensor<T>, 2> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& d) const {
    auto const& Q = out[0];
    auto const& R = out[1];
    tensor<T> const dAR = right_divide_upper(d[0], R, false);  // dA R^-1
    tensor<T> const X = matmul(mT(Q), dAR);
    tensor<T> const lo = triangle(X, true, -1);
    tensor<T> const Y = X - (lo - mT(lo));  // X - Om
    return {tensor<T>(dAR - matmul(Q, Y)), matmul(Y, R)};
  }
};

}  // namespace detail

namespace linalg {

/// The reduced QR factorization of each matrix (torch.linalg.qr, mode "reduced"): {Q, R} with
/// Q [m, k] of orthonormal columns and R [k, n] upper triangular, k = min(m, n); LAPACK's signs
/// (R's diagonal may be negative). Differentiable where the leading k columns have full rank.
template <class X>
auto qr(X const& x) {
  auto const A = eval(x);
  using S = typename decltype(A)::value_type;
  auto const mb = detail::as_matrices("linalg.qr", A);
  std::size_t const m = mb.rows(), n = mb.cols(), k = std::min(m, n);
  if (m >= n || level_v<S> == 0) {
    auto r = detail::run_op(detail::qr_op{}, mb.t);
    return std::array<tensor<S>, 2>{r[0].reshape(detail::with_batch(mb.batch, {m, k})),
                                    r[1].reshape(detail::with_batch(mb.batch, {k, n}))};
  }
  auto const A1 = mb.t.slice(2, 0, static_cast<long>(m)),
             A2 = mb.t.slice(2, static_cast<long>(m), static_cast<long>(n));
  auto r = detail::run_op(detail::qr_op{}, A1);
  tensor<S> const R2 = matmul(detail::mT(r[0]), A2);
  tensor<S> const R = concat({r[1], R2}, 2);
  return std::array<tensor<S>, 2>{r[0].reshape(detail::with_batch(mb.batch, {m, k})),
                                  R.reshape(detail::with_batch(mb.batch, {k, n}))};
}

/// The least-squares solution of A X = B for A of full rank (torch.linalg.lstsq(A, B).solution):
/// argmin ||A X - B|| for m >= n, the minimum-norm solution for m < n; through QR. B is a matrix
/// or a batch (a vector for a single A); batch axes broadcast.
template <class XA, class XB>
auto lstsq(XA const& a, XB const& b) {
  auto const [As, Bs] = detail::meet_operands(a, b);
  using S = typename std::remove_cvref_t<decltype(As)>::value_type;
  if (As.rank() < 2)
    detail::throw_shape_error("linalg.lstsq", "needs A to be a matrix or a batch", As.shape(), Bs.shape());
  bool const vector = Bs.rank() == 1 && As.rank() == 2;
  tensor<S> const B = vector ? Bs.reshape(shape{Bs.size(), 1}) : Bs;
  std::size_t const m = As.shape()[As.rank() - 2], n = As.shape()[As.rank() - 1];
  if (B.rank() < 2 || B.shape()[B.rank() - 2] != m)
    detail::throw_shape_error("linalg.lstsq", "B must have as many rows as A", As.shape(), Bs.shape());
  // the batch axes broadcast, then flattened: one rank-3 batch for the products
  shape const batch =
      broadcast_shapes(detail::leading_axes(As.shape(), 2), detail::leading_axes(B.shape(), 2), "linalg.lstsq");
  tensor<S> const A3 = detail::as_matrices("linalg.lstsq", detail::expand_batch(As, batch)).t;
  tensor<S> const B3 = detail::as_matrices("linalg.lstsq", detail::expand_batch(B, batch)).t;
  tensor<S> X;
  if (m >= n) {
    auto const [Q, R] = qr(A3);
    X = solve_triangular(R, tensor<S>(matmul(detail::mT(Q), B3)), true);
  } else {  // A^T = Q R: X = Q R^-T B
    auto const [Q, R] = qr(detail::mT(A3));
    X = matmul(Q, solve_triangular(detail::mT(R), B3, false));
  }
  X = X.reshape(detail::with_batch(batch, {n, B.shape()[B.rank() - 1]}));
  return vector ? X.reshape(shape{X.size()}) : X;
}

}  // namespace linalg
}  // namespace adx
