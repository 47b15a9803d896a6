// SPDX-License-Identifier: MIT
// adx: the structural matrix operations (triangles, diagonals, the transpose, the trace) and the
// batch handling every linalg function shares. Structural operations only move elements: a var
// is copied with its index, so they record nothing and nest as they are.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "adx/core/error.hpp"
#include "adx/tensor/reduce.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

/// A tensor of rank >= 2 seen as a batch of matrices: [batch, rows, cols] and its batch axes.
template <class S>
struct matrix_batch {
  tensor<S> t;  ///< rank 3
  shape batch;  ///< the axes before the last two
  std::size_t rows() const noexcept { return t.shape()[1]; }
  std::size_t cols() const noexcept { return t.shape()[2]; }
  std::size_t count() const noexcept { return t.shape()[0]; }
};

/// x as a batch of matrices; throws naming `op` when x has rank < 2 (or is not square if asked).
template <class S>
matrix_batch<S> as_matrices(char const* op, tensor<S> const& x, bool square = false) {
  if (x.rank() < 2) throw_shape_error(op, "needs a matrix or a batch of matrices (rank 2 or more)", x.shape());
  std::size_t const r = x.shape()[x.rank() - 2], c = x.shape()[x.rank() - 1];
  if (square && r != c) throw_shape_error(op, "needs square matrices", x.shape());
  shape batch;
  std::size_t b = 1;
  for (std::size_t i = 0; i + 2 < x.rank(); ++i) batch.push_back(x.shape()[i]), b *= x.shape()[i];
  return {x.reshape(shape{b, r, c}), batch};
}

/// sh without its last k axes.
inline shape leading_axes(shape const& sh, std::size_t k) {
  shape s;
  for (std::size_t i = 0; i + k < sh.rank(); ++i) s.push_back(sh[i]);
  return s;
}

/// The batch axes followed by `tail` (a result's shape).
inline shape with_batch(shape const& batch, std::initializer_list<std::size_t> tail) {
  shape s = batch;
  for (std::size_t d : tail) s.push_back(d);
  return s;
}

/// x ([batch..., r, c]) repeated along broadcast batch axes `to` (elements copied, vars with
/// their indices: no tape entry).
template <class S>
tensor<S> expand_batch(tensor<S> const& x, shape const& to) {
  shape full = to;
  full.push_back(x.shape()[x.rank() - 2]);
  full.push_back(x.shape()[x.rank() - 1]);
  if (full == x.shape()) return x;
  auto const st = broadcast_strides(x.shape(), full);
  auto const out_st = full.strides();
  S const* src = x.data();
  return tensor<S>::generate(full, [&](std::size_t i) -> S const& {
    std::size_t off = 0, rest = i;
    for (std::size_t d = 0; d < full.rank(); ++d) {
      off += (rest / out_st[d]) * st[d];
      rest %= out_st[d];
    }
    return src[off];
  });
}

/// A batch of matrices of shape sh (rank 2 or more) whose element (i, j) of matrix q is f(q, i, j),
/// in one pass without a division per element for numbers (element by element otherwise).
template <class S, class F>
tensor<S> matrices_from(shape const& sh, F&& f) {
  std::size_t const r = sh[sh.rank() - 2], c = sh[sh.rank() - 1], rc = r * c;
  if constexpr (std::is_trivially_default_constructible_v<S>) {
    return tensor<S>::fill(sh, [&](S* p) {
      std::size_t const b = rc ? sh.size() / rc : 0;
      for (std::size_t q = 0; q < b; ++q)
        for (std::size_t i = 0; i < r; ++i, p += c)
          for (std::size_t j = 0; j < c; ++j) p[j] = f(q, i, j);
    });
  } else {
    return tensor<S>::generate(sh, [&](std::size_t e) { return S(f(e / rc, (e % rc) / c, e % c)); });
  }
}

/// The transposes of a batch of matrices ([b, r, c] -> [b, c, r]).
template <class S>
tensor<S> mT(tensor<S> const& x) {
  std::size_t const r = x.shape()[x.rank() - 2], c = x.shape()[x.rank() - 1];
  shape sh = x.shape();
  std::swap(sh[sh.rank() - 2], sh[sh.rank() - 1]);
  S const* src = x.data();
  return matrices_from<S>(
      sh, [&](std::size_t q, std::size_t i, std::size_t j) -> S const& { return src[(q * r + j) * c + i]; });
}

