// SPDX-License-Identifier: MIT
// adx: linear systems. solve and inv (LU with partial pivoting), solve_triangular, cholesky,
// cholesky_solve and cholesky_inverse, each one tape node per call (the last two are two
// triangular solves). Names, argument order and batch rules follow torch.linalg 1.13.
//
// Rules (X = A^-1 B; every one written with tensor operations, so that it nests):
//   solve               reverse  gB = A^-T gX, gA = -gB X^T   (the forward pass's LU reused)
//                       forward  dX = A^-1 (dB - dA X)
//   solve_triangular    the same with A's triangle: gA = -tri(gB X^T)
//   cholesky  L L^T = A reverse  gA = L^-T S L^-1, S = (tril(X) + tril(X, -1)^T) / 2, X = L^T gL
//                       forward  dL = L phi(L^-1 sym(dA) L^-T), phi: the lower triangle, the
//                                diagonal halved
// cholesky reads A's lower triangle only (torch's rule) and its gradient is the symmetric one,
// the gradient of cholesky(sym(A)); its tangent takes sym(dA) alike, so forward = reverse.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "adx/core/error.hpp"
#include "adx/linalg/lapack.hpp"
#include "adx/linalg/op.hpp"
#include "adx/linalg/structure.hpp"
#include "adx/tensor/linalg.hpp"

namespace adx {
namespace detail {

/// "adx: linalg.solve: the input matrix is singular: U(2,2) of its LU factorization is zero
/// (input of shape [3, 3], batch element 0)"; batch elements count row-major over the batch axes.
[[noreturn]] inline void throw_linalg_error(char const* op, std::string const& what, shape const& sh,
                                            std::size_t batch) {
  throw linalg_error(std::string("adx: ") + op + ": " + what + " (input of shape " + sh.str() + ", batch element " +
                     std::to_string(batch) + ")");
}

/// The element type two operands meet at: the higher nesting level (lower ones are constants).
template <class SA, class SB>
using meet_t = std::conditional_t<(level_v<SA> >= level_v<SB>), SA, SB>;

template <class SA, class SB>
inline constexpr bool can_meet = std::is_same_v<SA, SB> || level_v<SA> != level_v<SB>;

/// LU factors of a batch of numbers' matrices ([b, n, n]) and each one's factorization result
/// (0, or the 1-based index of a zero pivot).
template <class T>
struct lu_factors {
  kept_factors<T> kept;           ///< the factors and pivots
  std::vector<std::size_t> info;  ///< per matrix
};

/// The LU factors of A. The last batch factored on this thread in the current recording is
/// kept, so that solve(A, B) and slogdet(A) of one A factor it once: a batch with the same
/// buffer, shape and numbers is the same. (Each recording factors again: a gradient taken twice
/// pays twice, as a user's loop does.)
template <class T>
lu_factors<T> const& factor_lu(tensor<T> const& A) {
  struct memo {
    tensor<T> of;
    std::vector<T> snapshot;  ///< of's numbers when factored
    lu_factors<T> lu;
    epoch_type recording = 0;
    bool valid = false;
  };
  thread_local memo m;
  epoch_type const now = tape<T>::current().epoch();
  // the same buffer and the same numbers (memory a tensor borrows, an Eigen matrix's, may have
  // changed in place: O(n^2) to compare, against the O(n^3) factorization)
  if (m.valid && m.recording == now && m.of.shape() == A.shape() && m.of.data() == A.data() &&
      std::equal(A.data(), A.data() + A.size(), m.snapshot.begin()))
    return m.lu;
  m.valid = false;
  std::size_t const b = A.shape()[0], n = A.shape()[1];
  lu_factors<T> lu;
  lu.kept.factors.push_back(A);
  lu.kept.pivots.resize(b * n);
  lu.info.resize(b);
  T* const f = lu.kept.factors[0].data();
  for (std::size_t q = 0; q < b; ++q) lu.info[q] = lapack::lu_factor(n, f + q * n * n, lu.kept.pivots.data() + q * n);
  m.of = A, m.lu = std::move(lu), m.recording = now;
  m.snapshot.assign(A.data(), A.data() + A.size());
  m.valid = true;
  return m.lu;
}

/// X = A^-1 B for general square A (LU with partial pivoting); `name` is the caller's.
struct solve_op {
  static constexpr std::size_t inputs = 2, outputs = 1;
  char const* name = "linalg.solve";
  shape input{};        ///< the caller's shape of A, for errors (the batch flattened if empty)
  bool checked = true;  ///< throw at a zero pivot (false: inf and NaN, as the numbers give)

