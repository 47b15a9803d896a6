// SPDX-License-Identifier: MIT
// adx: convolution and pooling, as torch.nn.functional's conv1d, conv2d, max_pool2d and
// avg_pool2d (NCHW layout; stride, padding, dilation, groups; a bias).
//
// A convolution is one GEMM per sample and group over the input's window matrix (im2col), and
// over var elements one tape node whose backward pass is two GEMMs per sample and group
// (tensor/conv_node.hpp): BLAS for var<double> and var<float>, the portable kernel for nested
// element types, so that second derivatives of a network's loss (gradient penalties,
// Hessian-vector products) work. Pooling picks each window's elements (tensor/indexing.hpp's
// pick: the input's own variables, or the padding's constant) and reduces them: max (the
// gradient to the first largest element of the window, the one torch's indices name, never
// the padding) or mean.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "adx/tensor/conv_node.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/indexing.hpp"
#include "adx/tensor/linalg.hpp"
#include "adx/tensor/reduce.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {

/// A size per spatial axis, height then width: {h, w}, or one number for both, as torch's int
/// or tuple arguments (`.padding = 1` and `.padding = {1}` pad both axes).
struct size2 {
  std::size_t h = 0;  ///< along the height
  std::size_t w = 0;  ///< along the width
  constexpr size2() = default;
  /// Both axes the same.
  constexpr size2(std::size_t both) : h(both), w(both) {}
  /// Height and width.
  constexpr size2(std::size_t height, std::size_t width) : h(height), w(width) {}
  /// Axis 0 (height) or 1 (width).
  constexpr std::size_t operator[](std::size_t axis) const { return axis == 0 ? h : w; }
  /// The same sizes.
  friend constexpr bool operator==(size2 const&, size2 const&) = default;
};

/// conv2d's options, torch's keywords: one number per spatial axis (height, width), or one for
/// both.
struct conv2d_options {
  size2 stride{1};         ///< the step between windows
  size2 padding{0};        ///< zeros added on both sides
  size2 dilation{1};       ///< the step between a window's taps
  std::size_t groups = 1;  ///< channel groups convolved apart
};

/// conv1d's options, torch's keywords.
struct conv1d_options {
  std::size_t stride = 1;    ///< the step between windows
  std::size_t padding = 0;   ///< zeros added on both sides
  std::size_t dilation = 1;  ///< the step between a window's taps
  std::size_t groups = 1;    ///< channel groups convolved apart
};

/// Pooling's options (torch's max_pool2d and avg_pool2d keywords; ceil_mode is false).
struct pool2d_options {
  size2 stride{0};                ///< the step between windows; 0 (the default): the kernel's size
  size2 padding{0};               ///< added on both sides (never chosen by max, 0 for avg)
  size2 dilation{1};              ///< max_pool2d: the step between a window's taps
  bool count_include_pad = true;  ///< avg_pool2d: the padding counts in the mean
};

