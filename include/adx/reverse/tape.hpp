// SPDX-License-Identifier: MIT
// adx: the tape. One per thread and value type T (the partials and adjoints are T's), the
// current one reached through a thread-local pointer that tape_scope sets. Each assignment of
// an expression to a var<T> records ONE statement: its operand count (1 byte), and per active
// operand its index (4 bytes) and partial (sizeof(T)). A var's index is its statement's number,
// so results need no storage. The backward sweep is one loop over the statements.
//
// Recordings are frames on a stack. Each frame has an epoch (a number never reused in the
// process); a var remembers the epoch it was recorded in, and using a var whose frame has
// ended (reset, scope closed, another thread's tape) throws stale_variable_error instead of
// silently aliasing a newer statement.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "adx/core/source_location.hpp"

#include "adx/core/error.hpp"
#include "adx/core/expr.hpp"
#include "adx/reverse/anomaly.hpp"
#include "adx/reverse/arena.hpp"
#include "adx/reverse/modes.hpp"

namespace adx {

using index_type = std::uint32_t;
using epoch_type = std::uint32_t;

template <class T>
class tape;

namespace detail {
/// Whether any of marks[first .. first + count) is set; null marks count as all set (every input
/// used: tape<T>::node::keeps_values).
inline bool any_marked(std::uint8_t const* marks, index_type first, std::size_t count) {
  return !marks || std::any_of(marks + first, marks + first + count, [](std::uint8_t m) { return m != 0; });
}

/// Whether the n partials p are all +1 or -1 (at the innermost level): a backward pass through
/// them needs no value of the forward pass (tape::settle_release).
template <class T>
bool unit_partials(T const* p, std::size_t n) {
  return std::all_of(p, p + n, [](T const& v) { return primal_of(v) == 1 || primal_of(v) == -1; });
}

/// Whether any of the n numbers p is infinite or NaN (at any level: all_finite).
template <class T>
bool any_nonfinite(T const* p, std::size_t n) {
  return !std::all_of(p, p + n, [](T const& v) { return all_finite(v); });
}

/// Whether every partial of one statement is finite (the tape then needs no reachability in
/// its sweep). For floating-point partials without a flag update per operand: p * 0 is 0 for a
/// finite p and NaN for an infinite or NaN one, and a NaN stays in the sum. Not p - p, which
/// GCC folds to 0 under -funsafe-math-optimizations even when NaNs are honoured; x * 0 folds
/// only under -ffinite-math-only, where std::isfinite is folded to true as well. Unlike
/// std::isfinite, inf * 0 raises FE_INVALID (a concern only where that exception traps).
/// It records faster than a `bool &= isfinite(p)` per operand (benchmarks/, the scalar suite).
/// Whether the N partials p are all finite: finite_check's sum for floating point, in one loop.
template <std::size_t N, class T>
ADX_ALWAYS_INLINE bool all_finite_n(T const* p) {
  if constexpr (std::is_floating_point_v<T>) {
    T probe = 0;
    for (std::size_t k = 0; k < N; ++k) probe += p[k] * 0;
    return !std::isnan(probe);
  } else {
    bool ok = true;
    for (std::size_t k = 0; k < N; ++k) ok &= all_finite(p[k]);
    return ok;
  }
}

template <class T>
struct finite_check {
  bool ok = true;
  ADX_ALWAYS_INLINE void note(T const& p) { ok &= all_finite(p); }
  bool all() const { return ok; }
};
template <std::floating_point T>
struct finite_check<T> {
  T probe = 0;
  ADX_ALWAYS_INLINE void note(T p) { probe += p * 0; }
  bool all() const { return !std::isnan(probe); }
};

inline epoch_type new_epoch() noexcept {
  static std::atomic<epoch_type> counter{0};
  epoch_type e = counter.fetch_add(1, std::memory_order_relaxed) + 1;
  if (e == 0) e = counter.fetch_add(1, std::memory_order_relaxed) + 1;  // 0 marks constants
  return e;
}

/// True if contributions `partial * a` are exactly zero and need not be made: a is an inactive
/// zero one level up (nested tapes only; a plain number is never skipped, NaN must propagate).
template <class T>
bool structural_zero(T const& a) {
  if constexpr (requires { a.index(); })
    return a.index() == 0 && primal_of(a) == 0;
  else
    return false;
}

/// True if a node's output adjoint a is exactly zero (the node need not run for it).
template <class T>
bool zero_adjoint(T const& a) {
  if constexpr (std::is_arithmetic_v<T>)
    return a == 0;
  else
    return structural_zero(a);
}
}  // namespace detail

/// Memory a tape holds, for reports and tests.
struct tape_stats {
  std::size_t statements = 0;      ///< tape entries: statements, blocks of variables, tensor nodes
  std::size_t indices = 0;         ///< indices given out (one per scalar result or variable)
  std::size_t operands = 0;        ///< (index, partial) entries, headers of blocks and nodes included
  std::size_t bytes_used = 0;      ///< bytes the statements and operands occupy
  std::size_t bytes_reserved = 0;  ///< bytes held by the arenas (kept across resets)
  std::size_t adjoint_bytes = 0;   ///< bytes of the adjoint vector (sized by the last sweep)
  std::size_t nodes = 0;           ///< tensor operations recorded as nodes
  std::size_t node_bytes = 0;      ///< bytes the nodes hold (their operands' indices, partials, values)
};

template <class T>
class tape {
 public:
  using value_type = T;

