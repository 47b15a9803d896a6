// SPDX-License-Identifier: MIT
// adx: the tape's backward sweep, defined out of its class (reverse/tape.hpp): starting a
// sweep and its seeds, the plain loop (no per-operand checks) and the careful one (reachability,
// stops, anomaly checks), the walk over the arena's chunks, tape nodes, and the sweep state each
// recording keeps.
#pragma once

#include "adx/reverse/tape.hpp"

namespace adx {

template <class T>
inline void tape<T>::sweep(sweep_spec<T> const& spec) {
  index_type top = 0;
  for (auto const& s : spec.seeds) {  // every seed checked before the state changes
    check_live(s.epoch);
    top = std::max(top, s.index);
  }
  begin_sweep(top);
  if (spec.seeds.empty()) return;                            // no active output: every adjoint reads zero
  for (auto const& s : spec.seeds) seed(s.index, s.weight);  // checked live above
  struct policies {                                          // the spec's stops and tracking hold for this sweep only
    tape& t;
    policies(tape& tp, sweep_spec<T> const& sp) : t(tp) {
      t.stops_ = sp.stops;
      t.track_reached_ = sp.track_reached;
    }
    ~policies() {
      t.stops_ = {};
      t.track_reached_ = false;
    }
    policies(policies const&) = delete;
    policies& operator=(policies const&) = delete;
  } const during(*this, spec);
  try {
    run_sweep(top);
  } catch (...) {
    // Stopped part-way (an anomaly, a user's vjp that threw): the adjoints it wrote below the
    // seeds are not in the written range yet, which the next sweep zeroes. Mark everything up
    // to top written, so that no value of this sweep is left for the next one to add to.
    written_low_ = 1;
    written_high_ = std::max(written_high_, swept_);
    throw;
  }
}

template <class T>
inline void tape<T>::begin_sweep(index_type top) {
  if (!sweeping_.empty() && sweeping_.back() == frames_.size())
    throw gradient_error(
        "adx: backward was called on a recording whose backward sweep is running (inside a custom_function's "
        "vjp, say): compute a gradient there in a recording of its own (a tape_scope, or adx::gradient and the "
        "functional APIs, which open one)");
  if (top > n_) throw gradient_error("adx: backward seed index beyond the end of the tape");
  // The enclosing recordings' adjoints stay: a recording's first sweep sets them aside, unless
  // it runs in a private sweep begun in this recording, whose state is already its own.
  bool const in_private = !private_at_.empty() && private_at_.back() == frames_.size();
  if (frames_.size() > 1 && !frames_.back().owns_sweep_state && !in_private) {
    stash_sweep_state();
    frames_.back().owns_sweep_state = true;
  }
  top = through_node(top);
  // every adjoint outside [written_low_, written_high_] is zero: zero that range only, so that
  // a sweep costs what it reaches, not the whole recording below it
  if (written_low_ <= written_high_ && written_low_ < adj_.size())
    std::fill(adj_.begin() + written_low_,
              adj_.begin() + std::min<std::size_t>(std::size_t{written_high_} + 1, adj_.size()),
              detail::constant<T>(0));
  if (adj_.size() < std::size_t{top} + 1) adj_.resize(std::size_t{top} + 1, detail::constant<T>(0));
  adj_[0] = detail::constant<T>(0);
  written_low_ = top + 1;  // nothing written yet (seeds and the sweep lower it)
  written_high_ = top;
  // A recording swept before (a loop of backward calls on one recording, no tape_scope): the
  // sweep notes the lowest index it writes and ends there, so that each costs what it reaches.
  // A first sweep (a gradient from scratch) goes down to 1 without that bookkeeping.
  floored_ = swept_ != 0;
  swept_ = top;
  seed_finite_ = true;
  seeds_.clear();
  reached_valid_ = false;
}

template <class T>
inline void tape<T>::seed(index_type i, T const& v) {
  if (i == 0) return;
  if (i > swept_) throw gradient_error("adx: backward seed recorded after the sweep's top statement");
  adj_[i] = adj_[i] + v;
  written_low_ = std::min(written_low_, i);
  seed_finite_ &= detail::all_finite(v);
  seeds_.push_back(i);
}

template <class T>
inline void tape<T>::run_sweep(index_type top) {
  struct running {  // the recording being swept, while user code (a vjp) may run inside
    detail::flat_vector<std::size_t>& on;
    explicit running(detail::flat_vector<std::size_t>& s, std::size_t frame) : on(s) { on.push_back(frame); }
    ~running() { on.pop_back(); }
    running(running const&) = delete;
    running& operator=(running const&) = delete;
  } const guard(sweeping_, frames_.size());
  top = through_node(top);
  // With a non-finite partial or seed on the tape, follow reachability so that an unreached
  // statement cannot add 0 * inf = NaN; otherwise every contribution of an unreached
  // statement is an exact zero and the plain loop is exact.
  // Only that careful sweep needs the reached flags, so only it builds them.
  bool const checked = detail::anomaly_mode();
  if (!(careful_ || !seed_finite_ || track_reached_ || !stops_.empty() || checked) && plain_sweep(top)) return;
  reached_.assign(std::size_t{top} + 1, 0);
  for (index_type i : seeds_) reached_[i] = 1;
  reached_valid_ = true;
  if (checked) {
    check_seeds();
    run<true>(top, true);
  } else {
    run<true>(top);
  }
}

template <class T>
inline void tape<T>::swap_sweep_state(sweep_state& s) noexcept {
  std::swap(adj_, s.adj);
  std::swap(seeds_, s.seeds);
  std::swap(reached_, s.reached);
  std::swap(stops_, s.stops);
  std::swap(swept_, s.swept);
  std::swap(written_low_, s.written_low);
  std::swap(written_high_, s.written_high);
  std::swap(seed_finite_, s.seed_finite);
  std::swap(reached_valid_, s.reached_valid);
  std::swap(track_reached_, s.track_reached);
}

template <class T>
inline void tape<T>::stash_sweep_state() {
  if (stash_.size() == stashed_) {
    stash_.reserve(stashed_ + 1);  // before new: push_back cannot throw and leak it
    stash_.push_back(new sweep_state);
  }
  swap_sweep_state(*stash_[stashed_++]);
  seeds_.clear();
  reached_.clear();
  stops_ = {};
  swept_ = 0;
  seed_finite_ = true;
  reached_valid_ = track_reached_ = false;
}

template <class T>
inline bool tape<T>::plain_sweep(index_type top) {
  auto const once = [&] {
    if constexpr (std::is_floating_point_v<T>)
      return floored_ ? run_plain<true>(top) : run_plain<false>(top);
    else
      return floored_ ? run<false, true>(top) : run<false>(top);
  };
  if (nodes_.empty() || top < nodes_.front()->first) return once(), true;  // no node: none is skipped
  seed_values_.clear();
  for (index_type i : seeds_) seed_values_.push_back(adj_[i]);
  if (once()) return true;
  std::fill_n(adj_.begin() + 1, std::size_t{top}, detail::constant<T>(0));
  for (std::size_t s = 0; s < seeds_.size(); ++s) adj_[seeds_[s]] = seed_values_[s];
  return false;
}

template <class T>
template <bool Careful, bool Floored>
inline bool tape<T>::run(index_type top, bool checked) {
  bool exact = true;
  T* const adj = adj_.data();
  std::uint8_t* const reach = Careful ? reached_.data() : nullptr;
  index_type low = Floored ? written_low_ : 1;  // below it every adjoint is zero
  for_each_entry<false>(
      top,
      [&](index_type k, std::size_t n, detail::stored_index const* idx, T const* val) ADX_INLINE_LAMBDA {
        if constexpr (Careful) {
          if (!reach[k]) return;
          if (k < stops_.size() && stops_[k]) return;
        }
        T const a = adj[k];
        if constexpr (!Careful) {
          if (detail::structural_zero(a)) return;
        }
        for (std::size_t j = n; j-- > 0;) {  // last operand first, as run_plain
          index_type const i = static_cast<index_type>(idx[j]);
          if (checked) {
            T const c = val[j] * a;
            if (!detail::all_finite(c)) throw_statement_anomaly(k, j, i, val[j], a, c);
            adj[i] += c;
          } else {
            adj[i] += val[j] * a;
          }
          if constexpr (Floored) low = std::min(low, i);
          if constexpr (Careful) reach[i] = 1;
        }
      },
      [&](node const& nd) {
        if (Careful && !stops_.empty()) {
          run_stopped_node(nd, adj, reach);
        } else if (run_node(nd, adj, reach)) {
          if constexpr (Floored) low = std::min(low, nd.lowest_input());
        } else if (!Careful && exact) {
          exact = !nd.nonfinite();
        }
        if (checked) check_node(nd, adj);
      },
      no_op{}, std::bool_constant<Floored>{}, low);
  written_low_ = low;
  return exact;
}

template <class T>
template <bool Floored>
inline bool tape<T>::run_plain(index_type top) {
  bool exact = true;
  T* const adj = adj_.data();
  index_type held = 0;  // 0, or the index whose adjoint is held_value and not yet stored
  T held_value = 0;
  index_type low = Floored ? written_low_ : 1;  // below it every adjoint is zero
  auto const flush = [&] {
    if (held) adj[held] = held_value;
    held = 0;
  };
  for_each_entry<false>(
      top,
      [&](index_type k, std::size_t n, detail::stored_index const* idx, T const* val) ADX_INLINE_LAMBDA {
        // held is k (the statement after this one gave it) or 0
        T a = adj[k];
        if (held == k) {
          a = held_value;
          adj[k] = a;
        }
        held = 0;
        if (n == 0) return;
        // operands n - 1 .. 1 in that order (as run<false>); up to four operands written out:
        // one jump per statement instead of a loop whose exit mispredicts when the operand
        // counts vary
        auto const add = [&](std::size_t j) ADX_INLINE_LAMBDA {
          index_type const o = static_cast<index_type>(idx[j]);
          adj[o] += val[j] * a;
          if constexpr (Floored) low = std::min(low, o);
        };
        switch (n) {
          case 4:
            add(3);
            [[fallthrough]];
          case 3:
            add(2);
            [[fallthrough]];
          case 2:
            add(1);
            [[fallthrough]];
          case 1:
            break;
          default:
            for (std::size_t j = n; --j > 0;) add(j);
        }
        index_type const i = static_cast<index_type>(idx[0]);
        if constexpr (Floored) low = std::min(low, i);
        T const v = adj[i] + val[0] * a;
        // held_value is assigned on every operand statement's path, so its old value is dead
        // once read into a: assigned only when held, it would stay live beside a and v, and
        // the compiler would put two register moves beside the multiply-add on the chain from
        // statement to statement instead of one.
        held_value = v;
        if (i + 1 == k)
          held = i;
        else
          adj[i] = v;
      },
      [&](node const& nd) {
        flush();
        if (run_node(nd, adj, nullptr)) {
          if constexpr (Floored) low = std::min(low, nd.lowest_input());
        } else if (exact) {
          exact = !nd.nonfinite();
        }
      },
      flush, std::bool_constant<Floored>{}, low);
  flush();
  written_low_ = low;
  return exact;
}

template <class T>
inline void tape<T>::run_stopped_node(node const& nd, T* adj, std::uint8_t* reach) {
  struct kept_adjoint {
    index_type o;
    T a;
  };
  detail::flat_vector<kept_adjoint> kept;  // not a std::vector: every gradient compiles this sweep
  for (index_type j = 0; j < nd.count; ++j) {
    index_type const o = nd.first + j;
    if (o < stops_.size() && stops_[o]) {
      kept.push_back({o, adj[o]});
      adj[o] = detail::constant<T>(0);
      if (reach[o]) reach[o] = 2;  // reached, but nothing passes through the node from it
    }
  }
  bool any = false;
  for (index_type j = 0; j < nd.count && !any; ++j) any = reach[nd.first + j] == 1;
  if (any) {
    nd.mark_inputs(reach);
    nd.backward(adj);
  }
  for (auto const& [o, a] : kept) {
    adj[o] = a;
    if (reach[o] == 2) reach[o] = 1;
  }
}

template <class T>
template <bool Upward, class OnStatement, class OnNode, class OnBlock, bool Floored>
ADX_ALWAYS_INLINE void tape<T>::for_each_entry(index_type top, OnStatement&& statement, OnNode&& on_node,
                                               OnBlock&& on_block, std::bool_constant<Floored>,
                                               index_type const& floor) {
  auto const& chunks = arena_.chunks();
  std::size_t const used_chunks = chunks.empty() ? 0 : arena_.current_chunk() + 1;
  if constexpr (!Upward) {
    for (std::size_t c = used_chunks; c-- > 0;)
      if (!chunk_entries_down<Floored>(c, top, statement, on_node, on_block, floor)) break;
  } else {
    struct entry {
      index_type k;
      std::size_t n;
      detail::stored_index const* idx;
      T const* partial;
      node const* nd;  // or a statement
    };
    detail::flat_vector<entry> list;
    for (std::size_t c = 0; c < used_chunks; ++c) {
      list.clear();
      chunk_entries_down(
          c, top,
          [&](index_type k, std::size_t n, detail::stored_index const* idx, T const* partial) {
            list.push_back({k, n, idx, partial, nullptr});
          },
          [&](node const& nd) {
            list.push_back({0, 0, nullptr, nullptr, &nd});
          },
          on_block);
      for (std::size_t e = list.size(); e-- > 0;)
        if (list[e].nd)
          on_node(*list[e].nd);
        else
          statement(list[e].k, list[e].n, list[e].idx, list[e].partial);
    }
  }
}

template <class T>
template <bool Floored, class OnStatement, class OnNode, class OnBlock>
ADX_ALWAYS_INLINE bool tape<T>::chunk_entries_down(std::size_t c, index_type top, OnStatement&& statement,
                                                   OnNode&& on_node, OnBlock&& on_block, index_type const& floor) {
  auto const& chunks = arena_.chunks();
  auto const& ch = chunks[c];
  if (ch.stmts == 0 || ch.first > top) return true;
  detail::operand_count const* const count = ch.count;
  detail::stored_index const* const idx = ch.idx;
  T const* const val = ch.val;
  std::size_t pos = ch.args;
  index_type k = c == arena_.current_chunk() ? n_ + 1 : static_cast<index_type>(chunks[c + 1].first);
  for (std::size_t s = ch.stmts; s-- > 0;) {
    if constexpr (Floored)
      if (k <= floor) return false;  // the entries left are below every index with an adjoint
    std::size_t n = static_cast<std::uint8_t>(count[s]);
    if (n >= block_statement) [[unlikely]] {
      std::size_t const header = static_cast<index_type>(idx[--pos]);
      if (n == block_statement) {  // independent variables: nothing to pass on
        on_block();
        k = static_cast<index_type>(header);
        continue;
      }
      if (n == node_statement) {
        node const& nd = *nodes_[header];
        k -= nd.count;
        if (k <= top) on_node(nd);
        continue;
      }
      n = header;
    }
    --k;
    pos -= n;
    if (k <= top) statement(k, n, idx + pos, val + pos);  // above top: after the seeds, not in their cone
  }
  return true;
}

template <class T>
inline bool tape<T>::run_node(node const& nd, T* adj, std::uint8_t* reach) {
  bool any = false;
  if (reach) {
    for (index_type j = 0; j < nd.count && !any; ++j) any = reach[nd.first + j] != 0;
    if (!any) return false;
    nd.mark_inputs(reach);
  } else {
    for (index_type j = 0; j < nd.count && !any; ++j) any = !detail::zero_adjoint(adj[nd.first + j]);
    if (!any) return false;
  }
  nd.backward(adj);
  return true;
}

template <class T>
inline void tape<T>::check_seeds() const {
  for (index_type i : seeds_)
    if (!detail::all_finite(adj_[i])) {
      detail::anomaly_facts f;
      f.what = detail::anomaly_facts::kind::seed;
      f.input = i;
      f.input_origin = origin(i);
      f.value = detail::primal_of(adj_[i]);
      detail::report_anomaly(f);
    }
}

template <class T>
inline void tape<T>::check_node(node const& nd, T const* adj) {
  scratch_.assign(std::size_t{nd.first}, 0);
  nd.mark_inputs(scratch_.data());
  for (index_type i = 1; i < nd.first; ++i)
    if (scratch_[i] && !detail::all_finite(adj[i])) {
      detail::anomaly_facts f;
      f.what = detail::anomaly_facts::kind::node;
      f.statement = nd.first;
      f.origin = origin(nd.first);
      f.input = i;
      f.input_origin = origin(i);
      f.outputs = nd.count;
      f.value = detail::primal_of(adj[i]);
      detail::report_anomaly(f);
    }
}

template <class T>
inline void tape<T>::throw_statement_anomaly(index_type k, std::size_t operand, index_type i, T const& partial,
                                             T const& a, T const& c) const {
  detail::anomaly_facts f;
  f.what = detail::anomaly_facts::kind::statement;
  f.statement = k;
  f.origin = origin(k);
  f.input = i;
  f.input_origin = origin(i);
  f.operand = operand;
  f.value = detail::primal_of(c);
  f.partial = detail::primal_of(partial);
  f.adjoint = detail::primal_of(a);
  detail::report_anomaly(f);
}

template <class T>
inline index_type tape<T>::through_node(index_type top) const noexcept {
  if (nodes_.empty() || top < nodes_.front()->first) return top;
  auto const it = std::upper_bound(nodes_.begin(), nodes_.end(), top,
                                   [](index_type t, owned_node const& nd) { return t < nd->first; });
  node const& nd = **std::prev(it);  // the last node starting at or before top
  return top < nd.first + nd.count ? nd.first + nd.count - 1 : top;
}

template <class T>
inline T tape<T>::adjoint(index_type i, epoch_type e) const {
  check_live(e);
  if (i == 0 || i > swept_) return detail::constant<T>(0);
  return adj_[i];
}
template <class T>
inline void tape<T>::adjoints_of_live(index_type first, std::size_t n, T* out) const {
  std::size_t const swept = first > swept_ ? 0 : std::min<std::size_t>(n, std::size_t{swept_} - first + 1);
  std::copy_n(adj_.data() + first, swept, out);
  std::fill_n(out + swept, n - swept, detail::constant<T>(0));
}

}  // namespace adx