  template <class T>
  op_result<T, 1> compute(std::array<tensor<T>, 2> const& in) const {
    auto const& A = in[0];
    std::size_t const b = A.shape()[0], n = A.shape()[1], k = in[1].shape()[2];
    op_result<T, 1> r;
    lu_factors<T> const& lu = factor_lu(A);
    for (std::size_t q = 0; q < b; ++q)
      if (std::size_t const info = lu.info[q]; info && checked)
        throw_linalg_error(name,
                           "the input matrix is singular: U(" + std::to_string(info - 1) + "," +
                               std::to_string(info - 1) + ") of its LU factorization is zero",
                           input.rank() ? input : A.shape(), q);
    r.kept = lu.kept;
    T const* const f = std::as_const(r.kept.factors[0]).data();
    tensor<T> X = in[1];
    T* const x = X.data();
    for (std::size_t q = 0; q < b; ++q)
      lapack::lu_solve(false, n, k, f + q * n * n, r.kept.pivots.data() + q * n, x + q * n * k);
    r.out[0] = std::move(X);
    return r;
  }
  /// A^-1 Y (or A^-T Y): from the kept LU for numbers, by a recorded solve for AD values.
  template <class T>
  tensor<T> apply_inverse(std::array<tensor<T>, 2> const& in, kept_factors<T> const& kept, tensor<T> Y,
                          bool trans) const {
    if constexpr (level_v<T> != 0) {
      (void)kept;
      return run_op(*this, trans ? mT(in[0]) : in[0], Y)[0];
    } else {
      std::size_t const b = Y.shape()[0], n = Y.shape()[1], k = Y.shape()[2];
      T* const y = Y.data();
      for (std::size_t q = 0; q < b; ++q)
        lapack::lu_solve(trans, n, k, kept.factors[0].data() + q * n * n, kept.pivots.data() + q * n, y + q * n * k);
      return Y;
    }
  }
  template <class T>
  std::array<tensor<T>, 2> adjoint(std::array<tensor<T>, 2> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 1> const& g,
                                   std::array<bool, 2> const& need) const {
    tensor<T> gB = apply_inverse(in, kept, g[0], true);
    if (!need[0]) return {tensor<T>(), std::move(gB)};
    if constexpr (lapack::native<T>) {  // numbers: -gB X^T by one product into gA's buffer
      std::size_t const b = gB.shape()[0], n = gB.shape()[1], k = gB.shape()[2];
      T const* const y = gB.data();
      T const* const x = out[0].data();
      tensor<T> gA = tensor<T>::fill(in[0].shape(), [&](T* o) {
        for (std::size_t q = 0; q < b; ++q) {
          T* const oq = o + q * n * n;
          std::fill_n(oq, n * n, T(0));
          if (k) gemm<T>(false, true, n, n, k, y + q * n * k, k, x + q * n * k, k, oq, n, false);
          for (std::size_t i = 0; i < n * n; ++i) oq[i] = -oq[i];
        }
      });
      return {std::move(gA), std::move(gB)};
    } else {
      return {tensor<T>(-matmul(gB, mT(out[0]))), std::move(gB)};
    }
  }
  template <class T>
  std::array<tensor<T>, 1> tangent(std::array<tensor<T>, 2> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const& kept, std::array<tensor<T>, 2> const& d) const {
    return {apply_inverse(in, kept, tensor<T>(d[1] - matmul(d[0], out[0])), false)};
  }
};

/// X = A^-1 B for triangular A (its lower or upper triangle; unit: a diagonal of ones).
struct triangular_op {
  static constexpr std::size_t inputs = 2, outputs = 1;
  char const* name = "linalg.solve_triangular";
  bool lower = true, unit = false;
  bool trans = false;  ///< X = A^-T B, A's triangle read as stored (a Cholesky factor's L^T solve on L)