/// The lower (lower = true) or upper triangle of each matrix from diagonal k on, zeros elsewhere.
template <class S>
tensor<S> triangle(tensor<S> const& x, bool lower, long k) {
  std::size_t const r = x.shape()[x.rank() - 2], c = x.shape()[x.rank() - 1];
  S const* src = x.data();
  S const zero{};
  return matrices_from<S>(x.shape(), [&](std::size_t q, std::size_t i, std::size_t j) -> S const& {
    long const d = static_cast<long>(j) - static_cast<long>(i);
    return (lower ? d <= k : d >= k) ? src[(q * r + i) * c + j] : zero;
  });
}

/// Diagonal matrices from a batch of vectors, [b, n] -> [b, n, n].
template <class S>
tensor<S> diag_matrices(tensor<S> const& v) {
  std::size_t const b = v.shape()[0], n = v.shape()[1];
  S const* src = v.data();
  return tensor<S>::generate(shape{b, n, n}, [&](std::size_t i) {
    std::size_t const q = i / (n * n), e = i % (n * n);
    return e / n == e % n ? src[q * n + e / n] : S{};
  });
}

/// b identity matrices of order n.
template <class S>
tensor<S> identities(std::size_t b, std::size_t n) {
  return matrices_from<S>(shape{b, n, n},
                          [](std::size_t, std::size_t i, std::size_t j) { return i == j ? S(1) : S(0); });
}

/// The symmetric part of each matrix, (x + x^T) / 2.
template <class S>
tensor<S> symmetric_part(tensor<S> const& x) {
  return tensor<S>((x + mT(x)) * 0.5);
}

/// The diagonals of each matrix, [..., r, c] -> [..., min(r, c)]; errors name `op`.
template <class S>
tensor<S> diagonal_named(char const* op, tensor<S> const& t) {
  auto const m = detail::as_matrices(op, t);
  std::size_t const r = m.rows(), c = m.cols(), k = std::min(r, c);
  S const* src = m.t.data();
  return tensor<S>::generate(detail::with_batch(m.batch, {k}),
                             [&](std::size_t i) -> S const& { return src[(i / k) * r * c + (i % k) * (c + 1)]; });
}
}  // namespace detail

namespace linalg {

/// The lower triangle of each matrix from diagonal k on (torch.tril): k = 0 keeps the diagonal,
/// k = -1 starts below it, k = 1 above it. Elements move: nothing is recorded.
template <class X>
auto tril(X const& x, long k = 0) {
  auto const t = eval(x);
  if (t.rank() < 2) detail::throw_shape_error("linalg.tril", "needs a matrix or a batch of matrices", t.shape());
  return detail::triangle(t, true, k);
}

/// The upper triangle of each matrix from diagonal k on (torch.triu).
template <class X>
auto triu(X const& x, long k = 0) {
  auto const t = eval(x);
  if (t.rank() < 2) detail::throw_shape_error("linalg.triu", "needs a matrix or a batch of matrices", t.shape());
  return detail::triangle(t, false, k);
}

/// The diagonal of each matrix ([..., r, c] -> [..., min(r, c)]), torch.diagonal of the last two
/// axes with offset 0. Elements move: nothing is recorded.
template <class X>
auto diagonal(X const& x) {
  return detail::diagonal_named("linalg.diagonal", eval(x));
}

/// torch.diag: a diagonal matrix from a vector ([n] -> [n, n]), or a matrix's diagonal.
template <class X>
auto diag(X const& x) {
  auto const t = eval(x);
  if (t.rank() == 2) return diagonal(t);
  if (t.rank() != 1) detail::throw_shape_error("linalg.diag", "needs a vector or a matrix", t.shape());
  return detail::diag_matrices(t.reshape(shape{1, t.size()})).reshape(shape{t.size(), t.size()});
}

/// The sum of each matrix's diagonal: a rank-0 tensor for one matrix (torch.trace), one per
/// matrix for a batch.
template <class X>
auto trace(X const& x) {
  auto const d = detail::diagonal_named("linalg.trace", eval(x));
  using S = typename decltype(d)::value_type;
  return tensor<S>(sum(d, -1));
}

}  // namespace linalg
}  // namespace adx
