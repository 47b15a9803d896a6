// SPDX-License-Identifier: MIT
// adx: PyTorch's rule for a graph swept without retain_graph, as the API layer applies it to a
// tape after a sweep (autograd::backward, autograd::grad). torch frees the values an operation
// saved for its backward pass once a backward pass used it; a second pass through it throws.
// adx keeps the values (nothing is freed) but gives the same error, so that a program tried
// with adx behaves as under torch. The marks live in the tape's statement_marks(), which the
// tape cuts back with the recording.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "adx/core/error.hpp"
#include "adx/reverse/tape.hpp"

namespace adx::detail {

[[noreturn]] inline void throw_released() {
  throw gradient_error(
      "adx: Trying to backward through the graph a second time (or directly access saved tensors after they have "
      "already been freed). Saved intermediate values of the graph are freed when you call autograd::backward() or "
      "autograd::grad(). Pass {.retain_graph = true} (positional form: true as retain_graph) if you need to "
      "backward through the graph a second time or if you need to access saved tensors after calling backward.");
}

/// Applies torch's release rule after the last sweep of tp (one that tracked reachability). The operations
/// the sweep used are those it reached or, with `inputs`, those of them with an input below
/// (torch runs only the nodes that lead to autograd.grad's inputs; an input's own operation is
/// not used for it). Using again an operation whose kept values an earlier sweep released
/// throws gradient_error (and nothing is released); with `release`, the used operations that
/// keep values are released. What keeps values: a statement whose partial toward a used operand
/// is other than +1 or -1 (torch's saved tensors), and a node whose keeps_values() is true;
/// rounding (tape::unconnected) and the partials of the level above (tape::outer_partial) keep
/// none.
template <class T>
void settle_release(tape<T>& tp, std::vector<index_type> const* inputs, bool release) {
  auto& released = tp.statement_marks();                                   // 1 released before, 2 by this sweep
  if (!tp.reachability_known() || (!release && released.empty())) return;  // nothing to release or check
  index_type const top = tp.swept();
  std::size_t const size = std::size_t{top} + 1;
  std::vector<std::uint8_t> below;  // with inputs: 1 an input, 2 an input lies below it
  if (inputs) {
    below.assign(size, 0);
    for (index_type i : *inputs)
      if (i != 0 && i < size) below[i] = 1;
  }
  auto const used = [&](stored_index i) { return !inputs || below[static_cast<index_type>(i)] != 0; };
  if (release && released.size() < size) released.resize(size, 0);
  auto const settle = [&](index_type first, index_type count, bool keeps) {  // a used entry
    if (inputs)
      for (index_type j = 0; j < count; ++j) below[first + j] |= 2;
    if (!keeps) return;
    auto const from = released.begin() + std::min<std::size_t>(first, released.size());
    auto const to = released.begin() + std::min<std::size_t>(first + count, released.size());
    if (std::any_of(from, to, [](std::uint8_t r) { return r == 1; })) throw_released();
    if (release) std::fill(from, to, std::uint8_t{2});
  };
  auto const on_statement = [&](index_type k, std::size_t n, stored_index const* idx, T const* partial) {
    if (!tp.reached(k) || n == 0) return;
    bool any_used = false, keeps = false;
    for (std::size_t j = 0; j < n; ++j)
      if (used(idx[j])) {
        any_used = true;
        keeps |= !unit_partials(partial + j, 1);
      }
    if (any_used) settle(k, 1, keeps && !tp.unconnected(k) && !tp.outer_partial(k));
  };
  auto const on_node = [&](typename tape<T>::node const& nd) {
    auto const outputs = static_cast<index_type>(std::min<std::size_t>(nd.count, size - nd.first));
    bool any_reached = false;
    for (index_type j = 0; j < outputs && !any_reached; ++j) any_reached = tp.reached(nd.first + j);
    if (!any_reached) return;
    if (inputs && !nd.any_input_marked(below.data())) return;
    settle(nd.first, outputs,
           nd.keeps_values(inputs ? below.data() : nullptr) && !tp.unconnected(nd.first) &&
               !tp.outer_partial(nd.first, outputs));
  };
  // in recording order where inputs decide (an entry's operands first), else in any order
  try {
    if (inputs)
      tp.template visit<true>(top, on_statement, on_node);
    else
      tp.template visit<false>(top, on_statement, on_node);
  } catch (...) {
    std::replace(released.begin(), released.end(), std::uint8_t{2}, std::uint8_t{0});
    throw;
  }
  std::replace(released.begin(), released.end(), std::uint8_t{2}, std::uint8_t{1});
}

}  // namespace adx::detail
