// SPDX-License-Identifier: MIT
// adx: the tape's recording, defined out of its class (reverse/tape.hpp): statements of an
// expression (a short one with a test per operand, a long one settled once), statements of any
// number of operands, independent variables one by one and in blocks, tensor nodes in the node
// memory, and the frames that recordings are.
#pragma once

#include "adx/reverse/tape.hpp"

namespace adx {

template <class T>
template <class E>
ADX_ALWAYS_INLINE index_type tape<T>::record_statement(E const& e) {
  constexpr std::size_t N = E::n_active;
  static_assert(N < block_statement,
                "adx: this expression has more than 252 active operands; assign a part of it to a var first");
  arena_.reserve(N, n_ + 1);
  if constexpr (N <= short_statement) {
    writer w{arena_.idx_top(), arena_.val_top(), 0, epoch_, {}, this};
    e.push(w);
    if (w.n == 0) return 0;
    index_type const k = next_index();
    arena_.commit(static_cast<std::uint8_t>(w.n));
    careful_ |= !w.finite.all();
    return k;
  } else {
    statement_writer<N> w{arena_.idx_top(), arena_.val_top(), epoch_};
    e.push(w);
    std::size_t n = N;
    if (w.stray != 0) [[unlikely]] {
      n = settle_statement(w.idx, w.partial, w.epochs.data(), N);
      if (n == 0) return 0;
    } else {
      careful_ |= !detail::all_finite_n<N>(w.partial);
    }
    index_type const k = next_index();
    arena_.commit(static_cast<std::uint8_t>(n));
    return k;
  }
}

template <class T>
ADX_NOINLINE std::size_t tape<T>::settle_statement(detail::stored_index* idx, T* partial, epoch_type const* epochs,
                                                   std::size_t n) {
  std::size_t kept = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (epochs[k] != epoch_) {
      if (idx[k] == detail::stored_index{0}) continue;
      check_live(epochs[k]);
    }
    idx[kept] = idx[k];
    partial[kept] = partial[k];
    ++kept;
  }
  careful_ |= detail::any_nonfinite(partial, kept);
  return kept;
}

template <class T>
template <class F>
inline index_type tape<T>::record_n(std::size_t max_operands, F&& fill, char const* operation) {
  if (!detail::grad_enabled()) [[unlikely]]
    return 0;  // no_grad: the result is a constant
  arena_.reserve(max_operands + 1, n_ + 1);
  writer w{arena_.idx_top(), arena_.val_top(), 0, epoch_, {}, this};
  fill(w);
  if (w.n == 0) return 0;
  index_type const k = next_index();
  if (w.n >= block_statement) {  // the true count goes in a trailing header entry
    w.idx[w.n] = detail::stored_index{static_cast<index_type>(w.n)};
    w.partial[w.n] = detail::constant<T>(0);
    arena_.commit_long(w.n + 1, static_cast<std::uint8_t>(long_statement));
  } else {
    arena_.commit(static_cast<std::uint8_t>(w.n));
  }
  careful_ |= !w.finite.all();
  if (detail::anomaly_mode()) [[unlikely]]
    note_origin(k, 1, operation, detail::anomaly_site());
  return k;
}

template <class T>
ADX_ALWAYS_INLINE index_type tape<T>::new_variable(source_location where) {
  index_type k;
  if (open_block_ == n_) {  // the last entry is a block ending at n_: extend it
    k = next_index();
    open_block_ = k;
  } else if (lone_variable_ == n_) {  // the last entry is a lone variable: a run starts
    k = open_block(1);
  } else {
    arena_.reserve(0, n_ + 1);
    k = next_index();
    arena_.commit(0);
    lone_variable_ = k;
  }
  if (detail::anomaly_mode()) [[unlikely]]
    note_origin(k, 1, "an independent variable", where);
  return k;
}

template <class T>
inline index_type tape<T>::new_variables(std::size_t n, source_location where) {
  if (n == 0) return 0;
  index_type first;
  if (open_block_ == n_) {
    first = claim_indices(n);
  } else {
    first = open_block(n);
  }
  open_block_ = n_;
  if (detail::anomaly_mode()) [[unlikely]]
    note_origin(first, static_cast<index_type>(n), "an independent variable", where);
  return first;
}

template <class T>
inline index_type tape<T>::record_node(node_ptr<> nd, std::size_t outputs, char const* operation) {
  if (outputs == 0) throw error("adx: internal: a tape node needs at least one output");
  if (!detail::grad_enabled()) throw error("adx: internal: record_node under no_grad");
  // one tape entry covers all the outputs: the sweep steps over them in one go
  index_type const first = claim_indices(outputs);
  arena_.reserve(1, first);
  *arena_.idx_top() = detail::stored_index{static_cast<index_type>(nodes_.size())};
  *arena_.val_top() = detail::constant<T>(0);
  arena_.commit_long(1, static_cast<std::uint8_t>(node_statement));
  nd->first = first;
  nd->count = static_cast<index_type>(outputs);  // claim_indices checked that it fits
  if (operation) nd->name = operation;
  if (detail::anomaly_mode()) [[unlikely]]
    note_origin(first, nd->count, nd->name, detail::anomaly_site());
  nodes_.push_back(owned_node{nd.get(), nd.get_deleter()});
  nd.release();
  return first;
}

