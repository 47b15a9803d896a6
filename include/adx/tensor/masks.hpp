// SPDX-License-Identifier: MIT
// adx: comparisons of tensors, elementwise with broadcasting: `a < b` is a tensor<bool> mask
// of the primal values (no derivative flows through a comparison), for where(mask, a, b).
#pragma once

#include <array>
#include <cstddef>

#include "adx/tensor/elementwise.hpp"

namespace adx {

namespace detail {
struct less_op {
  static constexpr char const* name = "less";
  bool operator()(double a, double b) const { return a < b; }
};
struct greater_op {
  static constexpr char const* name = "greater";
  bool operator()(double a, double b) const { return a > b; }
};
struct less_equal_op {
  static constexpr char const* name = "less_equal";
  bool operator()(double a, double b) const { return a <= b; }
};
struct greater_equal_op {
  static constexpr char const* name = "greater_equal";
  bool operator()(double a, double b) const { return a >= b; }
};
struct equal_op {
  static constexpr char const* name = "equal";
  bool operator()(double a, double b) const { return a == b; }
};
struct not_equal_op {
  static constexpr char const* name = "not_equal";
  bool operator()(double a, double b) const { return a != b; }
};

template <class X>
auto eval_operand(X const& x) {
  if constexpr (tensor_operand<X>)
    return eval(x);
  else
    return x;
}
template <class X>
adx::shape shape_of(X const& x) {
  if constexpr (tensor_type<X>)
    return x.shape();
  else
    return {};
}
template <class X>
stride_array strides_for(X const& x, adx::shape const& out) {
  if constexpr (tensor_type<X>)
    return broadcast_strides(x.shape(), out);
  else
    return {};
}
template <class X>
decltype(auto) element(X const& x, std::size_t o) {
  if constexpr (tensor_type<X>)
    return x.data()[o];
  else
    return (x);
}
/// Compares the primal values of two tensor operands elementwise into a tensor<bool>.
template <class Op, class X, class Y>
tensor<bool> compare(X const& x, Y const& y) {
  auto ex = eval_operand(x);
  auto ey = eval_operand(y);
  adx::shape const sh = broadcast_shapes(shape_of(ex), shape_of(ey), Op::name);
  tensor<bool> out(sh);
  bool* o = out.data();
  std::array<stride_array, 2> const st{strides_for(ex, sh), strides_for(ey, sh)};
  multi_index<2> at{sh, st};
  for (std::size_t i = 0; i < out.size(); ++i) {
    o[i] = Op{}(static_cast<double>(primal_of(element(ex, at.off[0]))),
                static_cast<double>(primal_of(element(ey, at.off[1]))));
    at.next();
  }
  return out;
}
}  // namespace detail

#define ADX_TENSOR_COMPARISON(op, cls)         \
  template <class X, class Y>                  \
  requires tensor_operands2<X, Y> tensor<bool> \
  operator op(X const& x, Y const& y) { return detail::compare<detail::cls>(x, y); }
ADX_TENSOR_COMPARISON(<, less_op)
ADX_TENSOR_COMPARISON(>, greater_op)
ADX_TENSOR_COMPARISON(<=, less_equal_op)
ADX_TENSOR_COMPARISON(>=, greater_equal_op)
ADX_TENSOR_COMPARISON(==, equal_op)
ADX_TENSOR_COMPARISON(!=, not_equal_op)
#undef ADX_TENSOR_COMPARISON

}  // namespace adx
