// SPDX-License-Identifier: MIT
// adx: the matrix exponential, by scaling and squaring with the [13/13] Pade approximant
// (Higham 2005; expm's classic form), one tape node per call.
//
// Rules, from the exponential of a block triangular matrix (its upper right block is the
// Frechet derivative):
//   forward  dE = exp([[A, dA], [0, A]])[:n, n:]
//   reverse  gA = exp([[A^T, gE], [0, A^T]])[:n, n:]
// Both call matrix_exp itself, so the rules nest to every order.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "adx/linalg/lapack.hpp"
#include "adx/linalg/op.hpp"
#include "adx/linalg/structure.hpp"
#include "adx/tensor/gemm.hpp"

namespace adx {
namespace detail {

/// exp(A) of one n x n matrix of numbers into e.
template <class T>
void pade_exp(std::size_t n, T const* a, T* e) {
  // b_k of the [13/13] Pade approximant; theta_13: the largest 1-norm it takes unscaled
  static constexpr double b[] = {64764752532480000.0,
                                 32382376266240000.0,
                                 7771770303897600.0,
                                 1187353796428800.0,
                                 129060195264000.0,
                                 10559470521600.0,
                                 670442572800.0,
                                 33522128640.0,
                                 1323241920.0,
                                 40840800.0,
                                 960960.0,
                                 16380.0,
                                 182.0,
                                 1.0};
  double constexpr theta13 = 5.371920351148152;
  std::size_t const nn = n * n;
  T norm = 0;
  for (std::size_t j = 0; j < n; ++j) {
    T c = 0;
    for (std::size_t i = 0; i < n; ++i) c += std::abs(a[i * n + j]);
    norm = std::max(norm, c);
  }
  if (!std::isfinite(norm)) {  // inf or NaN in, NaN out (the scaling below needs a finite norm)
    std::fill_n(e, nn, std::numeric_limits<T>::quiet_NaN());
    return;
  }
  int const s = norm > T(theta13) ? static_cast<int>(std::ceil(std::log2(static_cast<double>(norm) / theta13))) : 0;
  T const scale = std::ldexp(T(1), -s);
  std::vector<T> A(nn), A2(nn), A4(nn), A6(nn), U(nn), V(nn), t(nn);
  for (std::size_t i = 0; i < nn; ++i) A[i] = a[i] * scale;
  auto mul = [n](T const* x, T const* y, T* out) { gemm<T>(false, false, n, n, n, x, n, y, n, out, n, false); };
  mul(A.data(), A.data(), A2.data());
  mul(A2.data(), A2.data(), A4.data());
  mul(A2.data(), A4.data(), A6.data());
  auto eye = [n](std::size_t i) { return i / n == i % n ? T(1) : T(0); };
  // U = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I)
  for (std::size_t i = 0; i < nn; ++i) t[i] = T(b[13]) * A6[i] + T(b[11]) * A4[i] + T(b[9]) * A2[i];
  mul(A6.data(), t.data(), U.data());
  for (std::size_t i = 0; i < nn; ++i) U[i] += T(b[7]) * A6[i] + T(b[5]) * A4[i] + T(b[3]) * A2[i] + T(b[1]) * eye(i);
  mul(A.data(), U.data(), t.data());
  std::swap(U, t);
  // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
  for (std::size_t i = 0; i < nn; ++i) t[i] = T(b[12]) * A6[i] + T(b[10]) * A4[i] + T(b[8]) * A2[i];
  mul(A6.data(), t.data(), V.data());
  for (std::size_t i = 0; i < nn; ++i) V[i] += T(b[6]) * A6[i] + T(b[4]) * A4[i] + T(b[2]) * A2[i] + T(b[0]) * eye(i);
  // exp(A) ~ (V - U)^-1 (V + U), then squared s times
  std::vector<int> piv(n);
  for (std::size_t i = 0; i < nn; ++i) t[i] = V[i] - U[i], e[i] = V[i] + U[i];
  lapack::lu_factor(n, t.data(), piv.data());
  lapack::lu_solve(false, n, n, t.data(), piv.data(), e);
  for (int k = 0; k < s; ++k) {
    mul(e, e, t.data());
    std::copy(t.begin(), t.end(), e);
  }
}

/// [[X, Y], [0, X]] for batches of n x n X and Y (elements move).
template <class T>
tensor<T> block_upper(tensor<T> const& X, tensor<T> const& Y) {
  std::size_t const b = X.shape()[0], n = X.shape()[1], m = 2 * n;
  T const* x = X.data();
  T const* y = Y.data();
  return tensor<T>::generate(shape{b, m, m}, [&](std::size_t e) {
    std::size_t const q = e / (m * m), i = (e / m) % m, j = e % m;
    if (i >= n) return j >= n ? x[q * n * n + (i - n) * n + (j - n)] : T{};
    return j < n ? x[q * n * n + i * n + j] : y[q * n * n + i * n + (j - n)];
  });
}

/// The upper right n x n blocks of a batch of 2n x 2n matrices.
template <class T>
tensor<T> upper_right(tensor<T> const& Z) {
  std::size_t const b = Z.shape()[0], m = Z.shape()[1], n = m / 2;
  T const* z = Z.data();
  return tensor<T>::generate(shape{b, n, n}, [&](std::size_t e) -> T const& {
    std::size_t const q = e / (n * n), i = (e / n) % n, j = e % n;
    return z[q * m * m + i * m + n + j];
  });
}

struct matrix_exp_op {
  static constexpr std::size_t inputs = 1, outputs = 1;
  char const* name = "linalg.matrix_exp";

  template <class T>
  op_result<T, 1> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], n = in[0].shape()[1];
    op_result<T, 1> r;
    r.out[0] = tensor<T>(in[0].shape());
    for (std::size_t q = 0; q < b; ++q) pade_exp(n, in[0].data() + q * n * n, r.out[0].data() + q * n * n);
    return r;
  }
  /// L(X, Y), the Frechet derivative of exp at X in the direction Y, batch by batch. It is linear
  /// in Y: Y is scaled to a largest element of 1 first (a constant), so that the scaling and
  /// squaring is chosen for X, not for Y's size.
  template <class T>
  tensor<T> frechet(tensor<T> const& X, tensor<T> const& Y) const {
    using N = std::remove_cvref_t<decltype(primal(std::declval<T>()))>;
    N c = 0;
    for (std::size_t i = 0; i < Y.size(); ++i) c = std::max(c, N(std::abs(primal(Y.data()[i]))));
    if (!(c > 0) || !std::isfinite(c)) c = 1;
    return tensor<T>(upper_right(run_op(*this, block_upper(X, tensor<T>(Y * (N(1) / c))))[0]) * c);
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 1> const&,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& g,
                                   std::array<bool, 1> const&) const {
    return {frechet(mT(in[0]), g[0])};
  }
  template <class T>
  std::array<tensor<T>, 1> tangent(std::array<tensor<T>, 1> const& in, std::array<tensor<T>, 1> const&,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& d) const {
    return {frechet(in[0], d[0])};
  }
};

}  // namespace detail

namespace linalg {

/// The exponential of each square matrix (torch.linalg.matrix_exp).
template <class X>
auto matrix_exp(X const& x) {
  auto const A = eval(x);
  auto const m = detail::as_matrices("linalg.matrix_exp", A, true);
  return detail::run_op(detail::matrix_exp_op{}, m.t)[0].reshape(A.shape());
}

}  // namespace linalg
}  // namespace adx
