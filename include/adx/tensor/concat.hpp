// SPDX-License-Identifier: MIT
// adx: concat and stack (torch.cat / torch.stack, tf.concat / tf.stack).
//
// For plain numbers and dual elements the result is a copy. For var elements (with gradients
// enabled and an active part) it is ONE tape node, a copy whose outputs are one new block of
// variables kept as values (detail::var_values): later products and expressions then read it as
// one block instead of element by element. The node keeps each output's source index; its
// backward pass adds each output's adjoint into its source's.
#pragma once

#include <algorithm>
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

/// The tape node of a concatenation of var<T> tensors: output i is a copy of one variable. The
/// outputs come in runs: a run copied from a part kept as a block costs one index (consecutive
/// variables), the others keep each output's source index (adjacent ones make one run). The
/// backward pass adds each output's adjoint into its source's: a streaming add per block run.
template <class T>
struct copy_node final : tape<T>::template node_with_inputs<copy_node<T>> {
  struct run {
    index_type at;     ///< the run's first output
    index_type count;  ///< its outputs
    index_type first;  ///< a block run's first source variable; 0: the sources are index[at ..]
  };
  std::size_t n = 0;
  std::size_t runs = 0;
  run* run_list;
  index_type* index;  ///< the sources of the outputs of element runs (null if there are none)
  copy_node(tape<T>& tp, std::size_t elements, std::size_t run_count, bool indices)
      : n(elements),
        run_list(tp.template node_array<run>(run_count)),
        index(indices ? tp.template node_array<index_type>(elements) : nullptr) {}
  void backward(T* adj) const override {
    T const* a = adj + this->first;
    for (std::size_t r = 0; r < runs; ++r) {
      run const& u = run_list[r];
      if (u.first != 0) {
        T* const d = adj + u.first;
        for (std::size_t k = 0; k < u.count; ++k) d[k] += a[u.at + k];
      } else {
        for (std::size_t k = u.at; k < u.at + u.count; ++k) adj[index[k]] += a[k];
      }
    }
  }
  template <class F>
  bool for_inputs(F&& f) const {
    for (std::size_t r = 0; r < runs; ++r) {
      run const& u = run_list[r];
      if (u.first != 0) {
        if (f(u.first, u.count)) return true;
      } else {
        for (std::size_t k = u.at; k < u.at + u.count; ++k)
          if (f(index[k], 1)) return true;
      }
    }
    return false;
  }
  bool keeps_values(std::uint8_t const*) const override { return false; }  // a copy: every partial is 1
  bool nonfinite() const override { return false; }                        // every partial is 1
  std::size_t bytes() const noexcept override { return runs * sizeof(run) + (index ? n * sizeof(index_type) : 0); }
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
  std::size_t outer = 1;
  for (std::size_t d = 0; d < ax; ++d) outer *= out[d];
  auto const kept_block = [](tensor<S> const& p) {
    return tensor_access::kept_values(p) != nullptr && tensor_access::block(p).first != 0;
  };
  // a block's rows as runs when they are long enough to pay for a run (12 bytes, against 4 for
  // an output's index); otherwise every output keeps its index
  std::size_t const run_count = outer * parts.size();
  bool const block_runs = n >= 4 * run_count;
  bool const indices = !block_runs || !std::all_of(parts.begin(), parts.end(), kept_block);
  auto nd = tp.template make_node<copy_node<T>>(tp, n, run_count, indices);
  auto& node = *nd;
  auto made = make_var_values<S>(n, 0, ep);  // the outputs' values and block, one allocation
  auto& block = made.first;
  T* const v = made.second;
  index_type any_index = 0;
  std::uint64_t stray_epoch = 0;
  std::size_t at = 0;
  auto add_run = [&](index_type first, std::size_t count) {
    using run = typename copy_node<T>::run;
    if (first == 0 && node.runs != 0) {  // adjacent element runs make one
      run& last = node.run_list[node.runs - 1];
      if (last.first == 0) {
        last.count += static_cast<index_type>(count);
        return;
      }
    }
    node.run_list[node.runs++] = run{static_cast<index_type>(at), static_cast<index_type>(count), first};
  };
  for_each_concat_run(parts, out, ax, [&](tensor<S> const& p, std::size_t from, std::size_t count) {
    if (count == 0) return;
    if (T const* kept = tensor_access::kept_values(p)) {  // values without elements
      var_block const b = tensor_access::block(p);
      std::copy_n(kept + from, count, v + at);
      index_type const first = b.first + static_cast<index_type>(from);
      if (block_runs && b.first != 0) {
        add_run(first, count);
      } else {
        // a kept block of constants (first 0, which no operation makes today) keeps index 0
        for (std::size_t k = 0; k < count; ++k)
          node.index[at + k] = b.first != 0 ? first + static_cast<index_type>(k) : 0;
        add_run(0, count);
      }
      any_index |= b.first;
      stray_epoch |= stray_epoch_bits(b.epoch, ep);
    } else {
      S const* e = p.data() + from;
      index_type* const ix = node.index + at;
      for (std::size_t k = 0; k < count; ++k) {
        v[at + k] = e[k].val();
        ix[k] = e[k].index();
        any_index |= e[k].index();
        stray_epoch |= stray_epoch_bits(e[k].epoch(), ep);
      }
      add_run(0, count);
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
