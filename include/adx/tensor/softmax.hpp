// SPDX-License-Identifier: MIT
// adx: what is built from the reductions: softmax, log_softmax (for var elements one tape node
// for all the lines), dot and outer.
#pragma once

#include <cstddef>
#include <utility>

#include "adx/core/source_location.hpp"
#include "adx/tensor/reduce.hpp"

namespace adx {
namespace detail {

/// The tape node of log_softmax over var<T> elements, one for all the lines: out_j = x_j -
/// logsumexp(line). It keeps each input's index and softmax value; the backward pass is, per
/// line, dx_j += a_j - softmax_j * sum_k a_k (no separate logsumexp and subtraction nodes).
template <class T>
struct log_softmax_node final : tape<T>::template node_with_inputs<log_softmax_node<T>> {
  std::size_t lines, len, inner;  ///< line l: elements (l / inner) * len * inner + l % inner + j * inner
  stored_operands<T> stored;      ///< per element, in the tensor's order: input index, softmax
  /// A block input's first variable (no indices are stored: element k is input_first + k); 0
  /// for elements of their own.
  index_type input_first;
  log_softmax_node(tape<T>& tp, std::size_t l, std::size_t n, std::size_t in, index_type block_first)
      : lines(l), len(n), inner(in), stored(tp, l * n, block_first == 0), input_first(block_first) {}
  void backward(T* adj) const override {
    T const* a = adj + this->first;
    for (std::size_t l = 0; l < lines; ++l) {
      std::size_t const o = (l / inner) * len * inner + l % inner;
      T g = constant<T>(0);
      for (std::size_t j = 0; j < len; ++j) g += a[o + j * inner];
      for (std::size_t j = 0; j < len; ++j) {
        std::size_t const k = o + j * inner;
        // index 0 (a constant): slot 0, never read
        adj[stored.index ? stored.index[k] : input_first + static_cast<index_type>(k)] += a[k] - stored.partial[k] * g;
      }
    }
  }
  template <class F>
  bool for_inputs(F&& f) const {
    if (stored.index) return stored.for_inputs(f);
    return f(input_first, stored.count);
  }
  bool nonfinite() const override { return stored.nonfinite(); }  // the softmax values
  std::size_t bytes() const noexcept override { return stored.bytes(); }
};

/// log_softmax of var<T> elements along an axis as one node; other cases (no active element,
/// no_grad, empty) as x - logsumexp(x), which records nothing or gives constants there.
template <class S>
tensor<S> log_softmax_reverse(tensor<S> const& t, long axis) {
  using T = value_type_t<S>;
  std::size_t const ax = normalize_axis("log_softmax", axis, t.shape());
  std::size_t const len = t.shape()[ax];
  std::size_t inner = 1;
  for (std::size_t d = ax + 1; d < t.rank(); ++d) inner *= t.shape()[d];
  std::size_t const n = t.size(), lines = len ? n / len : 0;
  auto& tp = tape<T>::current();
  var_reader<S> const in(t);
  if (!in.any_active(n, tp) || !grad_enabled()) return eval(t - logsumexp(t, axis, true));
  // the outputs are one block, kept as their values (detail::var_values)
  epoch_type const ep = tp.epoch();
  auto made = make_var_values<S>(n, 0, ep);
  T* const out = made.second;
  auto nd = tp.template make_node<log_softmax_node<T>>(tp, lines, len, inner, in.block.first);
  index_type* const ix = nd->stored.index;  // null for a block
  T* const soft = nd->stored.partial;
  std::vector<T> x(len), p(len);
  for (std::size_t l = 0; l < lines; ++l) {
    std::size_t const o = (l / inner) * len * inner + l % inner;
    for (std::size_t j = 0; j < len; ++j) x[j] = in.value(o + j * inner);
    T const lse = value_and_partials<logsumexp_reduction>(std::span<T const>(x), p.data());
    for (std::size_t j = 0; j < len; ++j) {
      std::size_t const k = o + j * inner;
      if (ix) ix[k] = in.index(k);
      soft[k] = p[j];
      out[k] = to_value<T>(x[j] - lse);
    }
  }
  made.first->first = tp.record_node(std::move(nd), n, "log_softmax");
  return tensor_access::from_block<S>(t.shape(), std::move(made.first));
}

}  // namespace detail

/// softmax along an axis (default the last): exp(x - max) / sum(exp(x - max)).
template <tensor_operand X>
auto softmax(X const& x, long axis = -1, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const t = eval(x);
  std::size_t const ax = detail::normalize_axis("softmax", axis, t.shape());  // a bad axis is named as softmax's
  if (t.shape()[ax] == 0) return std::remove_const_t<decltype(t)>(t);         // empty: as torch and log_softmax
  auto const m = stop_gradient(max(t, axis, true));  // any extreme: max(t, axis) takes the first
  auto const e = eval(exp(t - m));
  return eval(e / sum(e, axis, true));
}
/// log_softmax along an axis (default the last): x - logsumexp(x); for var elements one tape
/// node.
template <tensor_operand X>
auto log_softmax(X const& x, long axis = -1, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const t = eval(x);
  detail::normalize_axis("log_softmax", axis, t.shape());  // a bad axis is named as log_softmax's
  if constexpr (is_reverse_v<typename decltype(t)::value_type>)
    return detail::log_softmax_reverse(t, axis);
  else
    return eval(t - logsumexp(t, axis, true));
}

/// The inner product of two rank-1 tensors of equal length.
template <tensor_operand X, tensor_operand Y>
auto dot(X const& x, Y const& y, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const a = eval(x);
  auto const b = eval(y);
  if (a.rank() != 1 || b.rank() != 1 || a.size() != b.size())
    detail::throw_shape_error("dot", "needs two rank-1 tensors of the same length", a.shape(), b.shape());
  return sum(a * b);
}
/// The outer product of two rank-1 tensors: [n] x [m] -> [n, m].
template <tensor_operand X, tensor_operand Y>
auto outer(X const& x, Y const& y, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const a = eval(x);
  auto const b = eval(y);
  if (a.rank() != 1 || b.rank() != 1)
    detail::throw_shape_error("outer", "needs two rank-1 tensors", a.shape(), b.shape());
  return eval(a.reshape({static_cast<long>(a.size()), 1L}) * b.reshape({1L, static_cast<long>(b.size())}));
}

}  // namespace adx
