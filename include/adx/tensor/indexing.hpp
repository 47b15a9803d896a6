// SPDX-License-Identifier: MIT
// adx: picking elements by index, as torch does: take, index_select, gather, masked_fill, pad
// (constant, reflect, replicate), sort and topk (their values), argmax and argmin, one_hot; and
// scatter_add, gather's adjoint.
//
// Each element a pick returns is a source element or a constant, so the result of a tensor of
// AD scalars holds the same variables (or duals) as its source: the derivative of an element
// with respect to the element it was picked from is one, and a source element picked twice
// gathers the adjoints of both (torch's scatter-add in the backward pass of gather). No tape
// node is needed, and every mode and nesting level differentiates them. scatter_add adds with
// the element type's own arithmetic. Indices are never differentiable: argmax, argmin and the
// index halves of sort and topk are tensor<long>.
//
// Indices are tensors of an integral type (tensor<long>, tensor<int>, ...) or std::vectors of
// one; an index outside its axis is a shape_error naming the operation, the index and the axis.
// take accepts negative indices (counted from the end, as torch.take); the others do not, as
// torch's index_select and gather do not.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "adx/core/value.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {

namespace detail {

inline constexpr std::size_t no_source = std::numeric_limits<std::size_t>::max();

/// The tensor of shape out whose element k is element src[k] of x, or a constant `fill` where
/// src[k] is no_source.
template <class S>
tensor<S> pick(tensor<S> const& x, shape const& out, std::vector<std::size_t> const& src, double fill = 0) {
  S const* e = x.data();
  return tensor<S>::generate(out,
                             [&](std::size_t k) -> S { return src[k] == no_source ? constant<S>(fill) : e[src[k]]; });
}

/// Index i of an index operand as a position on an axis of extent n (negative from the end if
/// `wrap`); shape_error otherwise.
template <class I>
std::size_t checked_index(char const* op, I i, std::size_t n, bool wrap, shape const& sh) {
  long long v = static_cast<long long>(i);
  if (wrap && v < 0) v += static_cast<long long>(n);
  if (v < 0 || v >= static_cast<long long>(n))
    throw_shape_error(
        op,
        "index " + std::to_string(static_cast<long long>(i)) + " is out of range for an extent of " + std::to_string(n),
        sh);
  return static_cast<std::size_t>(v);
}

/// Calls f(k, index) for every element k of shape sh in row-major order with its multi-index.
template <class F>
void for_each_index(shape const& sh, F&& f) {
  std::vector<std::size_t> at(sh.rank(), 0);
  for (std::size_t k = 0, n = sh.size(); k < n; ++k) {
    f(k, at);
    for (std::size_t d = sh.rank(); d-- > 0;) {
      if (++at[d] < sh[d]) break;
      at[d] = 0;
    }
  }
}

/// A number's order for sorting: NaN above every other value, as torch sorts.
template <class V>
bool sorts_before(V const& a, V const& b) {
  return !std::isnan(a) && (std::isnan(b) || a < b);
}

/// The positions along axis ax of every line of x sorted by primal value (stably), ascending
/// or descending; then f(line, start, stride, order) for each line (its number, its first
/// element, the stride along it and the sorted positions).
template <class S, class F>
void for_each_sorted_line(tensor<S> const& x, std::size_t ax, bool descending, F&& f) {
  shape const& sh = x.shape();
  std::size_t const n = sh[ax], stride = sh.strides()[ax];
  std::size_t const outer = n == 0 ? 0 : sh.size() / n;
  S const* e = x.data();
  std::vector<std::size_t> order(n);
  for (std::size_t line = 0; line < outer; ++line) {
    std::size_t const start = (line / stride) * stride * n + line % stride;
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      auto const va = primal(e[start + a * stride]), vb = primal(e[start + b * stride]);
      return descending ? sorts_before(vb, va) : sorts_before(va, vb);
    });
    f(line, start, stride, order);
  }
}

/// An index operand as a tensor (a std::vector as rank 1).
template <std::integral I>
tensor<I> const& as_index_tensor(tensor<I> const& t) {
  return t;
}
template <std::integral I>
tensor<I> as_index_tensor(std::vector<I> const& v) {
  return tensor<I>(shape{v.size()}, v);
}

}  // namespace detail

/// An index operand: a tensor of an integral type, or a std::vector of one.
template <class X>
concept index_operand = requires(X const& x) {
  detail::as_index_tensor(x);
};