  template <class T>
  op_result<T, 1> compute(std::array<tensor<T>, 2> const& in) const {
    std::size_t const b = in[0].shape()[0], n = in[0].shape()[1], k = in[1].shape()[2];
    op_result<T, 1> r;
    tensor<T> X = in[1];
    T* const x = X.data();
    T const* const a = in[0].data();
    for (std::size_t q = 0; q < b; ++q)
      lapack::triangular_solve(lower, trans, unit, n, k, a + q * n * n, x + q * n * k);
    r.out[0] = std::move(X);
    return r;
  }
  /// The part of a matrix the solve reads: its triangle, without the diagonal when unit.
  template <class T>
  tensor<T> part(tensor<T> const& x) const {
    return triangle(x, lower, lower ? (unit ? -1 : 0) : (unit ? 1 : 0));
  }
  template <class T>
  std::array<tensor<T>, 2> adjoint(std::array<tensor<T>, 2> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& g,
                                   std::array<bool, 2> const& need) const {
    // gB = op(A)^-T gX; gA = -part(gB X^T), or -part(X gB^T) for the transposed solve
    if constexpr (lapack::native<T>) {  // numbers: one solve in place and one product into gA
      std::size_t const b = in[0].shape()[0], n = in[0].shape()[1], k = g[0].shape()[2];
      tensor<T> gB = g[0];
      T* const y = gB.data();
      T const* const a = in[0].data();
      for (std::size_t q = 0; q < b; ++q)
        lapack::triangular_solve(lower, !trans, unit, n, k, a + q * n * n, y + q * n * k);
      if (!need[0]) return {tensor<T>(), std::move(gB)};
      T const* const x = out[0].data();
      long const edge = lower ? (unit ? -1 : 0) : (unit ? 1 : 0);
      tensor<T> gA = tensor<T>::fill(in[0].shape(), [&](T* o) {
        for (std::size_t q = 0; q < b; ++q) {
          T* const oq = o + q * n * n;
          std::fill_n(oq, n * n, T(0));
          if (k)
            gemm<T>(false, true, n, n, k, (trans ? x : y) + q * n * k, k, (trans ? y : x) + q * n * k, k, oq, n, false);
          for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              long const dd = long(j) - long(i);
              oq[i * n + j] = (lower ? dd <= edge : dd >= edge) ? -oq[i * n + j] : T(0);
            }
        }
      });
      return {std::move(gA), std::move(gB)};
    } else {
      tensor<T> gB = run_op(triangular_op{name, lower, unit, !trans}, in[0], g[0])[0];
      tensor<T> gA =
          need[0] ? tensor<T>(-part(tensor<T>(trans ? matmul(out[0], mT(gB)) : matmul(gB, mT(out[0]))))) : tensor<T>();
      return {std::move(gA), std::move(gB)};
    }
  }
  template <class T>
  std::array<tensor<T>, 1> tangent(std::array<tensor<T>, 2> const& in, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 2> const& d) const {
    tensor<T> const dA = part(d[0]);
    return run_op(*this, in[0], tensor<T>(d[1] - matmul(trans ? mT(dA) : dA, out[0])));
  }
};

/// L with L L^T = A, from A's lower triangle.
struct cholesky_op {
  static constexpr std::size_t inputs = 1, outputs = 1;
  char const* name = "linalg.cholesky";
  shape input{};  ///< the caller's shape of A, for errors (the batch flattened if empty)