namespace detail {

/// The geometry of sliding a kh x kw window over the spatial axes of an [N, C, H, W] input,
/// checked: shape_error naming op if the input is not of rank 4, a size is 0, or the (dilated)
/// kernel is larger than the padded input.
inline window_geometry windows(char const* op, shape const& x, std::size_t kh, std::size_t kw, size2 st, size2 pad,
                               size2 dil) {
  if (x.rank() != 4) throw_shape_error(op, "the input must be [batch, channels, height, width]", x);
  if (st[0] == 0 || st[1] == 0 || dil[0] == 0 || dil[1] == 0 || kh == 0 || kw == 0)
    throw_shape_error(op, "the kernel, stride and dilation must be positive", x);
  long const eh = static_cast<long>(x[2] + 2 * pad[0]) - static_cast<long>(dil[0] * (kh - 1) + 1);
  long const ew = static_cast<long>(x[3] + 2 * pad[1]) - static_cast<long>(dil[1] * (kw - 1) + 1);
  if (eh < 0 || ew < 0)
    throw_shape_error(op,
                      "the (dilated) kernel, " + std::to_string(dil[0] * (kh - 1) + 1) + " x " +
                          std::to_string(dil[1] * (kw - 1) + 1) + ", is larger than the padded input",
                      x);
  return {x[0],
          x[1],
          x[2],
          x[3],
          kh,
          kw,
          static_cast<std::size_t>(eh) / st[0] + 1,
          static_cast<std::size_t>(ew) / st[1] + 1,
          {st[0], st[1]},
          {pad[0], pad[1]},
          {dil[0], dil[1]}};
}

/// The windows of every channel apart, picked (as their elements): rows (b, ch, y, x), columns
/// (i, j); the padding is `fill`, or with repeat_first the window's first tap inside the input
/// (max pooling: the maximum is the same, and a tie is never the padding's, as torch's indices
/// never name the padding; a window with no tap inside takes `fill`).
template <class S>
tensor<S> pool_columns(tensor<S> const& x, window_geometry const& g, double fill, bool repeat_first = false) {
  std::size_t const cols = g.kh * g.kw;
  std::vector<std::size_t> src(g.n * g.c * g.oh * g.ow * cols);
  std::size_t k = 0;
  for (std::size_t b = 0; b < g.n; ++b)
    for (std::size_t ch = 0; ch < g.c; ++ch)
      for (std::size_t y = 0; y < g.oh; ++y)
        for (std::size_t x0 = 0; x0 < g.ow; ++x0) {
          auto const at = [&](long r, long q) {
            return r < 0 || q < 0
                       ? no_source
                       : ((b * g.c + ch) * g.h + static_cast<std::size_t>(r)) * g.w + static_cast<std::size_t>(q);
          };
          std::size_t pad = no_source;  // what the padding's taps read
          for (std::size_t i = 0; repeat_first && pad == no_source && i < g.kh; ++i)
            for (std::size_t j = 0; pad == no_source && j < g.kw; ++j) pad = at(g.row(y, i), g.col(x0, j));
          for (std::size_t i = 0; i < g.kh; ++i)
            for (std::size_t j = 0; j < g.kw; ++j) {
              std::size_t const s = at(g.row(y, i), g.col(x0, j));
              src[k++] = s == no_source ? pad : s;
            }
        }
  return pick(x, shape{g.n * g.c * g.oh * g.ow, cols}, src, fill);
}

/// conv2d's checks, then the convolution into the higher-level element type of x and w.
template <class SX, class SW, class SB>
auto conv2d_checked(tensor<SX> const& x, tensor<SW> const& w, tensor<SB> const* b, conv2d_options const& o) {
  using S = std::conditional_t<(level_v<SX> >= level_v<SW>), SX, SW>;
  static_assert(std::is_same_v<S, SX> || level_v<SX> < level_v<S>,
                "adx: conv2d of two different AD element types at the same nesting level");
  static_assert(std::is_floating_point_v<innermost_t<SX>> && std::is_floating_point_v<innermost_t<SW>>,
                "adx: conv2d needs floating-point elements (convert an integer tensor first, e.g. "
                "tensor<double>(x)), as torch's convolution refuses integer tensors");
  static_assert(std::is_same_v<innermost_t<SX>, innermost_t<SW>>,
                "adx: conv2d of float and double elements: convert one side first (torch refuses mixed dtypes)");
  if (w.rank() != 4) throw_shape_error("conv2d", "the weight must be [out, in / groups, kh, kw]", w.shape());
  std::size_t const oc = w.shape()[0], groups = o.groups;
  window_geometry const g = windows("conv2d", x.shape(), w.shape()[2], w.shape()[3], o.stride, o.padding, o.dilation);
  if (groups == 0 || g.c % groups != 0 || oc % groups != 0 || w.shape()[1] * groups != g.c)
    throw_shape_error("conv2d",
                      "the channels (" + std::to_string(g.c) + " in, " + std::to_string(oc) +
                          " out) and the weight's " + "in / groups do not fit groups = " + std::to_string(groups),
                      x.shape(), w.shape());
  if (b && b->shape() != shape{oc})
    throw_shape_error("conv2d", "the bias must have one element per output channel", w.shape(), b->shape());
  static_assert(level_v<SB> <= level_v<S>, "adx: conv2d: the bias is at a higher AD level than the input and weight");
  return conv2d_run<S>(x, w, b, g, oc, groups);
}

}  // namespace detail

/// The 2-D convolution (cross-correlation, as torch's) of x [N, C, H, W] with w [OC, C / groups,
/// KH, KW]: [N, OC, OH, OW], OH = (H + 2 padding - dilation (KH - 1) - 1) / stride + 1. x and w
/// are tensors or expressions, and may have different element types (numbers and a
/// parameter's variables, say).
template <tensor_operand X, tensor_operand W>
auto conv2d(X const& x, W const& w, conv2d_options const& o = {}) {
  return detail::conv2d_checked(eval(x), eval(w), static_cast<tensor<double> const*>(nullptr), o);
}

/// conv2d plus a bias of shape [OC], added to every output position of its channel.
template <tensor_operand X, tensor_operand W, class SB>
auto conv2d(X const& x, W const& w, tensor<SB> const& bias, conv2d_options const& o = {}) {
  return detail::conv2d_checked(eval(x), eval(w), &bias, o);
}