template <class T>
template <class N, class... A>
inline auto tape<T>::make_node(A&&... a) -> node_ptr<N> {
  static_assert(alignof(N) <= 64, "adx: internal: node over-aligned");
  auto const mark = node_mem_.position();
  void* const p = node_mem_.allocate_object(sizeof(N));
  try {
    return node_ptr<N>(::new (p) N(std::forward<A>(a)...), node_deleter(true));
  } catch (...) {
    node_mem_.rewind(mark);
    throw;
  }
}

template <class T>
ADX_NOINLINE index_type tape<T>::open_block(std::size_t n) {
  index_type const first = claim_indices(n);
  arena_.reserve(1, first);
  *arena_.idx_top() = detail::stored_index{first};
  *arena_.val_top() = detail::constant<T>(0);
  arena_.commit_long(1, static_cast<std::uint8_t>(block_statement));
  open_block_ = n_;
  return first;
}

template <class T>
inline index_type tape<T>::claim_indices(std::size_t n) {
  if (n > std::size_t{max_index - n_}) throw_tape_full();
  index_type const first = n_ + 1;
  n_ += static_cast<index_type>(n);
  return first;
}

template <class T>
inline void tape<T>::rewind_to(frame const& f) {
  n_ = f.n;
  open_block_ = lone_variable_ = no_block;  // the entry may be gone, and n_ may meet it again later
  arena_.rewind(f.stmts);
  drop_nodes(f.nodes);
  node_mem_.rewind(f.node_mem);  // after the nodes using it are gone
  if (statement_marks_.size() > std::size_t{n_} + 1)
    statement_marks_.resize(std::size_t{n_} + 1);  // indices get reused
  if (outer_partial_.size() > std::size_t{n_} + 1) outer_partial_.resize(std::size_t{n_} + 1);
  while (!unconnected_.empty() && unconnected_.back().first > n_) unconnected_.pop_back();
  if (!unconnected_.empty()) unconnected_.back().last = std::min(unconnected_.back().last, n_);
  careful_ = f.careful;
  swept_ = std::min(swept_, n_);
  if (origins_.size() > std::size_t{n_} + 1) origins_.resize(std::size_t{n_} + 1);
}

template <class T>
inline tape_stats tape<T>::stats() {
  tape_stats s;
  s.statements = arena_.statements_used();
  s.indices = n_;
  s.operands = arena_.operands_used();
  s.bytes_used = s.statements * sizeof(std::uint8_t) + s.operands * (sizeof(index_type) + sizeof(T));
  s.bytes_reserved = arena_.bytes_reserved() + node_mem_.bytes_reserved();
  s.adjoint_bytes = adj_.capacity() * sizeof(T);
  s.nodes = nodes_.size();
  for (auto const& nd : nodes_) s.node_bytes += nd->bytes();
  return s;
}

template <class T>
inline void tape<T>::push_frame() {
  frames_.push_back(frame{detail::new_epoch(), n_, arena_.position(), careful_, nodes_.size(), node_mem_.position()});
  epoch_ = frames_.back().epoch;
  open_block_ = lone_variable_ = no_block;  // a recording starts with entries of its own
}

template <class T>
inline void tape<T>::pop_frame() {
  if (frames_.size() == 1) throw error("adx: tape::pop_frame without a matching push_frame");
  rewind_to(frames_.back());
  if (frames_.back().owns_sweep_state) unstash_sweep_state();
  frames_.pop_back();
  epoch_ = frames_.back().epoch;
}

template <class T>
inline void tape<T>::shrink_to_fit() {
  if (frames_.size() != 1 || n_ != 0) throw error("adx: tape::shrink_to_fit needs an empty tape with no open scope");
  arena_.shrink();
  node_mem_.clear();
  adj_ = {};
  adj_.shrink_to_fit();
}

template <class T>
inline void tape<T>::mark_unconnected(index_type first, index_type count) {
  if (first == 0 || count == 0) return;
  index_type const last = first + (count - 1);
  if (!unconnected_.empty() && unconnected_.back().last + 1 == first)
    unconnected_.back().last = last;
  else
    unconnected_.push_back({first, last});
}

template <class T>
inline void tape<T>::mark_outer_partial(index_type i) {
  if (i == 0) return;
  if (outer_partial_.size() <= i) outer_partial_.resize(std::size_t{i} + 1, 0);
  outer_partial_[i] = 1;
}

template <class T>
inline void tape<T>::note_origin(index_type first, index_type count, char const* operation, source_location where) {
  if (origins_.size() < std::size_t{first} + count) origins_.resize(std::size_t{first} + count);
  for (index_type j = 0; j < count; ++j) origins_[first + j] = statement_origin{operation, where};
}

template <class T>
inline bool tape<T>::is_live(epoch_type e) const noexcept {
  if (e == epoch_ || e == 0) return true;
  for (auto const& f : frames_)
    if (f.epoch == e) return true;
  return false;
}
template <class T>
inline void tape<T>::check_live(epoch_type e) const {
  if (e == epoch_ || e == 0) [[likely]]
    return;
  if (is_live(e)) return;
  throw stale_variable_error(
      "adx: a var was used outside its recording: its tape was reset or its tape_scope ended after it was "
      "created, or it belongs to another thread's tape");
}
template <class T>
inline bool tape<T>::unconnected(index_type k) const noexcept {
  auto const it = std::upper_bound(unconnected_.begin(), unconnected_.end(), k,
                                   [](index_type v, auto const& r) { return v < r.first; });
  return it != unconnected_.begin() && k <= std::prev(it)->last;
}

}  // namespace adx