  tape() {
    frames_.push_back(frame{detail::new_epoch(), 0, {}, false, 0, {}});
    epoch_ = frames_.back().epoch;
  }
  tape(tape const&) = delete;
  tape& operator=(tape const&) = delete;
  ~tape() {
    if (current_ == this) current_ = nullptr;
  }

  /// The calling thread's current tape for T (created on first use).
  ADX_ALWAYS_INLINE static tape& current() {
    tape* t = current_;
    if (!t) [[unlikely]]
      t = &thread_default();
    return *t;
  }

  // ---- recording ---------------------------------------------------------------------------

  /// Writes the operands of one statement straight into the arena.
  struct writer {
    detail::stored_index* idx;
    T* partial;
    std::uint32_t n;
    epoch_type epoch;
    detail::finite_check<T> finite;
    tape* owner;
    ADX_ALWAYS_INLINE void add(index_type i, epoch_type e, T const& p) {
      // One test on the common path: a constant var has epoch 0, which no recording has.
      if (e != epoch) [[unlikely]] {
        if (i == 0) return;  // an inactive operand (a constant var) takes no place on the tape
        owner->check_live_outer(e);
      }
      idx[n] = detail::stored_index{i};
      partial[n] = p;
      finite.note(p);
      ++n;
      note_outer_partial(p);
    }
  };

  /// Records the statement of expression e; returns its index, or 0 if no operand is active.
  /// `where` is the source line that asked for it (kept only in anomaly mode).
  /// Under no_grad (reverse/var.hpp) nothing is recorded and the result is a constant (0).
  template <class E>
  ADX_ALWAYS_INLINE index_type record(E const& e, source_location where = {}) {
    // One test on the common path. The slow paths must not take e: an expression whose address
    // escapes into a function that is not inlined is built in memory, slowing every recording.
    if (detail::plain_recording()) [[likely]]
      return record_statement(e);
    if (!detail::grad_enabled()) return 0;  // no_grad: the result is a constant
    index_type const k = record_statement(e);
    note_if_anomaly(k, detail::describe_expression<E>(), where);
    return k;
  }

