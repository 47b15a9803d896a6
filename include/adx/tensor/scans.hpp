// SPDX-License-Identifier: MIT
// adx: running sums and products, differences and the cross product along an axis, as torch's
// cumsum, cumprod, diff and cross.
//
// cumsum and cumprod are written with the element type's own arithmetic, one element after
// another (out_j = out_{j-1} + x_j), so over AD scalars each output is one recorded operation
// on the previous output and one input: the chain rule gives the derivative torch's formulas
// give, a zero factor of a running product included (torch's cumprod backward treats zeros
// apart; the chain rule needs no case). diff and cross are elementwise expressions of slices.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "adx/core/value.hpp"
#include "adx/tensor/concat.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {

namespace detail {
/// out_j = step(out_{j-1}, x_j) along axis (out_0 = x_0), for every line of x.
template <class S, class Step>
tensor<S> scan(char const* op, tensor<S> const& x, long axis, Step step) {
  if (x.rank() == 0) return x;
  std::size_t const ax = normalize_axis(op, axis, x.shape());
  shape const& sh = x.shape();
  std::size_t const n = sh[ax], stride = sh.strides()[ax];
  tensor<S> out = x;
  if (n == 0) return out;
  S* o = out.data();
  for (std::size_t line = 0, lines = x.size() / n; line < lines; ++line) {
    std::size_t const start = (line / stride) * stride * n + line % stride;
    for (std::size_t j = 1; j < n; ++j)
      o[start + j * stride] = step(o[start + (j - 1) * stride], o[start + j * stride]);
  }
  return out;
}
}  // namespace detail

/// The running sums along axis (torch.cumsum): out_j = x_0 + ... + x_j, added left to right.
template <class S>
tensor<S> cumsum(tensor<S> const& x, long axis) {
  return detail::scan("cumsum", x, axis, [](S const& a, S const& b) { return S(a + b); });
}

/// The running products along axis (torch.cumprod): out_j = x_0 ... x_j, multiplied left to right.
template <class S>
tensor<S> cumprod(tensor<S> const& x, long axis) {
  return detail::scan("cumprod", x, axis, [](S const& a, S const& b) { return S(a * b); });
}

/// The n-th forward difference along axis (torch.diff): x_{j+1} - x_j, n times; the axis
/// shrinks by n (to 0 if n exceeds it).
template <class S>
tensor<S> diff(tensor<S> const& x, long n = 1, long axis = -1) {
  if (x.rank() == 0) detail::throw_shape_error("diff", "a rank-0 tensor has no axis", x.shape());
  if (n < 0) detail::throw_shape_error("diff", "the order n must be >= 0, not " + std::to_string(n), x.shape());
  std::size_t const ax = detail::normalize_axis("diff", axis, x.shape());
  tensor<S> r = x;
  for (long k = 0; k < n && r.shape()[ax] > 0; ++k) {
    long const len = static_cast<long>(r.shape()[ax]);
    r = tensor<S>(eval(r.slice(static_cast<long>(ax), 1, len) - r.slice(static_cast<long>(ax), 0, len - 1)));
  }
  return r;
}

/// The cross product of 3-vectors along axis (torch.linalg.cross; axis of extent 3, a and b of
/// one shape): (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0).
template <class S>
tensor<S> cross(tensor<S> const& a, tensor<S> const& b, long axis = -1) {
  if (a.shape() != b.shape()) detail::throw_shape_error("cross", "the operands' shapes differ", a.shape(), b.shape());
  if (a.rank() == 0) detail::throw_shape_error("cross", "a rank-0 tensor has no axis", a.shape());
  std::size_t const ax = detail::normalize_axis("cross", axis, a.shape());
  if (a.shape()[ax] != 3)
    detail::throw_shape_error("cross", "axis " + std::to_string(ax) + " must have extent 3", a.shape());
  long const d = static_cast<long>(ax);
  auto part = [&](tensor<S> const& t, long i) { return t.slice(d, i, i + 1); };
  auto component = [&](long i, long j) { return tensor<S>(eval(part(a, i) * part(b, j) - part(a, j) * part(b, i))); };
  return concat({component(1, 2), component(2, 0), component(0, 1)}, d);
}

/// cumsum of an expression, evaluated first.
template <tensor_operand X>
requires(!tensor_type<X>) auto cumsum(X const& x, long axis) { return cumsum(eval(x), axis); }
/// cumprod of an expression, evaluated first.
template <tensor_operand X>
requires(!tensor_type<X>) auto cumprod(X const& x, long axis) { return cumprod(eval(x), axis); }
/// diff of an expression, evaluated first.
template <tensor_operand X>
requires(!tensor_type<X>) auto diff(X const& x, long n = 1, long axis = -1) { return diff(eval(x), n, axis); }

}  // namespace adx
