// adx: concat and stack (torch.cat / torch.stack, tf.concat / tf.stack).
//
// For plain numbers and dual elements the result is a copy. For var elements (with gradients
// enabled and an active part) it is ONE tape node, a copy whose outputs are one new block of
// variables kept as values (detail::var_values): later products and expressions then read it as
// one block instead of element by element. The node keeps each output's source index; its
// backward pass adds each output's adjoint into its source's.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "adx/reverse/tape.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

/// The tape node of a concatenation of var<T> tensors: output i is a copy of variable index[i].
template <class T>
struct copy_node final : tape<T>::template node_with_inputs<copy_node<T>> {
  std::size_t n = 0;
  index_type* index;
  copy_node(tape<T>& tp, std::size_t elements) : n(elements), index(tp.template node_array<index_type>(elements)) {}
  void backward(T* adj) const override {
    T const* a = adj + this->first;
    for (std::size_t i = 0; i < n; ++i) adj[index[i]] += a[i];
  }
  template <class F>
  bool for_inputs(F&& f) const {
    for (std::size_t i = 0; i < n; ++i)
      if (f(index[i], 1)) return true;
    return false;
  }
  bool keeps_values(std::uint8_t const*) const override { return false; }  // a copy: every partial is 1
  bool nonfinite() const override { return false; }                        // every partial is 1
  std::size_t bytes() const noexcept override { return n * sizeof(index_type); }
};

/// The shape of the concatenation of parts along axis ax (checked: same rank, equal extents
/// off the axis).
template <class S>
shape concat_shape(char const* op, std::span<tensor<S> const> parts, std::size_t ax) {
  shape out = parts.front().shape();
  out[ax] = 0;
  for (auto const& p : parts) {
    if (p.rank() != out.rank()) throw_shape_error(op, "the tensors' ranks differ", parts.front().shape(), p.shape());
    for (std::size_t d = 0; d < out.rank(); ++d)
      if (d != ax && p.shape()[d] != out[d])
        throw_shape_error(op, "the tensors' extents differ off axis " + std::to_string(ax), parts.front().shape(),
                          p.shape());
    out[ax] += p.shape()[ax];
  }
  return out;
}

/// Calls f(part, offset, count) for the runs of the concatenation in output order: for each
/// row of the axes before ax, each part's row (count consecutive elements from offset).
template <class S, class F>
void for_each_concat_run(std::span<tensor<S> const> parts, shape const& out, std::size_t ax, F&& f) {
  std::size_t inner = 1;
  for (std::size_t d = ax + 1; d < out.rank(); ++d) inner *= out[d];
  std::size_t outer = 1;
  for (std::size_t d = 0; d < ax; ++d) outer *= out[d];
  for (std::size_t o = 0; o < outer; ++o)
    for (auto const& p : parts) {
      std::size_t const run = p.shape()[ax] * inner;
      f(p, o * run, run);
    }
}