/// The elements of x at the flat (row-major) positions `indices`, in the indices' shape
/// (torch.take); negative indices count from the end.
template <class S, index_operand Ix>
tensor<S> take(tensor<S> const& x, Ix const& indices) {
  auto const& ix = detail::as_index_tensor(indices);
  std::vector<std::size_t> src(ix.size());
  for (std::size_t k = 0; k < src.size(); ++k)
    src[k] = detail::checked_index("take", ix.data()[k], x.size(), true, x.shape());
  return detail::pick(x, ix.shape(), src);
}

/// The slices of x at `indices` (rank 1) along axis (torch.index_select): the result has x's
/// shape with that axis's extent the number of indices.
template <class S, index_operand Ix>
tensor<S> index_select(tensor<S> const& x, long axis, Ix const& indices) {
  auto const& ix = detail::as_index_tensor(indices);
  if (ix.rank() > 1) detail::throw_shape_error("index_select", "the indices must be of rank 0 or 1", ix.shape());
  std::size_t const ax = detail::normalize_axis("index_select", axis, x.shape());
  std::vector<std::size_t> pos(ix.size());
  for (std::size_t k = 0; k < pos.size(); ++k)
    pos[k] = detail::checked_index("index_select", ix.data()[k], x.shape()[ax], false, x.shape());
  shape out = x.shape();
  out[ax] = pos.size();
  auto const st = x.shape().strides();
  std::vector<std::size_t> src(out.size());
  detail::for_each_index(out, [&](std::size_t k, std::vector<std::size_t> const& at) {
    std::size_t s = 0;
    for (std::size_t d = 0; d < at.size(); ++d) s += (d == ax ? pos[at[d]] : at[d]) * st[d];
    src[k] = s;
  });
  return detail::pick(x, out, src);
}

/// out[i][j]... = x[..., index[i][j]..., ...] with the index replacing the position on axis
/// (torch.gather): index has x's rank and extents no larger than x's off the axis; the result
/// has index's shape.
template <class S, std::integral I>
tensor<S> gather(tensor<S> const& x, long axis, tensor<I> const& index) {
  std::size_t const ax = detail::normalize_axis("gather", axis, x.shape());
  if (index.rank() != x.rank())
    detail::throw_shape_error("gather", "the index must have the input's rank", x.shape(), index.shape());
  for (std::size_t d = 0; d < x.rank(); ++d)
    if (d != ax && index.shape()[d] > x.shape()[d])
      detail::throw_shape_error("gather", "the index is larger than the input off axis " + std::to_string(ax),
                                x.shape(), index.shape());
  auto const st = x.shape().strides();
  std::vector<std::size_t> src(index.size());
  detail::for_each_index(index.shape(), [&](std::size_t k, std::vector<std::size_t> const& at) {
    std::size_t s = 0;
    for (std::size_t d = 0; d < at.size(); ++d)
      s +=
          (d == ax ? detail::checked_index("gather", index.data()[k], x.shape()[ax], false, x.shape()) : at[d]) * st[d];
    src[k] = s;
  });
  return detail::pick(x, index.shape(), src);
}

/// x with the elements of src added at the positions index gives along axis
/// (torch.scatter_add): for each position of index, out[..., index[...], ...] += src[...] with
/// the index replacing the position on axis. index has x's rank, extents no larger than src's,
/// nor than x's off the axis. Each addition is one operation of the element type, in index
/// order, so the gradient reaches x (one) and every src element used (one).
template <class S, std::integral I>
tensor<S> scatter_add(tensor<S> const& x, long axis, tensor<I> const& index, tensor<S> const& src) {
  std::size_t const ax = detail::normalize_axis("scatter_add", axis, x.shape());
  if (index.rank() != x.rank() || src.rank() != x.rank())
    detail::throw_shape_error("scatter_add", "the index and the source must have the input's rank", x.shape(),
                              index.shape(), src.shape());
  for (std::size_t d = 0; d < x.rank(); ++d)
    if (index.shape()[d] > src.shape()[d] || (d != ax && index.shape()[d] > x.shape()[d]))
      detail::throw_shape_error("scatter_add",
                                "the index is larger than the source, or than the input off axis " + std::to_string(ax),
                                x.shape(), index.shape(), src.shape());
  auto const xs = x.shape().strides(), ss = src.shape().strides();
  tensor<S> out = x;
  S* o = out.data();
  S const* e = src.data();
  detail::for_each_index(index.shape(), [&](std::size_t k, std::vector<std::size_t> const& at) {
    std::size_t dest = 0, from = 0;
    for (std::size_t d = 0; d < at.size(); ++d) {
      dest +=
          (d == ax ? detail::checked_index("scatter_add", index.data()[k], x.shape()[ax], false, x.shape()) : at[d]) *
          xs[d];
      from += at[d] * ss[d];
    }
    o[dest] = S(o[dest] + e[from]);
  });
  return out;
}