  /// Records an independent variable (made under no_grad too). A lone one (an accumulator
  /// `var<double> s = 0.0` among statements) is a statement with no operands, 1 byte. From the
  /// second of a run on (the inputs of a gradient, made one after another) they share one block
  /// entry, which the sweep steps over in one go.
  ADX_ALWAYS_INLINE index_type new_variable(source_location where = {}) {
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

  /// Records n independent variables at once (a tensor's elements): indices first .. first +
  /// n - 1, all in one block entry (the open one if the last entry is a block). Returns first
  /// (0 if n is 0). Made under no_grad too, as new_variable.
  index_type new_variables(std::size_t n, source_location where = {}) {
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

  /// Records one statement of any number of operands (reductions, dot products): fill(w)
  /// calls w.add(index, epoch, partial) at most max_operands times. Returns 0 if none is active.
  /// `operation` names it for anomaly mode.
  template <class F>
  index_type record_n(std::size_t max_operands, F&& fill, char const* operation = "a reduction") {
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

  /// A tape node: an operation on whole blocks (a matrix product) whose adjoint code runs once
  /// when the sweep reaches its outputs, statements first .. first + count - 1.
  struct node {
    index_type first = 0, count = 0;
    char const* name = "a tensor operation";  ///< for anomaly reports
    virtual ~node() = default;
    /// Adds the contributions of adj[first .. first + count) to the inputs' adjoints.
    virtual void backward(T* adj) const = 0;
    /// Marks the inputs as reached (for the careful sweep).
    virtual void mark_inputs(std::uint8_t* reached) const = 0;
    /// Whether any input is marked (non-zero) in marks (for settle_release).
    virtual bool any_input_marked(std::uint8_t const* marks) const = 0;
    /// Whether the backward pass toward the inputs marked in `used` (all of them if null) reads
    /// values of the forward pass (torch's saved tensors): such a node, once released, cannot
    /// be swept again. A node whose partials there are all +1 or -1, or fixed by its shape
    /// alone (mean), does not.
    virtual bool keeps_values(std::uint8_t const* used) const {
      (void)used;
      return true;
    }
    /// Bytes the node holds for its backward pass (for tape_stats).
    virtual std::size_t bytes() const noexcept { return 0; }
    /// Whether a backward pass with every output adjoint zero could still give a non-zero
    /// contribution: a partial or a kept value that is infinite or NaN (0 * inf is NaN), or a
    /// backward pass the node cannot vouch for (a user's vjp). The plain sweep skips a node
    /// whose output adjoints are all zero; torch runs such a node when the sweep reaches it, so
    /// for a node that answers true the sweep is made again with reachability (tape::sweep).
    /// Asked only of a skipped node, so the scan costs nothing on the common path.
    virtual bool nonfinite() const = 0;
    /// The lowest index backward may add to (the sweep stops below every index it wrote).
    virtual index_type lowest_input() const noexcept { return 1; }
  };
  /// The base of a node whose inputs are listed in one place, Derived::for_inputs(f): it calls
  /// f(first, count) for each run of consecutive input indices (count 1 for a lone one; index
  /// 0, a constant, may appear) and returns true as soon as f does. mark_inputs and
  /// any_input_marked follow from it.
  template <class Derived>
  struct node_with_inputs : node {
    void mark_inputs(std::uint8_t* reached) const final {
      static_cast<Derived const&>(*this).for_inputs([reached](index_type first, std::size_t count) {
        std::fill_n(reached + first, count, std::uint8_t{1});
        return false;
      });
    }
    bool any_input_marked(std::uint8_t const* marks) const final {
      return static_cast<Derived const&>(*this).for_inputs(
          [marks](index_type first, std::size_t count) { return detail::any_marked(marks, first, count); });
    }
    index_type lowest_input() const noexcept final {
      index_type low = ~index_type{0};
      static_cast<Derived const&>(*this).for_inputs([&low](index_type first, std::size_t) {
        if (first != 0 && first < low) low = first;
        return false;
      });
      return low;
    }
  };

  /// Deletes a node: one made by make_node lives in the node memory and is only destroyed;
  /// one made with new (std::make_unique) is deleted.
  struct node_deleter {
    bool in_node_memory = false;
    node_deleter() = default;
    explicit node_deleter(bool in_memory) noexcept : in_node_memory(in_memory) {}
    template <class U>
    node_deleter(std::default_delete<U>) noexcept {}  // NOLINT: converts from make_unique's
    void operator()(node* p) const noexcept {
      if (in_node_memory)
        p->~node();
      else
        delete p;
    }
  };
  template <class N = node>
  using node_ptr = std::unique_ptr<N, node_deleter>;
  /// A node of type N made in the node memory (no malloc per operation); hand it to record_node.
  template <class N, class... A>
  node_ptr<N> make_node(A&&... a) {
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

  /// Uninitialised room for n objects of type U (trivially destructible) that a node keeps for
  /// its backward pass: it lives until the recording ends or is rolled back past it, with the
  /// nodes recorded after it. Reused across recordings (no malloc per operation).
  template <class U>
  U* node_array(std::size_t n) {
    return node_mem_.template allocate<U>(n);
  }

  /// Makes every sweep of the current recording follow reachability (the careful sweep), for a
  /// node just recorded whose backward is the user's (custom_function): torch calls it exactly
  /// when the sweep reaches the node, a zero cotangent included, and exactly once, while the
  /// plain sweep would skip it at zero adjoints and, on finding that out, sweep again (calling
  /// the vjps above it a second time). Rolled back with the node.
  void sweep_carefully() noexcept { careful_ = true; }

  /// Records a node with `outputs` consecutive output statements; returns the first index.
  /// `operation` names it for anomaly reports. Callers check detail::grad_enabled() first and
  /// make constants under no_grad.
  index_type record_node(node_ptr<> nd, std::size_t outputs, char const* operation = nullptr) {
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
    nodes_.push_back(std::move(nd));
    return first;
  }

  epoch_type epoch() const noexcept { return epoch_; }
  index_type size() const noexcept { return n_; }

  /// Whether epoch e belongs to a recording that is still live on this tape (0: a constant).
  bool is_live(epoch_type e) const noexcept {
    if (e == epoch_ || e == 0) return true;
    for (auto const& f : frames_)
      if (f.epoch == e) return true;
    return false;
  }
  /// check_live for an operand of another recording than the current one (the writer's rare
  /// case), kept out of line so that recording code does not carry the throw.
  ADX_NOINLINE void check_live_outer(epoch_type e) const { check_live(e); }
  /// Throws unless epoch e belongs to a recording that is still live on this tape.
  void check_live(epoch_type e) const {
    if (e == epoch_ || e == 0) [[likely]]
      return;
    if (is_live(e)) return;
    throw stale_variable_error(
        "adx: a var was used outside its recording: its tape was reset or its tape_scope ended after it was "
        "created, or it belongs to another thread's tape");
  }
  /// check_live for the elements of a tensor or a list in turn: `live` is the last recording
  /// found live (start it at 0), so that a run of elements of an outer recording (a model's
  /// parameters made outside the tape_scope) costs one look through the frames, not one each.
  void check_live(epoch_type e, epoch_type& live) const {
    if (e != live) [[unlikely]] {
      check_live_outer(e);  // out of line: the loops that call this stay small
      live = e;
    }
  }

  // ---- recordings (frames) -----------------------------------------------------------------

  /// Starts a nested recording; its statements are dropped by pop_frame.
  void push_frame() {
    frames_.push_back(frame{detail::new_epoch(), n_, arena_.position(), careful_, nodes_.size(), node_mem_.position()});
    epoch_ = frames_.back().epoch;
    open_block_ = lone_variable_ = no_block;  // a recording starts with entries of its own
  }
  /// Ends the innermost recording: its statements are dropped in O(1), its vars become stale.
  void pop_frame() {
    if (frames_.size() == 1) throw error("adx: tape::pop_frame without a matching push_frame");
    rewind_to(frames_.back());
    if (frames_.back().owns_sweep_state) unstash_sweep_state();
    frames_.pop_back();
    epoch_ = frames_.back().epoch;
  }
  /// A point of the current recording to go back to (see rollback).
  struct checkpoint_t {
    index_type n;
    typename detail::statement_arena<detail::stored_index, T>::mark stmts;
    bool careful;
    std::size_t nodes;
    detail::node_memory::mark node_mem;
  };
  checkpoint_t checkpoint() noexcept { return {n_, arena_.position(), careful_, nodes_.size(), node_mem_.position()}; }
  /// Drops what was recorded after cp, which must belong to the current recording (an operation
  /// that failed half-way, or whose node turned out to have no active operand). The indices
  /// are given out again, so no var recorded after cp may be used.
  void rollback(checkpoint_t const& cp) noexcept {
    rewind_to(frame{epoch_, cp.n, cp.stmts, cp.careful, cp.nodes, cp.node_mem});
  }

  /// Drops every statement of the current recording in O(1); its vars become stale.
  void reset() {
    rewind_to(frames_.back());
    frames_.back().epoch = epoch_ = detail::new_epoch();
  }
  /// Returns memory beyond the first chunk to the system (after an unusually long recording).
  void shrink_to_fit() {
    if (frames_.size() != 1 || n_ != 0) throw error("adx: tape::shrink_to_fit needs an empty tape with no open scope");
    arena_.shrink();
    node_mem_ = {};
    adj_ = {};
    adj_.shrink_to_fit();
  }
  std::size_t depth() const noexcept { return frames_.size() - 1; }

  // ---- the backward sweep ------------------------------------------------------------------

  /// Zeroes the adjoints of statements 1..top and starts a sweep; add seeds, then sweep(top).
  void begin_sweep(index_type top) {
    if (!sweeping_.empty() && sweeping_.back() == frames_.size())
      throw gradient_error(
          "adx: backward was called on a recording whose backward sweep is running (inside a custom_function's "
          "vjp, say): compute a gradient there in a recording of its own (a tape_scope, or adx::gradient and the "
          "functional APIs, which open one)");
    if (top > n_) throw gradient_error("adx: backward seed index beyond the end of the tape");
    if (frames_.size() > 1 && !frames_.back().owns_sweep_state) {  // the enclosing recordings' adjoints stay
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
  void seed(index_type i, epoch_type e, T const& v) {
    check_live(e);
    if (i == 0) return;
    if (i > swept_) throw gradient_error("adx: backward seed recorded after the sweep's top statement");
    adj_[i] = adj_[i] + v;
    written_low_ = std::min(written_low_, i);
    seed_finite_ &= detail::all_finite(v);
    seeds_.push_back(i);
  }
  /// Runs the sweep from statement top down to 1.
  void sweep(index_type top) {
    struct running {  // the recording being swept, while user code (a vjp) may run inside
      std::vector<std::size_t>& on;
      explicit running(std::vector<std::size_t>& s, std::size_t frame) : on(s) { on.push_back(frame); }
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
      run<true, true>(top);
    } else {
      run<true>(top);
    }
  }
  /// Track which statements a sweep reaches (for the None-vs-zero rule of the APIs).
  void track_reached(bool on) noexcept { track_reached_ = on; }
  /// Statements whose adjoint is collected but not passed on to their operands in the next
  /// sweeps (tf.gradients' stop_gradients); an empty list clears them. With `unconnected`, the
  /// statements noted by mark_unconnected stop the sweep too.
  void set_stops(std::vector<index_type> const& stops, bool unconnected = false) {
    stops_.clear();
    if (stops.empty() && (!unconnected || unconnected_.empty())) return;
    stops_.assign(std::size_t{n_} + 1, 0);
    for (index_type i : stops)
      if (i != 0 && i <= n_) stops_[i] = 1;
    if (unconnected)
      for (auto const& [first, last] : unconnected_) std::fill(stops_.begin() + first, stops_.begin() + last + 1, 1);
  }
  /// Notes that statement i of this tape is a partial of an operation recorded one level up (a
  /// var<var<T>> statement or tensor node: its partials are var<T>s recorded here). torch makes
  /// such derivatives afresh in every create_graph backward, so that a Hessian-vector product can
  /// be taken again and again from one forward pass; settle_release therefore never releases
  /// them (the writers of the level above call this).
  void mark_outer_partial(index_type i) {
    if (i == 0) return;
    if (outer_partial_.size() <= i) outer_partial_.resize(std::size_t{i} + 1, 0);
    outer_partial_[i] = 1;
  }
  /// A partial p that a writer of this tape stores: if it is a var one level down (this tape
  /// records var<var<T>>), noted on that tape (mark_outer_partial). Nothing for numbers.
  static void note_outer_partial(T const& p) {
    if constexpr (requires { p.index(); }) tape<typename T::value_type>::current().mark_outer_partial(p.index());
  }
  bool outer_partial(index_type first, index_type count = 1) const noexcept {
    if (first >= outer_partial_.size()) return false;
    return detail::any_marked(outer_partial_.data(), first,
                              std::min<std::size_t>(count, outer_partial_.size() - first));
  }
  /// Notes statements first .. first + count - 1 as the results of an operation to which
  /// TensorFlow gives no gradient (floor, ceil, round, trunc: rules flagged unconnected_in_tf).
  /// tf.gradients stops at them (set_stops with `unconnected`), so that nothing reaches their
  /// operands through them; the other APIs see their zero derivative.
  void mark_unconnected(index_type first, index_type count) {
    if (first == 0 || count == 0) return;
    index_type const last = first + (count - 1);
    if (!unconnected_.empty() && unconnected_.back().second + 1 == first)
      unconnected_.back().second = last;
    else
      unconnected_.emplace_back(first, last);
  }
  /// torch's rule for a graph swept without retain_graph, applied after a careful sweep: the
  /// operations it used are those it reached or, with `inputs`, those of them with an input
  /// below (torch runs only the nodes that lead to autograd.grad's inputs; an input's own
  /// operation is not used for it). Using again an operation whose kept values an earlier sweep
  /// released throws gradient_error (and nothing is released); with `release`, the used
  /// operations that keep values are released. What keeps values: a statement whose partial
  /// toward a used operand is other than +1 or -1 (torch's saved tensors), and a node whose
  /// keeps_values() is true; rounding (noted by mark_unconnected) keeps none.
  void settle_release(std::vector<index_type> const* inputs, bool release) {
    if (!reached_valid_ || (!release && released_.empty())) return;  // nothing to release or to check
    std::size_t const size = reached_.size();
    std::vector<std::uint8_t> below;  // with inputs: 1 an input, 2 an input lies below it
    if (inputs) {
      below.assign(size, 0);
      for (index_type i : *inputs)
        if (i != 0 && i < size) below[i] = 1;
    }
    auto const used = [&](detail::stored_index i) { return !inputs || below[static_cast<index_type>(i)] != 0; };
    // released_: 1 released by an earlier sweep, 2 by this one (made 1 at the end, or 0 if it throws)
    if (release && released_.size() < size) released_.resize(size, 0);
    auto const settle = [&](index_type first, index_type count, bool keeps) {  // a used entry
      if (inputs)
        for (index_type j = 0; j < count; ++j) below[first + j] |= 2;
      if (!keeps) return;
      auto const from = released_.begin() + std::min<std::size_t>(first, released_.size());
      auto const to = released_.begin() + std::min<std::size_t>(first + count, released_.size());
      if (std::any_of(from, to, [](std::uint8_t r) { return r == 1; })) throw_released();
      if (release) std::fill(from, to, std::uint8_t{2});
    };
    auto const on_statement = [&](index_type k, std::size_t n, detail::stored_index const* idx, T const* partial) {
      if (!reached_[k] || n == 0) return;
      bool any_used = false, keeps = false;
      for (std::size_t j = 0; j < n; ++j)
        if (used(idx[j])) {
          any_used = true;
          keeps |= !detail::unit_partials(partial + j, 1);
        }
      if (any_used) settle(k, 1, keeps && !unconnected(k) && !outer_partial(k));
    };
    auto const on_node = [&](node const& nd) {
      auto const outputs = static_cast<index_type>(std::min<std::size_t>(nd.count, size - nd.first));
      if (std::none_of(reached_.begin() + nd.first, reached_.begin() + nd.first + outputs,
                       [](std::uint8_t r) { return r != 0; }))
        return;
      if (inputs && !nd.any_input_marked(below.data())) return;
      settle(nd.first, outputs,
             nd.keeps_values(inputs ? below.data() : nullptr) && !unconnected(nd.first) &&
                 !outer_partial(nd.first, outputs));
    };
    // in recording order where inputs decide (an entry's operands first), else in any order
    auto const top = static_cast<index_type>(size - 1);
    try {
      if (inputs)
        for_each_entry<true>(top, on_statement, on_node);
      else
        for_each_entry<false>(top, on_statement, on_node);
    } catch (...) {
      std::replace(released_.begin(), released_.end(), std::uint8_t{2}, std::uint8_t{0});
      throw;
    }
    std::replace(released_.begin(), released_.end(), std::uint8_t{2}, std::uint8_t{1});
  }
  /// Whether the last sweep reached statement i (meaningful when tracking was on for it).
  bool reached(index_type i) const noexcept {
    return reached_valid_ && i != 0 && i <= swept_ && i < reached_.size() && reached_[i];
  }

  /// The adjoint of statement i after the last sweep (zero if i is inactive or was not swept).
  T adjoint(index_type i, epoch_type e) const {
    check_live(e);
    if (i == 0 || i > swept_) return detail::constant<T>(0);
    return adj_[i];
  }

  /// adjoint(i, e) for a var already checked to be live (bulk reads check once per recording).
  T adjoint_of_live(index_type i) const noexcept { return i == 0 || i > swept_ ? detail::constant<T>(0) : adj_[i]; }
  /// adjoint_of_live of first .. first + n - 1 (first > 0) into out: a copy of the swept part.
  void adjoints_of_live(index_type first, std::size_t n, T* out) const {
    std::size_t const swept = first > swept_ ? 0 : std::min<std::size_t>(n, std::size_t{swept_} - first + 1);
    std::copy_n(adj_.data() + first, swept, out);
    std::fill_n(out + swept, n - swept, detail::constant<T>(0));
  }

  tape_stats stats() {
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

 private:
  /// Writes the N operands of a long expression's statement into the arena as the push hands
  /// them over, without a test: whether each operand is a variable of this recording is noted
  /// (stray) and settled once for the statement (settle_statement). The per-operand code is a
  /// few stores, so that a long expression compiles to little code; a short one keeps writer's
  /// test per operand, which runs faster (a tenth of normal_lpdf's and advection's gradient).
  template <std::size_t N>
  struct statement_writer {
    ADX_ALWAYS_INLINE statement_writer(detail::stored_index* i, T* p, epoch_type e) noexcept
        : idx(i), partial(p), epoch(e) {}
    detail::stored_index* idx;
    T* partial;
    epoch_type epoch;
    std::uint32_t n = 0;
    /// The OR of e ^ epoch: non-zero iff an operand is a constant or from another recording.
    epoch_type stray = 0;
    std::array<epoch_type, N> epochs;  // read only when stray: left uninitialised
    ADX_ALWAYS_INLINE void add(index_type i, epoch_type e, T const& p) {
      idx[n] = detail::stored_index{i};
      partial[n] = p;
      epochs[n] = e;
      stray |= e ^ epoch;
      ++n;
      note_outer_partial(p);
    }
  };
  /// Statements of more operands than this use statement_writer.
  static constexpr std::size_t short_statement = 8;

  template <class E>
  ADX_ALWAYS_INLINE index_type record_statement(E const& e) {
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
  /// A statement some of whose n operands are not variables of this recording: drops the
  /// constants (index 0: they take no place on the tape), checks that the others' recordings
  /// are live, and notes non-finite partials. Returns the number of operands kept.
  ADX_NOINLINE std::size_t settle_statement(detail::stored_index* idx, T* partial, epoch_type const* epochs,
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
  /// A sweep from an output of a tape node that is not its last (y[0] of a tensor operation)
  /// must start at the node's own statement, which follows its outputs.
  index_type through_node(index_type top) const noexcept {
    if (nodes_.empty() || top < nodes_.front()->first) return top;
    auto const it = std::upper_bound(nodes_.begin(), nodes_.end(), top,
                                     [](index_type t, node_ptr<> const& nd) { return t < nd->first; });
    node const& nd = **std::prev(it);  // the last node starting at or before top
    return top < nd.first + nd.count ? nd.first + nd.count - 1 : top;
  }

  /// Starts a block entry of n independent variables (its header: the first index, so that
  /// the variables added to it later need no update of the entry); returns the first.
  ADX_NOINLINE index_type open_block(std::size_t n) {
    index_type const first = claim_indices(n);
    arena_.reserve(1, first);
    *arena_.idx_top() = detail::stored_index{first};
    *arena_.val_top() = detail::constant<T>(0);
    arena_.commit_long(1, static_cast<std::uint8_t>(block_statement));
    open_block_ = n_;
    return first;
  }

  ADX_NOINLINE void note_if_anomaly(index_type k, char const* operation, source_location where) {
    if (k != 0 && detail::anomaly_mode()) note_origin(k, 1, operation, where);
  }

  /// The state of a backward sweep: adjoints, seeds, reachability, stops. Each recording has
  /// its own from its first sweep on (a nested recording's sweep leaves the enclosing ones'
  /// adjoints as they were), and so does each private sweep (begin_private_sweep); the saved
  /// ones are kept in stash_, whose slots above stashed_ keep their buffers for the next use
  /// (no allocation per gradient). A running sweep (a vjp computing a gradient inside it) holds
  /// a pointer into its adjoints: stashing moves the vector, not its buffer.
  struct sweep_state {
    std::vector<T> adj;
    std::vector<index_type> seeds;
    std::vector<std::uint8_t> reached, stops;
    index_type swept = 0;
    index_type written_low = 1, written_high = 0;  ///< adjoints outside this range are zero
    bool seed_finite = true, reached_valid = false, track_reached = false;
  };
  struct frame {
    epoch_type epoch;
    index_type n;
    typename detail::statement_arena<detail::stored_index, T>::mark stmts;
    bool careful;
    std::size_t nodes;
    detail::node_memory::mark node_mem;
    bool owns_sweep_state = false;  ///< it has swept: the enclosing recording's state is stashed
  };
  void swap_sweep_state(sweep_state& s) noexcept {
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
  /// Saves the live sweep state and starts a fresh one (released_ stays: it belongs to the
  /// recording, not to a sweep). The fresh one is a spare's buffers, whose written range says
  /// what its next begin_sweep zeroes.
  void stash_sweep_state() {
    if (stash_.size() == stashed_) stash_.emplace_back();
    swap_sweep_state(stash_[stashed_++]);
    seeds_.clear();
    reached_.clear();
    stops_.clear();
    swept_ = 0;
    seed_finite_ = true;
    reached_valid_ = track_reached_ = false;
  }
  void unstash_sweep_state() noexcept { swap_sweep_state(stash_[--stashed_]); }

 public:
  /// A sweep of the current recording whose adjoints are the caller's alone: until
  /// end_private_sweep, sweeps and adjoint reads use a fresh state, and then the one before is
  /// back (the API layer's gradients leave the adjoints of the user's backward as they were).
  void begin_private_sweep() { stash_sweep_state(); }
  void end_private_sweep() noexcept { unstash_sweep_state(); }

 private:
  ADX_ALWAYS_INLINE index_type next_index() {
    if (n_ == max_index) [[unlikely]]
      throw_tape_full();
    return ++n_;
  }
  /// The next n indices, for one entry that covers them all (a block of variables, a node).
  index_type claim_indices(std::size_t n) {
    if (n > std::size_t{max_index - n_}) throw_tape_full();
    index_type const first = n_ + 1;
    n_ += static_cast<index_type>(n);
    return first;
  }
  [[noreturn]] static void throw_tape_full() {
    throw error("adx: tape full (2^32 - 1 statements); reset it or record in smaller pieces");
  }
  void rewind_to(frame const& f) {
    n_ = f.n;
    open_block_ = lone_variable_ = no_block;  // the entry may be gone, and n_ may meet it again later
    arena_.rewind(f.stmts);
    nodes_.resize(f.nodes);
    node_mem_.rewind(f.node_mem);  // after the nodes using it are gone
    if (released_.size() > std::size_t{n_} + 1) released_.resize(std::size_t{n_} + 1);  // indices get reused
    if (outer_partial_.size() > std::size_t{n_} + 1) outer_partial_.resize(std::size_t{n_} + 1);
    while (!unconnected_.empty() && unconnected_.back().first > n_) unconnected_.pop_back();
    if (!unconnected_.empty()) unconnected_.back().second = std::min(unconnected_.back().second, n_);
    careful_ = f.careful;
    swept_ = std::min(swept_, n_);
    if (origins_.size() > std::size_t{n_} + 1) origins_.resize(std::size_t{n_} + 1);
  }

  // ---- anomaly mode (reverse/anomaly.hpp) --------------------------------------------------

  void note_origin(index_type first, index_type count, char const* operation, source_location where) {
    if (origins_.size() < std::size_t{first} + count) origins_.resize(std::size_t{first} + count);
    for (index_type j = 0; j < count; ++j) origins_[first + j] = statement_origin{operation, where};
  }
  statement_origin origin(index_type i) const noexcept {
    return i < origins_.size() ? origins_[i] : statement_origin{};
  }

  void check_seeds() const {
    for (index_type i : seeds_)
      if (!detail::all_finite(adj_[i]))
        throw anomaly_error("adx: anomaly: the seed of the backward sweep is " + detail::number_text(adj_[i]) + " at " +
                                detail::describe_origin(i, origin(i)),
                            0, statement_origin{}, i, origin(i));
  }
  /// A statement's contribution c = partial * a to the adjoint of statement i was not finite.
  [[noreturn]] void throw_statement_anomaly(index_type k, std::size_t operand, index_type i, T const& partial,
                                            T const& a, T const& c) const {
    throw anomaly_error("adx: anomaly: the backward sweep produced " + detail::number_text(c) + " in the adjoint of " +
                            detail::describe_origin(i, origin(i)) + ", through " +
                            detail::describe_origin(k, origin(k)) + ": its partial with respect to operand " +
                            std::to_string(operand + 1) + " is " + detail::number_text(partial) +
                            " and its adjoint is " + detail::number_text(a),
                        k, origin(k), i, origin(i));
  }
  /// After a node ran: the first input whose adjoint it made non-finite (every earlier
  /// contribution was checked, so the node produced it).
  void check_node(node const& nd, T const* adj) {
    scratch_.assign(std::size_t{nd.first}, 0);
    nd.mark_inputs(scratch_.data());
    for (index_type i = 1; i < nd.first; ++i)
      if (scratch_[i] && !detail::all_finite(adj[i])) {
        throw anomaly_error("adx: anomaly: the backward sweep produced " + detail::number_text(adj[i]) +
                                " in the adjoint of " + detail::describe_origin(i, origin(i)) + ", through " +
                                detail::describe_origin(nd.first, origin(nd.first)) +
                                " (a tensor operation on statements " + std::to_string(nd.first) + " to " +
                                std::to_string(nd.first + nd.count - 1) + ", whose adjoints were finite)",
                            nd.first, origin(nd.first), i, origin(i));
      }
  }

  /// The sweep without reachability: run_plain for floating-point adjoints, run<false>
  /// otherwise. It is exact unless it skipped a node (zero output adjoints) that answers
  /// nonfinite(); then it returns false with the adjoints reset to the seeds, and tape::sweep
  /// makes the careful sweep. The seeds are kept for that only when a node lies below top.
  bool plain_sweep(index_type top) {
    auto const once = [&] {
      if constexpr (std::is_floating_point_v<T>)
        return floored_ ? run_plain<true>(top) : run_plain<false>(top);
      else
        return floored_ ? run<false, false, true>(top) : run<false>(top);
    };
    if (nodes_.empty() || top < nodes_.front()->first) return once(), true;  // no node: none is skipped
    seed_values_.clear();
    for (index_type i : seeds_) seed_values_.push_back(adj_[i]);
    if (once()) return true;
    std::fill_n(adj_.begin() + 1, std::size_t{top}, detail::constant<T>(0));
    for (std::size_t s = 0; s < seeds_.size(); ++s) adj_[seeds_[s]] = seed_values_[s];
    return false;
  }

  /// The sweep over the statements and nodes at or below top. Careful: only what the seeds
  /// reach (reached_), which marks what it reaches; Checked: anomaly mode's checks as well.
  /// Returns false if (not Careful) a node skipped for its zero adjoints answers nonfinite().
  /// Floored: the sweep notes the lowest index it writes and ends below it (begin_sweep).
  template <bool Careful, bool Checked = false, bool Floored = false>
  bool run(index_type top) {
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
            if constexpr (Checked) {
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
          if constexpr (Checked) check_node(nd, adj);
        },
        no_op{}, std::bool_constant<Floored>{}, low);
    written_low_ = low;
    return exact;
  }

  /// The plain sweep over floating-point adjoints: run<false> with one register. Scalar code
  /// mostly feeds each statement into the next through its first operand (s += ..., chains of
  /// updates), so statement k adds to the adjoint of k - 1, which is read right after. Through
  /// memory that is a store-to-load round trip on the critical path of every statement (about
  /// twice an addition's latency); here that one adjoint stays in `held` until statement k - 1
  /// reads it. The operations and their order are those of run<false>.
  template <bool Floored>
  bool run_plain(index_type top) {
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

  /// A node some of whose outputs are stop statements: their adjoints are kept but not passed on.
  void run_stopped_node(node const& nd, T* adj, std::uint8_t* reach) {
    std::vector<std::pair<index_type, T>> kept;
    for (index_type j = 0; j < nd.count; ++j) {
      index_type const o = nd.first + j;
      if (o < stops_.size() && stops_[o]) {
        kept.emplace_back(o, adj[o]);
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

  /// Whether statement k is the result of a rule noted by mark_unconnected.
  bool unconnected(index_type k) const noexcept {
    auto const it = std::upper_bound(unconnected_.begin(), unconnected_.end(), k,
                                     [](index_type v, auto const& r) { return v < r.first; });
    return it != unconnected_.begin() && k <= std::prev(it)->second;
  }

  struct no_op {  // for_each_entry's on_block by default
    void operator()() const noexcept {}
  };
  /// for_each_entry's floor by default (not Floored): every entry is visited.
  static constexpr index_type no_floor = 0;
  /// Calls statement(k, n, operands, partials) for each statement at or below top,
  /// on_node(nd) for each node whose outputs are, and on_block() at each block of independent
  /// variables (which have nothing to pass on): from the last down to the first (the sweep's
  /// order: run and run_plain) or, with `Upward`, in recording order. Always inlined: the sweeps'
  /// state (run_plain's held adjoint) stays in registers. A chunk's entries can be read only from its end (a long
  /// statement's operand count follows its operands), so upward each chunk is listed first, then visited.
  /// Floored (downward only): stop once every entry left is below floor, which statement and
  /// on_node may lower as they go.
  template <bool Upward, class OnStatement, class OnNode, class OnBlock = no_op, bool Floored = false>
  ADX_ALWAYS_INLINE void for_each_entry(index_type top, OnStatement&& statement, OnNode&& on_node,
                                        OnBlock&& on_block = {}, std::bool_constant<Floored> = {},
                                        index_type const& floor = no_floor) {
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
      std::vector<entry> list;
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
        for (auto e = list.rbegin(); e != list.rend(); ++e)
          if (e->nd)
            on_node(*e->nd);
          else
            statement(e->k, e->n, e->idx, e->partial);
      }
    }
  }
  /// for_each_entry's walk down one chunk c; false once the entries left are all below floor.
  template <bool Floored = false, class OnStatement, class OnNode, class OnBlock>
  ADX_ALWAYS_INLINE bool chunk_entries_down(std::size_t c, index_type top, OnStatement&& statement, OnNode&& on_node,
                                            OnBlock&& on_block, index_type const& floor = no_floor) {
    auto const& chunks = arena_.chunks();
    auto const& ch = chunks[c];
    if (ch.stmts == 0 || ch.first > top) return true;
    detail::operand_count const* const count = ch.count.get();
    detail::stored_index const* const idx = ch.idx.get();
    T const* const val = ch.val.get();
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

  [[noreturn]] static void throw_released() {
    throw gradient_error(
        "adx: Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
        "you need to access saved tensors after calling backward.");
  }

  /// A node runs when the seeds reach one of its outputs (careful sweep) or, in the plain sweep,
  /// when one of its outputs has a non-zero adjoint. Like a tensor operation in torch it then
  /// runs for all its elements, so an infinite partial of an element whose adjoint is zero
  /// gives NaN there, as torch gives. (A node the plain sweep skips may be reached with zero
  /// adjoints all the same: node::nonfinite.) Returns whether the node ran.
  static bool run_node(node const& nd, T* adj, std::uint8_t* reach) {
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

  static tape& thread_default() {
    thread_local tape t;
    current_ = &t;
    return t;
  }

  static constexpr index_type max_index = ~index_type{0};
  // operand-count bytes with a meaning of their own (followed by one header entry)
  static constexpr unsigned block_statement = 253;  // header index = the block's first index
  static constexpr unsigned long_statement = 254;   // header index = the operand count
  static constexpr unsigned node_statement = 255;   // header index = the node's number
  inline static thread_local tape* current_ = nullptr;

  detail::statement_arena<detail::stored_index, T> arena_;
  index_type n_ = 0;
  epoch_type epoch_ = 0;
  bool careful_ = false;  // sweeps follow reachability: a non-finite partial, or a user's backward
  bool seed_finite_ = true;
  bool track_reached_ = false;
  index_type swept_ = 0;
  index_type written_low_ = 1, written_high_ = 0;  // adj_ is zero outside this range
  bool floored_ = false;                           // this sweep ends below its lowest write
  std::vector<T> adj_;
  // The last index of the block of variables that is the tape's last entry, if it is (else
  // no_block, which n_ never equals before the tape is full). Not next to n_: GCC would store
  // the two in one 8-byte write that the next variable's 4-byte loads cannot forward from.
  static constexpr index_type no_block = ~index_type{0};
  index_type open_block_ = no_block;
  index_type lone_variable_ = no_block;      // likewise for a variable recorded as a statement of its own
  std::vector<std::uint8_t> reached_;        // built by careful sweeps only
  std::vector<index_type> seeds_;            // the seeded statements of the sweep under way
  std::vector<T> seed_values_;               // their adjoints once seeded (sweep: kept for a second, careful run)
  std::vector<std::uint8_t> stops_;          // set_stops
  std::vector<std::uint8_t> released_;       // settle_release
  std::vector<std::uint8_t> outer_partial_;  // mark_outer_partial
  std::vector<std::pair<index_type, index_type>> unconnected_;  // mark_unconnected: [first, last], ascending
  bool reached_valid_ = false;
  std::vector<frame> frames_;
  std::vector<std::size_t> sweeping_;  // the frame count of each sweep running (nested ones inside vjps)
  std::vector<sweep_state> stash_;     // saved sweep states (below stashed_) and spare buffers
  std::size_t stashed_ = 0;
  detail::node_memory node_mem_;           // the nodes' arrays and the nodes made by make_node
  std::vector<node_ptr<>> nodes_;          // (declared after node_mem_: destroyed before it)
  std::vector<statement_origin> origins_;  // anomaly mode only
  std::vector<std::uint8_t> scratch_;      // anomaly mode only

 public:
  /// Makes this tape the thread's current one (used by tape_scope; returns the previous one).
  tape* activate() noexcept {
    tape* prev = current_;
    current_ = this;
    return prev;
  }
  static void restore(tape* prev) noexcept { current_ = prev; }
};

}  // namespace adx