  template <class T>
  op_result<T, 1> compute(std::array<tensor<T>, 1> const& in) const {
    std::size_t const b = in[0].shape()[0], n = in[0].shape()[1];
    op_result<T, 1> r;
    tensor<T> L = in[0];
    T* const l = L.data();
    for (std::size_t q = 0; q < b; ++q)
      if (std::size_t const info = lapack::cholesky_factor(n, l + q * n * n))
        throw_linalg_error(name,
                           "the input is not positive-definite: its leading minor of order " + std::to_string(info) +
                               " is not positive-definite",
                           input.rank() ? input : in[0].shape(), q);
    r.out[0] = std::move(L);
    return r;
  }
  /// L^-1 Y (trans false) or L^-T Y, recorded for AD values.
  template <class T>
  static tensor<T> solve_l(tensor<T> const& L, tensor<T> const& Y, bool trans) {
    return run_op(triangular_op{"linalg.cholesky", true, false, trans}, L, Y)[0];
  }
  template <class T>
  std::array<tensor<T>, 1> adjoint(std::array<tensor<T>, 1> const&, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& g,
                                   std::array<bool, 1> const&) const {
    auto const& L = out[0];
#if ADX_WITH_LAPACK
    if constexpr (lapack::native<T>) {  // numbers: the same rule, blocked and in place (lapack.hpp)
      std::size_t const b = L.shape()[0], n = L.shape()[1];
      tensor<T> G = g[0];
      T* const x = G.data();
      for (std::size_t q = 0; q < b; ++q) lapack::cholesky_adjoint(n, L.data() + q * n * n, x + q * n * n);
      return {std::move(G)};
    }
#endif
    tensor<T> const X = matmul(mT(L), triangle(g[0], true, 0));
    tensor<T> const S = (triangle(X, true, 0) + mT(triangle(X, true, -1))) * 0.5;
    tensor<T> const Y = solve_l(L, S, true);  // L^-T S
    return {mT(solve_l(L, mT(Y), true))};     // (L^-T Y^T)^T = Y L^-1
  }
  template <class T>
  std::array<tensor<T>, 1> tangent(std::array<tensor<T>, 1> const&, std::array<tensor<T>, 1> const& out,
                                   kept_factors<T> const&, std::array<tensor<T>, 1> const& d) const {
    auto const& L = out[0];
    tensor<T> const W = solve_l(L, symmetric_part(d[0]), false);  // L^-1 sym(dA)
    tensor<T> const M = mT(solve_l(L, mT(W), false));             // L^-1 sym(dA) L^-T
    return {matmul(L, tensor<T>(triangle(M, true, -1) + diag_matrices(diagonal_named(name, M)) * 0.5))};
  }
};

/// Two operands evaluated and taken to the element type they meet at (numbers and lower levels
/// become constants of the higher one).
template <class XA, class XB>
auto meet_operands(XA const& a, XB const& b) {
  auto const A = eval(a);
  auto const B = eval(b);
  using SA = typename decltype(A)::value_type;
  using SB = typename decltype(B)::value_type;
  static_assert(can_meet<SA, SB>,
                "adx: a linalg function's operands have different element types at one nesting level (float and "
                "double, or var and dual): convert one");
  using S = meet_t<SA, SB>;
  return std::pair<tensor<S>, tensor<S>>{as_elements<S>(A), as_elements<S>(B)};
}

/// A solve's operands at one element type, batches broadcast and flattened: A [b, n, n] and B
/// [b, n, k] (a batch of vectors as k = 1), and the result's shape.
template <class S>
struct solve_operands {
  tensor<S> A, B;
  shape out;
  shape a_shape;  ///< A's shape with the broadcast batch axes (for errors)
};

/// sh with its last two axes swapped (a transpose's shape; sh itself below rank 2).
inline shape last_two_swapped(shape sh) {
  if (sh.rank() >= 2) std::swap(sh[sh.rank() - 2], sh[sh.rank() - 1]);
  return sh;
}

/// `left` false: A and B are given transposed (X A = B as A^T X^T = B^T); errors name the
/// shapes the caller gave, and a batch of vectors is refused there, as torch does.
template <class S>
solve_operands<S> solve_prepare(char const* op, tensor<S> const& A, tensor<S> const& B, bool triangular_rhs,
                                bool left = true) {
  shape const sa = left ? A.shape() : last_two_swapped(A.shape()), sb = left ? B.shape() : last_two_swapped(B.shape());
  if (A.rank() < 2) throw_shape_error(op, "needs A to be a matrix or a batch of matrices", sa, sb);
  std::size_t const n = A.shape()[A.rank() - 1];
  if (A.shape()[A.rank() - 2] != n) throw_shape_error(op, "needs A to be square", sa, sb);
  // torch 1.13: B is a batch of vectors when it is one, or when its shape is A's without the last
  // axis (the caller's shapes: with left = false such a B is refused, as torch refuses it)
  bool const vector_shaped = sb.rank() == 1 || (sb.rank() + 1 == sa.rank() && sb == leading_axes(sa, 1));
  if (!left && !triangular_rhs && vector_shaped)
    throw_shape_error(op, "with left = false needs B to be a matrix or a batch of matrices, not of vectors", sa, sb);
  bool const vector = !triangular_rhs && vector_shaped;
  tensor<S> const Bm = vector ? B.reshape(with_batch(leading_axes(B.shape(), 1), {B.shape()[B.rank() - 1], 1})) : B;
  if (Bm.rank() < 2) throw_shape_error(op, "needs B to be a vector, a matrix or a batch of them", sa, sb);
  if (Bm.shape()[Bm.rank() - 2] != n)
    throw_shape_error(op,
                      left ? "the number of rows of B must equal the order of A"
                           : "with left = false the number of columns of B must equal the order of A",
                      sa, sb);
  shape const batch = broadcast_shapes(leading_axes(A.shape(), 2), leading_axes(Bm.shape(), 2), op);
  auto const Ae = as_matrices(op, expand_batch(A, batch)).t;
  auto const Be = as_matrices(op, expand_batch(Bm, batch)).t;
  std::size_t const k = Bm.shape()[Bm.rank() - 1];
  return {Ae, Be, vector ? with_batch(batch, {n}) : with_batch(batch, {n, k}), with_batch(batch, {n, n})};
}

}  // namespace detail