/// x with the elements where mask holds replaced by the constant `value` (torch.masked_fill);
/// the mask broadcasts to x's shape. The gradient flows to the elements kept.
template <class S>
tensor<S> masked_fill(tensor<S> const& x, tensor<bool> const& mask, double value) {
  shape const& sh = x.shape();
  if (broadcast_shapes(sh, mask.shape(), "masked_fill") != sh)
    detail::throw_shape_error("masked_fill", "the mask does not broadcast to the input's shape", sh, mask.shape());
  auto const ms = detail::broadcast_strides(mask.shape(), sh);
  std::vector<std::size_t> src(sh.size());
  detail::for_each_index(sh, [&](std::size_t k, std::vector<std::size_t> const& at) {
    std::size_t m = 0;
    for (std::size_t d = 0; d < at.size(); ++d) m += at[d] * ms[d];
    src[k] = mask.data()[m] ? detail::no_source : k;
  });
  return detail::pick(x, sh, src, value);
}

/// How pad fills the border.
enum class pad_mode {
  constant,   ///< with a constant value
  reflect,    ///< with the elements mirrored about the edge, the edge not repeated
  replicate,  ///< with the edge element
};

/// x padded as torch.nn.functional.pad: `pads` holds (before, after) pairs from the last axis
/// backwards, (left, right, top, bottom) for the last two. reflect needs each pad smaller than
/// its axis; replicate an axis that is not empty. Negative pads are shape_errors.
template <class S>
tensor<S> pad(tensor<S> const& x, std::vector<long> const& pads, pad_mode mode = pad_mode::constant, double value = 0) {
  shape const& sh = x.shape();
  if (pads.size() % 2 != 0 || pads.size() / 2 > sh.rank())
    detail::throw_shape_error(
        "pad",
        "pads must be (before, after) pairs, at most one per axis (" + std::to_string(pads.size()) + " numbers given)",
        sh);
  std::vector<long> before(sh.rank(), 0), after(sh.rank(), 0);
  for (std::size_t p = 0; p < pads.size() / 2; ++p) {
    std::size_t const d = sh.rank() - 1 - p;
    before[d] = pads[2 * p];
    after[d] = pads[2 * p + 1];
    long const n = static_cast<long>(sh[d]);
    if (before[d] < 0 || after[d] < 0) detail::throw_shape_error("pad", "negative pads are not supported", sh);
    if (mode == pad_mode::reflect && (before[d] >= n || after[d] >= n))
      detail::throw_shape_error(
          "pad", "reflect padding must be smaller than the axis it pads (axis " + std::to_string(d) + ")", sh);
    if (mode == pad_mode::replicate && n == 0 && before[d] + after[d] > 0)
      detail::throw_shape_error("pad", "replicate padding of an empty axis", sh);
  }
  shape out = sh;
  for (std::size_t d = 0; d < sh.rank(); ++d) out[d] = sh[d] + static_cast<std::size_t>(before[d] + after[d]);
  auto const st = sh.strides();
  std::vector<std::size_t> src(out.size());
  detail::for_each_index(out, [&](std::size_t k, std::vector<std::size_t> const& at) {
    std::size_t s = 0;
    for (std::size_t d = 0; d < at.size(); ++d) {
      long const n = static_cast<long>(sh[d]);
      long i = static_cast<long>(at[d]) - before[d];
      if (i < 0 || i >= n) {
        if (mode == pad_mode::constant) {
          s = detail::no_source;
          break;
        }
        if (mode == pad_mode::reflect)
          i = i < 0 ? -i : 2 * (n - 1) - i;
        else
          i = i < 0 ? 0 : n - 1;
      }
      s += static_cast<std::size_t>(i) * st[d];
    }
    src[k] = s;
  });
  return detail::pick(x, out, src, value);
}