/// The 1-D convolution of x [N, C, L] with w [OC, C / groups, K] (and a bias [OC]): conv2d over
/// a height of 1.
template <tensor_operand X, tensor_operand W>
auto conv1d(X const& xe, W const& we, conv1d_options const& o = {}) {
  auto const x = eval(xe);
  auto const w = eval(we);
  if (x.rank() != 3) detail::throw_shape_error("conv1d", "the input must be [batch, channels, length]", x.shape());
  if (w.rank() != 3) detail::throw_shape_error("conv1d", "the weight must be [out, in / groups, k]", w.shape());
  shape const& xs = x.shape();
  shape const& ws = w.shape();
  auto const y = conv2d(x.reshape(shape{xs[0], xs[1], 1, xs[2]}), w.reshape(shape{ws[0], ws[1], 1, ws[2]}),
                        conv2d_options{{1, o.stride}, {0, o.padding}, {1, o.dilation}, o.groups});
  return y.reshape(shape{y.shape()[0], y.shape()[1], y.shape()[3]});
}
/// conv1d plus a bias of shape [OC].
template <tensor_operand X, tensor_operand W, class SB>
auto conv1d(X const& x, W const& w, tensor<SB> const& bias, conv1d_options const& o = {}) {
  auto const y = conv1d(x, w, o);
  if (bias.shape() != shape{y.shape()[1]})
    detail::throw_shape_error("conv1d", "the bias must have one element per output channel", y.shape(), bias.shape());
  using R = std::remove_cvref_t<decltype(eval(y + bias.reshape(shape{1, bias.size(), 1})))>;
  return R(eval(y + bias.reshape(shape{1, bias.size(), 1})));
}

/// The largest element of each kh x kw window of every channel of x [N, C, H, W] (torch's
/// max_pool2d): [N, C, OH, OW]. The padding never wins (it counts as -inf, and a tie with it goes
/// to the input's element); the gradient goes to the first largest element of each window.
template <class S>
tensor<S> max_pool2d(tensor<S> const& x, size2 kernel, pool2d_options const& o = {}) {
  static_assert(std::is_floating_point_v<innermost_t<S>>,
                "adx: max_pool2d needs floating-point elements (convert an integer tensor first)");
  size2 const st{o.stride[0] ? o.stride[0] : kernel[0], o.stride[1] ? o.stride[1] : kernel[1]};
  detail::window_geometry const g =
      detail::windows("max_pool2d", x.shape(), kernel[0], kernel[1], st, o.padding, o.dilation);
  if (2 * o.padding[0] > kernel[0] || 2 * o.padding[1] > kernel[1])
    detail::throw_shape_error("max_pool2d", "the padding must be at most half the kernel", x.shape());
  auto const cols = detail::pool_columns(x, g, -std::numeric_limits<double>::infinity(), /*repeat_first=*/true);
  return tensor<S>(max(cols, 1)).reshape(shape{g.n, g.c, g.oh, g.ow});
}

/// The mean of each kh x kw window of every channel of x [N, C, H, W] (torch's avg_pool2d):
/// [N, C, OH, OW]. The padding is zeros, counted in the mean unless count_include_pad is false.
template <class S>
tensor<S> avg_pool2d(tensor<S> const& x, size2 kernel, pool2d_options const& o = {}) {
  static_assert(std::is_floating_point_v<innermost_t<S>>,
                "adx: avg_pool2d needs floating-point elements (convert an integer tensor first)");
  size2 const st{o.stride[0] ? o.stride[0] : kernel[0], o.stride[1] ? o.stride[1] : kernel[1]};
  if (o.dilation != size2{1}) detail::throw_shape_error("avg_pool2d", "has no dilation (torch's neither)", x.shape());
  detail::window_geometry const g =
      detail::windows("avg_pool2d", x.shape(), kernel[0], kernel[1], st, o.padding, o.dilation);
  if (2 * o.padding[0] > kernel[0] || 2 * o.padding[1] > kernel[1])
    detail::throw_shape_error("avg_pool2d", "the padding must be at most half the kernel", x.shape());
  auto const cols = detail::pool_columns(x, g, 0.0);
  shape const out{g.n, g.c, g.oh, g.ow};
  if (o.count_include_pad) return tensor<S>(sum(cols, 1) / static_cast<double>(kernel[0] * kernel[1])).reshape(out);
  tensor<double> counts(shape{cols.shape()[0]});  // the taps of each window inside the input
  for (std::size_t r = 0; r < counts.size(); ++r) {
    std::size_t const x0 = r % g.ow, y = (r / g.ow) % g.oh;
    double in = 0;
    for (std::size_t i = 0; i < g.kh; ++i)
      for (std::size_t j = 0; j < g.kw; ++j) in += g.row(y, i) >= 0 && g.col(x0, j) >= 0 ? 1 : 0;
    counts.data()[r] = in;
  }
  return tensor<S>(eval(sum(cols, 1) / counts)).reshape(out);
}

/// max_pool2d of an expression, evaluated first.
template <tensor_operand X>
requires(!tensor_type<X>) auto max_pool2d(X const& x, size2 kernel, pool2d_options const& o = {}) {
  return max_pool2d(eval(x), kernel, o);
}
/// avg_pool2d of an expression, evaluated first.
template <tensor_operand X>
requires(!tensor_type<X>) auto avg_pool2d(X const& x, size2 kernel, pool2d_options const& o = {}) {
  return avg_pool2d(eval(x), kernel, o);
}

}  // namespace adx