namespace linalg {

/// X with A X = B (torch.linalg.solve; left = false: X A = B), A square and invertible, B a
/// vector, a matrix or a batch of either; batch axes broadcast. Throws adx::linalg_error,
/// naming the zero pivot, when A is singular.
template <class XA, class XB>
auto solve(XA const& a, XB const& b, bool left = true) {
  auto const [A, B] = detail::meet_operands(a, b);
  if (!left && (A.rank() < 2 || B.rank() < 2))
    detail::throw_shape_error("linalg.solve", "with left = false needs matrices or batches of them", A.shape(),
                              B.shape());
  // X A = B  <=>  A^T X^T = B^T
  auto const p = left ? detail::solve_prepare("linalg.solve", A, B, false)
                      : detail::solve_prepare("linalg.solve", detail::mT(A), detail::mT(B), false, false);
  auto const X = detail::run_op(detail::solve_op{"linalg.solve", p.a_shape}, p.A, p.B)[0].reshape(p.out);
  return left ? X : detail::mT(X);
}

/// The inverse of each square matrix (torch.linalg.inv); throws adx::linalg_error when one is
/// singular.
template <class X>
auto inv(X const& x) {
  auto const A = eval(x);
  using S = typename decltype(A)::value_type;
  auto const m = detail::as_matrices("linalg.inv", A, true);
  auto const I = detail::identities<S>(m.count(), m.rows());
  return detail::run_op(detail::solve_op{"linalg.inv", A.shape()}, m.t, I)[0].reshape(A.shape());
}

/// Options of solve_triangular (torch.linalg.solve_triangular's keywords).
struct triangular_options {
  bool left = true;            ///< A X = B; false: X A = B
  bool unitriangular = false;  ///< A's diagonal taken as ones (not read)
};

/// X with A X = B for triangular A (torch.linalg.solve_triangular): only A's upper (upper =
/// true) or lower triangle is read. B is a matrix or a batch; batch axes broadcast.
template <class XA, class XB>
auto solve_triangular(XA const& a, XB const& b, bool upper, triangular_options const& opt = {}) {
  auto const [A, B] = detail::meet_operands(a, b);
  if (A.rank() < 2 || B.rank() < 2)
    detail::throw_shape_error("linalg.solve_triangular", "needs matrices or batches of them", A.shape(), B.shape());
  // X A = B  <=>  A^T X^T = B^T, A^T's triangle the other one
  auto const p = opt.left ? detail::solve_prepare("linalg.solve_triangular", A, B, true)
                          : detail::solve_prepare("linalg.solve_triangular", detail::mT(A), detail::mT(B), true, false);
  bool const lower = opt.left ? !upper : upper;
  auto const X =
      detail::run_op(detail::triangular_op{"linalg.solve_triangular", lower, opt.unitriangular}, p.A, p.B)[0].reshape(
          p.out);
  return opt.left ? X : detail::mT(X);
}

/// L with L L^T = A, lower triangular with a positive diagonal, for each symmetric positive
/// definite A (torch.linalg.cholesky; upper = true gives U = L^T, from A's upper triangle). Only
/// one triangle is read, and the gradient is symmetric: that of cholesky((A + A^T) / 2). A NaN
/// in the triangle read gives a NaN factor. Throws adx::linalg_error,
/// naming the first leading minor that is not positive definite.
template <class X>
auto cholesky(X const& x, bool upper = false) {
  auto const A = eval(x);
  auto const m = detail::as_matrices("linalg.cholesky", A, true);
  // upper: U^T U = A from A's upper triangle, which is the lower one of A^T
  auto const L = detail::run_op(detail::cholesky_op{"linalg.cholesky", A.shape()}, upper ? detail::mT(m.t) : m.t)[0];
  return (upper ? detail::mT(L) : L).reshape(A.shape());
}

/// X with A X = B where A = L L^T (torch.cholesky_solve(B, L, upper)): two triangular solves.
template <class XB, class XL>
auto cholesky_solve(XB const& b, XL const& l, bool upper = false) {
  auto const [B, L] = detail::meet_operands(b, l);
  if (L.rank() < 2 || B.rank() < 2)
    detail::throw_shape_error("cholesky_solve", "needs matrices or batches of them", B.shape(), L.shape());
  // L L^T X = B: Y = L^-1 B, X = L^-T Y, both solves reading the factor as given (U^T U: U^-T, then U^-1)
  auto const p = detail::solve_prepare("cholesky_solve", L, B, true);
  auto const Y = detail::run_op(detail::triangular_op{"cholesky_solve", !upper, false, upper}, p.A, p.B)[0];
  return detail::run_op(detail::triangular_op{"cholesky_solve", !upper, false, !upper}, p.A, Y)[0].reshape(p.out);
}

/// (L L^T)^-1 from the Cholesky factor L (torch.cholesky_inverse; upper: L^T given).
template <class XL>
auto cholesky_inverse(XL const& l, bool upper = false) {
  auto const L = eval(l);
  using S = typename decltype(L)::value_type;
  auto const m = detail::as_matrices("linalg.cholesky_inverse", L, true);
  auto const I = detail::identities<S>(m.count(), m.rows()).reshape(L.shape());
  return cholesky_solve(I, L, upper);
}

}  // namespace linalg
}  // namespace adx