/// The values of x sorted along axis (ascending unless descending) and the positions they came
/// from (torch.sort): {values, indices}. The sort is stable and places NaN above every number.
template <class S>
std::pair<tensor<S>, tensor<long>> sort(tensor<S> const& x, long axis = -1, bool descending = false) {
  if (x.rank() == 0) return {x, tensor<long>::scalar(0)};
  std::size_t const ax = detail::normalize_axis("sort", axis, x.shape());
  std::vector<std::size_t> src(x.size());
  tensor<long> idx(x.shape());
  detail::for_each_sorted_line(x, ax, descending,
                               [&](std::size_t, std::size_t start, std::size_t stride, auto const& order) {
                                 for (std::size_t j = 0; j < order.size(); ++j) {
                                   src[start + j * stride] = start + order[j] * stride;
                                   idx.data()[start + j * stride] = static_cast<long>(order[j]);
                                 }
                               });
  return {detail::pick(x, x.shape(), src), idx};
}

/// The k largest (or smallest) values along axis, in order from the largest (smallest), and
/// their positions (torch.topk with sorted=True): {values, indices}. Equal values keep their
/// order; NaN counts as the largest value. shape_error if k exceeds the axis.
template <class S>
std::pair<tensor<S>, tensor<long>> topk(tensor<S> const& x, std::size_t k, long axis = -1, bool largest = true) {
  std::size_t const ax = x.rank() == 0 ? 0 : detail::normalize_axis("topk", axis, x.shape());
  std::size_t const n = x.rank() == 0 ? 1 : x.shape()[ax];
  if (k > n)
    detail::throw_shape_error("topk", "k = " + std::to_string(k) + " exceeds the extent " + std::to_string(n),
                              x.shape());
  if (x.rank() == 0)
    return k == 0 ? std::pair{tensor<S>(shape{0}), tensor<long>(shape{0})} : std::pair{x, tensor<long>::scalar(0)};
  shape out = x.shape();
  out[ax] = k;
  std::size_t const out_stride = out.strides()[ax];
  std::vector<std::size_t> src(out.size());
  tensor<long> idx(out);
  detail::for_each_sorted_line(x, ax, largest,
                               [&](std::size_t line, std::size_t start, std::size_t stride, auto const& order) {
                                 std::size_t const at = (line / out_stride) * out_stride * k + line % out_stride;
                                 for (std::size_t j = 0; j < k; ++j) {
                                   src[at + j * out_stride] = start + order[j] * stride;
                                   idx.data()[at + j * out_stride] = static_cast<long>(order[j]);
                                 }
                               });
  return {detail::pick(x, out, src), idx};
}

namespace detail {
template <class S>
tensor<long> arg_extreme(char const* op, tensor<S> const& x, long const* axis, bool keepdim, bool largest) {
  if (axis && x.size() == 0 && x.rank() > 0 && x.shape()[normalize_axis(op, *axis, x.shape())] != 0) {
    shape out = x.shape();  // lines along a non-empty axis, none of them: an empty result
    std::size_t const ax = normalize_axis(op, *axis, x.shape());
    if (keepdim)
      out[ax] = 1;
    else
      out.erase(ax);
    return tensor<long>(out);
  }
  if (x.size() == 0)
    throw_shape_error(op, "an empty tensor has no " + std::string(largest ? "largest" : "smallest") + " element",
                      x.shape());
  auto better = [&](auto const& a, auto const& b) {  // a strictly beats b (a NaN beats all; the first NaN wins)
    if (std::isnan(b)) return false;
    return std::isnan(a) || (largest ? a > b : a < b);
  };
  S const* e = x.data();
  if (!axis) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < x.size(); ++i)
      if (better(primal(e[i]), primal(e[best]))) best = i;
    return tensor<long>::scalar(static_cast<long>(best));
  }
  std::size_t const ax = normalize_axis(op, *axis, x.shape());
  std::size_t const n = x.shape()[ax], stride = x.shape().strides()[ax], lines = x.size() / n;
  shape out = x.shape();
  if (keepdim)
    out[ax] = 1;
  else
    out.erase(ax);
  tensor<long> r(out);
  for (std::size_t line = 0; line < lines; ++line) {
    std::size_t const start = (line / stride) * stride * n + line % stride;
    std::size_t best = 0;
    for (std::size_t j = 1; j < n; ++j)
      if (better(primal(e[start + j * stride]), primal(e[start + best * stride]))) best = j;
    r.data()[line] = static_cast<long>(best);
  }
  return r;
}
}  // namespace detail