/// concat over var<T> elements: one copy_node (none if every element is a constant).
template <class S>
tensor<S> concat_recorded(std::span<tensor<S> const> parts, shape const& out, std::size_t ax) {
  using T = value_type_t<S>;
  auto& tp = tape<T>::current();
  std::size_t const n = out.size();
  epoch_type const ep = tp.epoch();
  auto const cp = tp.checkpoint();
  auto nd = tp.template make_node<copy_node<T>>(tp, n);
  index_type* const ix = nd->index;
  auto made = make_var_values<S>(n, 0, ep);  // the outputs' values and block, one allocation
  auto& block = made.first;
  T* const v = made.second;
  index_type any_index = 0;
  std::uint64_t stray_epoch = 0;
  std::size_t at = 0;
  for_each_concat_run(parts, out, ax, [&](tensor<S> const& p, std::size_t from, std::size_t count) {
    if (T const* kept = tensor_access::kept_values(p)) {  // a block: variables first + k
      var_block const b = tensor_access::block(p);
      std::copy_n(kept + from, count, v + at);
      for (std::size_t k = 0; k < count; ++k) ix[at + k] = b.first + static_cast<index_type>(from + k);
      any_index |= b.first;
      stray_epoch |= stray_epoch_bits(b.epoch, ep);
    } else {
      S const* e = p.data() + from;
      for (std::size_t k = 0; k < count; ++k) {
        v[at + k] = e[k].val();
        ix[at + k] = e[k].index();
        any_index |= e[k].index();
        stray_epoch |= stray_epoch_bits(e[k].epoch(), ep);
      }
    }
    at += count;
  });
  if (stray_epoch != 0) {
    try {
      epoch_type live = 0;
      for (auto const& p : parts)
        if (tensor_access::kept_values(p))
          tp.check_live(tensor_access::block(p).epoch);
        else
          for (S const& x : p) tp.check_live(x.epoch(), live);
    } catch (...) {
      nd.reset();  // before its memory is given back
      tp.rollback(cp);
      throw;
    }
  }
  if (any_index == 0) {  // constants only: no node
    nd.reset();
    tp.rollback(cp);
    return tensor<S>::generate(out, [&](std::size_t i) { return S::constant(v[i]); });
  }
  block->first = tp.record_node(std::move(nd), n, "concat");
  return tensor_access::from_block<S>(out, std::move(block));
}

}  // namespace detail

/// The tensors joined along `axis` (negative counts from the end), as torch.cat: they must
/// have the same rank and the same extents on every other axis.
template <class S>
tensor<S> concat(std::span<tensor<S> const> parts, long axis = 0) {
  if (parts.empty()) throw shape_error("adx: concat: needs at least one tensor");
  if (parts.front().rank() == 0)
    detail::throw_shape_error("concat", "rank-0 tensors have no axis to join along", parts.front().shape());
  std::size_t const ax = detail::normalize_axis("concat", axis, parts.front().shape());
  shape const out = detail::concat_shape("concat", parts, ax);
  if constexpr (is_reverse_v<S>)
    if (out.size() != 0 && detail::grad_enabled()) return detail::concat_recorded(parts, out, ax);
  std::vector<S> elements;
  elements.reserve(out.size());
  detail::for_each_concat_run(parts, out, ax, [&](tensor<S> const& p, std::size_t from, std::size_t count) {
    S const* e = p.data() + from;
    elements.insert(elements.end(), e, e + count);
  });
  return tensor<S>(out, elements);
}
template <class S>
tensor<S> concat(std::vector<tensor<S>> const& parts, long axis = 0) {
  return concat(std::span<tensor<S> const>(parts), axis);
}
template <class S>
tensor<S> concat(std::initializer_list<tensor<S>> parts, long axis = 0) {
  return concat(std::span<tensor<S> const>(parts.begin(), parts.size()), axis);
}

/// The tensors (all of one shape) stacked along a new axis at position `axis` (0 .. rank;
/// negative counts from the end of the result's axes), as torch.stack.
template <class S>
tensor<S> stack(std::vector<tensor<S>> const& parts, long axis = 0) {
  if (parts.empty()) throw shape_error("adx: stack: needs at least one tensor");
  shape const& sh = parts.front().shape();
  long const r = static_cast<long>(sh.rank()) + 1;
  if (axis < -r || axis >= r)
    detail::throw_shape_error(
        "stack", "axis " + std::to_string(axis) + " is out of range for the result's rank " + std::to_string(r), sh);
  std::size_t const ax = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
  shape with_axis;
  for (std::size_t d = 0; d <= sh.rank(); ++d) {
    if (d == ax) with_axis.push_back(1);
    if (d < sh.rank()) with_axis.push_back(sh[d]);
  }
  std::vector<tensor<S>> lifted;
  lifted.reserve(parts.size());
  for (auto const& p : parts) {
    if (p.shape() != sh) detail::throw_shape_error("stack", "the tensors' shapes differ", sh, p.shape());
    lifted.push_back(p.reshape(with_axis));
  }
  return concat(lifted, static_cast<long>(ax));
}
template <class S>
tensor<S> stack(std::initializer_list<tensor<S>> parts, long axis = 0) {
  return stack(std::vector<tensor<S>>(parts), axis);
}

}  // namespace adx