/// The flat (row-major) position of the largest element, as torch.argmax: the first of equal
/// ones; NaN counts as the largest. Not differentiable; shape_error for an empty tensor.
template <class S>
tensor<long> argmax(tensor<S> const& x) {
  return detail::arg_extreme("argmax", x, nullptr, false, true);
}
/// The position of the largest element along axis, for each line (the axis removed, or kept
/// as extent 1 if keepdim), as torch.argmax(x, dim, keepdim).
template <class S>
tensor<long> argmax(tensor<S> const& x, long axis, bool keepdim = false) {
  return detail::arg_extreme("argmax", x, &axis, keepdim, true);
}
/// The flat position of the smallest element, as torch.argmin (NaN counts as the smallest).
template <class S>
tensor<long> argmin(tensor<S> const& x) {
  return detail::arg_extreme("argmin", x, nullptr, false, false);
}
/// The position of the smallest element along axis, as torch.argmin(x, dim, keepdim).
template <class S>
tensor<long> argmin(tensor<S> const& x, long axis, bool keepdim = false) {
  return detail::arg_extreme("argmin", x, &axis, keepdim, false);
}

// ---- the same on expressions: evaluated first, as conv2d and the reductions take them ----------

/// An expression that is not a tensor (evaluated before it is indexed).
template <class X>
concept tensor_expression_operand = tensor_operand<X> && !tensor_type<X>;

/// take of an expression.
template <tensor_expression_operand X, index_operand Ix>
auto take(X const& x, Ix const& indices) {
  return take(eval(x), indices);
}
/// index_select of an expression.
template <tensor_expression_operand X, index_operand Ix>
auto index_select(X const& x, long axis, Ix const& indices) {
  return index_select(eval(x), axis, indices);
}
/// gather of an expression.
template <tensor_expression_operand X, std::integral I>
auto gather(X const& x, long axis, tensor<I> const& index) {
  return gather(eval(x), axis, index);
}
/// masked_fill of an expression.
template <tensor_expression_operand X>
auto masked_fill(X const& x, tensor<bool> const& mask, double value) {
  return masked_fill(eval(x), mask, value);
}
/// pad of an expression.
template <tensor_expression_operand X>
auto pad(X const& x, std::vector<long> const& pads, pad_mode mode = pad_mode::constant, double value = 0) {
  return pad(eval(x), pads, mode, value);
}
/// sort of an expression.
template <tensor_expression_operand X>
auto sort(X const& x, long axis = -1, bool descending = false) {
  return sort(eval(x), axis, descending);
}
/// topk of an expression.
template <tensor_expression_operand X>
auto topk(X const& x, std::size_t k, long axis = -1, bool largest = true) {
  return topk(eval(x), k, axis, largest);
}
/// argmax of an expression.
template <tensor_expression_operand X, class... A>
tensor<long> argmax(X const& x, A... axis_keepdim) {
  return argmax(eval(x), axis_keepdim...);
}
/// argmin of an expression.
template <tensor_expression_operand X, class... A>
tensor<long> argmin(X const& x, A... axis_keepdim) {
  return argmin(eval(x), axis_keepdim...);
}

/// One-hot rows of the labels (torch.nn.functional.one_hot): shape labels' + [classes], with
/// ones of type T at the labels' positions. classes < 0 takes the largest label + 1. A label
/// outside [0, classes) is a shape_error.
template <class T = double, index_operand L>
tensor<T> one_hot(L const& labels, long classes = -1) {
  auto const& ix = detail::as_index_tensor(labels);
  if (classes < 0) {
    long top = -1;
    for (auto v : ix.flat()) top = std::max(top, static_cast<long>(v));
    classes = top + 1;
  }
  std::size_t const c = static_cast<std::size_t>(classes);
  shape out = ix.shape();
  out.push_back(c);
  tensor<T> r(out, T(0));
  for (std::size_t k = 0; k < ix.size(); ++k)
    r.data()[k * c + detail::checked_index("one_hot", ix.data()[k], c, false, ix.shape())] = T(1);
  return r;
}

}  // namespace adx
