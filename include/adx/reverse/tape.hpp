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
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "adx/core/source_location.hpp"

#include "adx/core/error.hpp"
#include "adx/core/expr.hpp"
#include "adx/core/flat_vector.hpp"
#include "adx/reverse/anomaly.hpp"
#include "adx/reverse/arena.hpp"
#include "adx/reverse/modes.hpp"
#include "adx/reverse/tape_node.hpp"
#include "adx/reverse/tape_support.hpp"

namespace adx {

template <class T>
class tape;

/// The recording of reverse mode for var<T>: statements (operand indices and partials of type T),
/// tensor nodes, frames for nested recordings, and the backward sweep. One per thread and T,
/// reached through current(); tape_scope opens a recording on it. Users rarely touch it: var,
/// tensor<var<T>>, backward and the gradient APIs do.
template <class T>
class tape {
 public:
  using value_type = T;  ///< the partials' and adjoints' type (double for var<double>)

  tape() {
    frames_.push_back(frame{detail::new_epoch(), 0, {}, false, 0, {}});
    epoch_ = frames_.back().epoch;
  }
  tape(tape const&) = delete;
  tape& operator=(tape const&) = delete;
  ~tape() {
    if (current_ == this) current_ = nullptr;
    drop_nodes(0);
    for (sweep_state* st : stash_) delete st;
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
    detail::stored_index* idx;       ///< where the operands' indices go
    T* partial;                      ///< where their partials go
    std::uint32_t n;                 ///< operands written so far
    epoch_type epoch;                ///< the recording's epoch (an operand of another one is checked)
    detail::finite_check<T> finite;  ///< whether every partial written is finite
    tape* owner;                     ///< the tape written to
    /// Writes operand i (of recording e) with partial p; a constant (index 0) is left out.
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
  ADX_ALWAYS_INLINE index_type new_variable(source_location where = {});

  /// Records n independent variables at once (a tensor's elements): indices first .. first +
  /// n - 1, all in one block entry (the open one if the last entry is a block). Returns first
  /// (0 if n is 0). Made under no_grad too, as new_variable.
  index_type new_variables(std::size_t n, source_location where = {});

  /// Records one statement of any number of operands (reductions, dot products): fill(w)
  /// calls w.add(index, epoch, partial) at most max_operands times. Returns 0 if none is active.
  /// `operation` names it for anomaly mode.
  template <class F>
  index_type record_n(std::size_t max_operands, F&& fill, char const* operation = "a reduction");

  /// A tape node (reverse/tape_node.hpp): an operation on whole blocks whose adjoint code runs
  /// once when the sweep reaches its outputs.
  using node = tape_node<T>;
  /// The base of a node whose inputs are listed in one place (reverse/tape_node.hpp).
  template <class Derived>
  using node_with_inputs = tape_node_with_inputs<T, Derived>;
  /// Deletes a node made by make_node or with new.
  using node_deleter = detail::node_deleter;
  /// An owning pointer to a node, as record_node takes it.
  template <class N = node>
  using node_ptr = std::unique_ptr<N, node_deleter>;
  /// A node as the tape keeps it: released from its node_ptr, destroyed by drop_nodes.
  using owned_node = detail::owned_node<node>;
  /// Destroys the nodes from the keep-th on.
  void drop_nodes(std::size_t keep) noexcept {
    while (nodes_.size() > keep) {
      owned_node const nd = nodes_.back();
      nodes_.pop_back();
      nd.deleter(nd.p);
    }
  }
  /// A node of type N made in the node memory (no malloc per operation); hand it to record_node.
  template <class N, class... A>
  auto make_node(A&&... a) -> node_ptr<N>;

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
  index_type record_node(node_ptr<> nd, std::size_t outputs, char const* operation = nullptr);

  /// The current recording's epoch: the number its vars carry (never reused in the process).
  epoch_type epoch() const noexcept { return epoch_; }
  /// The number of indices given out: the last statement's index (0 for an empty tape).
  index_type size() const noexcept { return n_; }

  /// Whether epoch e belongs to a recording that is still live on this tape (0: a constant).
  bool is_live(epoch_type e) const noexcept;
  /// check_live for an operand of another recording than the current one (the writer's rare
  /// case), kept out of line so that recording code does not carry the throw.
  ADX_NOINLINE void check_live_outer(epoch_type e) const { check_live(e); }
  /// Throws unless epoch e belongs to a recording that is still live on this tape.
  void check_live(epoch_type e) const;
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
  void push_frame();
  /// Ends the innermost recording: its statements are dropped in O(1), its vars become stale.
  void pop_frame();
  /// A point of the current recording to go back to (see rollback).
  struct checkpoint_t {
    index_type n;                                                           ///< indices given out
    typename detail::statement_arena<detail::stored_index, T>::mark stmts;  ///< the arena's end
    bool careful;                                                           ///< sweep_carefully's flag
    std::size_t nodes;                                                      ///< nodes recorded
    detail::node_memory::mark node_mem;                                     ///< the node memory's end
  };
  /// The current point of the current recording, for rollback.
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
  void shrink_to_fit();
  /// The number of nested recordings open on this tape (0: only the thread's base recording).
  std::size_t depth() const noexcept { return frames_.size() - 1; }

  // ---- the backward sweep ------------------------------------------------------------------

  /// Runs the backward sweep that spec describes: zeroes the adjoints the last sweep wrote, adds
  /// the seeds and passes the adjoints down from the highest seed to the first statement. Every
  /// sweep of a tape is asked for this way (backward, the API layer's sweep_request).
  void sweep(sweep_spec<T> const& spec);
  /// Notes that statement i of this tape is a partial of an operation recorded one level up (a
  /// var<var<T>> statement or tensor node: its partials are var<T>s recorded here). torch makes
  /// such derivatives afresh in every create_graph backward, so that a Hessian-vector product can
  /// be taken again and again from one forward pass (api/release.hpp never releases them; the
  /// writers of the level above call this).
  void mark_outer_partial(index_type i);
  /// A partial p that a writer of this tape stores: if it is a var one level down (this tape
  /// records var<var<T>>), noted on that tape (mark_outer_partial). Nothing for numbers.
  static void note_outer_partial(T const& p) {
    if constexpr (requires { p.index(); }) tape<typename T::value_type>::current().mark_outer_partial(p.index());
  }
  /// Whether any of statements first .. first + count - 1 was noted by mark_outer_partial.
  bool outer_partial(index_type first, index_type count = 1) const noexcept {
    if (first >= outer_partial_.size()) return false;
    return detail::any_marked(outer_partial_.data(), first,
                              std::min<std::size_t>(count, outer_partial_.size() - first));
  }
  /// Notes statements first .. first + count - 1 as the results of an operation to which
  /// TensorFlow gives no gradient (floor, ceil, round, trunc: rules flagged unconnected_in_tf),
  /// a fact of the recording that the API layer reads (tf.gradients stops its sweeps there).
  void mark_unconnected(index_type first, index_type count);
  /// The statements noted by mark_unconnected: [first, last] ranges, ascending.
  std::span<index_range const> unconnected_ranges() const noexcept {
    return {unconnected_.data(), unconnected_.size()};
  }
  /// Whether statement k was noted by mark_unconnected.
  bool unconnected(index_type k) const noexcept;
  /// One byte per statement that the layers above keep with this recording (the API layer's
  /// torch release marks: api/release.hpp). The tape never reads them; it cuts them back with the
  /// recording when a frame ends, so that an entry never outlives its statement.
  detail::flat_vector<std::uint8_t>& statement_marks() noexcept { return statement_marks_; }
  /// Calls statement(k, n, operands, partials) for each statement at or below top and
  /// on_node(nd) for each node whose outputs are, in recording order (Upward) or from the last
  /// down: a read of the recording for the layers above.
  template <bool Upward, class OnStatement, class OnNode>
  void visit(index_type top, OnStatement&& statement, OnNode&& on_node) {
    for_each_entry<Upward>(top, statement, on_node);
  }
  /// The highest statement of the last sweep (its top seed, or a node's last output above it).
  index_type swept() const noexcept { return swept_; }
  /// Whether the last sweep noted what it reached (sweep_spec::track_reached, or a careful sweep).
  bool reachability_known() const noexcept { return reached_valid_; }
  /// Whether the last sweep reached statement i (meaningful when tracking was on for it).
  bool reached(index_type i) const noexcept {
    return reached_valid_ && i != 0 && i <= swept_ && i < reached_.size() && reached_[i];
  }

  /// The adjoint of statement i after the last sweep (zero if i is inactive or was not swept).
  T adjoint(index_type i, epoch_type e) const;

  /// adjoint(i, e) for a var already checked to be live (bulk reads check once per recording).
  T adjoint_of_live(index_type i) const noexcept { return i == 0 || i > swept_ ? detail::constant<T>(0) : adj_[i]; }
  /// adjoint_of_live of first .. first + n - 1 (first > 0) into out: a copy of the swept part.
  void adjoints_of_live(index_type first, std::size_t n, T* out) const;

  /// The memory this tape holds (statements, operands, arenas, adjoints, nodes).
  tape_stats stats();

 private:
  /// Writes the N operands of a long expression's statement into the arena as the push hands
  /// them over, without a test: whether each operand is a variable of this recording is noted
  /// (stray) and settled once for the statement (settle_statement). The per-operand code is a
  /// few stores, so that a long expression compiles to little code; a short one keeps writer's
  /// test per operand, which runs faster where short statements dominate (normal_lpdf's and
  /// advection's gradients).
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
  ADX_ALWAYS_INLINE index_type record_statement(E const& e);
  /// A statement some of whose n operands are not variables of this recording: drops the
  /// constants (index 0: they take no place on the tape), checks that the others' recordings
  /// are live, and notes non-finite partials. Returns the number of operands kept.
  ADX_NOINLINE std::size_t settle_statement(detail::stored_index* idx, T* partial, epoch_type const* epochs,
                                            std::size_t n);
  /// A sweep from an output of a tape node that is not its last (y[0] of a tensor operation)
  /// must start at the node's own statement, which follows its outputs.
  index_type through_node(index_type top) const noexcept;

  /// Zeroes the adjoints of statements 1..top and starts a sweep (sweep(spec)'s first step).
  void begin_sweep(index_type top);
  /// Adds v to the adjoint of statement i, whose recording sweep(spec) has checked to be live.
  void seed(index_type i, T const& v);
  /// Runs the sweep from statement top down to 1 (sweep(spec)'s last step).
  void run_sweep(index_type top);

  /// Starts a block entry of n independent variables (its header: the first index, so that
  /// the variables added to it later need no update of the entry); returns the first.
  ADX_NOINLINE index_type open_block(std::size_t n);

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
    detail::flat_vector<T> adj;
    detail::flat_vector<index_type> seeds;
    detail::flat_vector<std::uint8_t> reached;
    std::span<std::uint8_t const> stops;
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
  void swap_sweep_state(sweep_state& s) noexcept;
  /// Saves the live sweep state and starts a fresh one (statement_marks_ stays: it belongs to
  /// the recording, not to a sweep). The fresh one is a spare's buffers, whose written range says
  /// what its next begin_sweep zeroes.
  void stash_sweep_state();
  void unstash_sweep_state() noexcept { swap_sweep_state(*stash_[--stashed_]); }

 public:
  /// A sweep of the current recording whose adjoints are the caller's alone: until
  /// end_private_sweep, sweeps and adjoint reads use a fresh state, and then the one before is
  /// back (the API layer's gradients leave the adjoints of the user's backward as they were).
  void begin_private_sweep() {
    stash_sweep_state();
    private_at_.push_back(frames_.size());
  }
  /// Ends the private sweep begun last: the sweep state before it is back.
  void end_private_sweep() noexcept {
    private_at_.pop_back();
    unstash_sweep_state();
  }

 private:
  ADX_ALWAYS_INLINE index_type next_index() {
    if (n_ == max_index) [[unlikely]]
      throw_tape_full();
    return ++n_;
  }
  /// The next n indices, for one entry that covers them all (a block of variables, a node).
  index_type claim_indices(std::size_t n);
  [[noreturn]] static void throw_tape_full() {
    throw error("adx: tape full (2^32 - 1 statements); reset it or record in smaller pieces");
  }
  void rewind_to(frame const& f);

  // ---- anomaly mode (reverse/anomaly.hpp) --------------------------------------------------

  void note_origin(index_type first, index_type count, char const* operation, source_location where);
  statement_origin origin(index_type i) const noexcept {
    return i < origins_.size() ? origins_[i] : statement_origin{};
  }

  void check_seeds() const;
  /// A statement's contribution c = partial * a to the adjoint of statement i was not finite.
  [[noreturn]] void throw_statement_anomaly(index_type k, std::size_t operand, index_type i, T const& partial,
                                            T const& a, T const& c) const;
  /// After a node ran: the first input whose adjoint it made non-finite (every earlier
  /// contribution was checked, so the node produced it).
  void check_node(node const& nd, T const* adj);

  /// The sweep without reachability: run_plain for floating-point adjoints, run<false>
  /// otherwise. It is exact unless it skipped a node (zero output adjoints) that answers
  /// nonfinite(); then it returns false with the adjoints reset to the seeds, and tape::sweep
  /// makes the careful sweep. The seeds are kept for that only when a node lies below top.
  bool plain_sweep(index_type top);

  /// The sweep over the statements and nodes at or below top. Careful: only what the seeds
  /// reach (reached_), which marks what it reaches; checked: anomaly mode's checks as well (a
  /// flag, not a template parameter: one careful sweep to compile, whose per-operand test is
  /// cheap beside the reachability it tests anyway). Returns false if (not Careful) a node
  /// skipped for its zero adjoints answers nonfinite(). Floored: the sweep notes the lowest
  /// index it writes and ends below it (begin_sweep).
  template <bool Careful, bool Floored = false>
  bool run(index_type top, bool checked = false);

  /// The plain sweep over floating-point adjoints: run<false> with one register. Scalar code
  /// mostly feeds each statement into the next through its first operand (s += ..., chains of
  /// updates), so statement k adds to the adjoint of k - 1, which is read right after. Through
  /// memory that is a store-to-load round trip on the critical path of every statement (about
  /// twice an addition's latency); here that one adjoint stays in `held` until statement k - 1
  /// reads it. The operations and their order are those of run<false>.
  template <bool Floored>
  bool run_plain(index_type top);

  /// A node some of whose outputs are stop statements: their adjoints are kept but not passed on.
  void run_stopped_node(node const& nd, T* adj, std::uint8_t* reach);

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
                                        index_type const& floor = no_floor);
  /// for_each_entry's walk down one chunk c; false once the entries left are all below floor.
  template <bool Floored = false, class OnStatement, class OnNode, class OnBlock>
  ADX_ALWAYS_INLINE bool chunk_entries_down(std::size_t c, index_type top, OnStatement&& statement, OnNode&& on_node,
                                            OnBlock&& on_block, index_type const& floor = no_floor);

  /// A node runs when the seeds reach one of its outputs (careful sweep) or, in the plain sweep,
  /// when one of its outputs has a non-zero adjoint. Like a tensor operation in torch it then
  /// runs for all its elements, so an infinite partial of an element whose adjoint is zero
  /// gives NaN there, as torch gives. (A node the plain sweep skips may be reached with zero
  /// adjoints all the same: node::nonfinite.) Returns whether the node ran.
  static bool run_node(node const& nd, T* adj, std::uint8_t* reach);

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
  detail::flat_vector<T> adj_;
  // The last index of the block of variables that is the tape's last entry, if it is (else
  // no_block, which n_ never equals before the tape is full). Not next to n_: GCC would store
  // the two in one 8-byte write that the next variable's 4-byte loads cannot forward from.
  static constexpr index_type no_block = ~index_type{0};
  index_type open_block_ = no_block;
  index_type lone_variable_ = no_block;  // likewise for a variable recorded as a statement of its own
  // The bookkeeping is in flat_vectors (core/flat_vector.hpp), which compile to a fraction of
  // std::vector's code: every program that takes a gradient compiles these members.
  detail::flat_vector<std::uint8_t> reached_;          // built by careful sweeps only
  detail::flat_vector<index_type> seeds_;              // the seeded statements of the sweep under way
  detail::flat_vector<T> seed_values_;                 // their adjoints once seeded (kept for a careful run)
  std::span<std::uint8_t const> stops_;                // the running sweep's (sweep_spec::stops)
  detail::flat_vector<std::uint8_t> statement_marks_;  // statement_marks
  detail::flat_vector<std::uint8_t> outer_partial_;    // mark_outer_partial
  detail::flat_vector<index_range> unconnected_;       // mark_unconnected, ascending
  bool reached_valid_ = false;
  detail::flat_vector<frame> frames_;
  detail::flat_vector<std::size_t> sweeping_;  // the frame count of each sweep running (nested ones inside vjps)
  // saved sweep states (below stashed_) and spare buffers, each made with new and deleted by ~tape:
  // a stashed state must not move (a running sweep holds a pointer into its adjoints' buffer,
  // which a swap keeps where it is anyway)
  detail::flat_vector<sweep_state*> stash_;
  std::size_t stashed_ = 0;
  detail::flat_vector<std::size_t> private_at_;    // the frame count at each open private sweep
  detail::node_memory node_mem_;                   // the nodes' arrays and the nodes made by make_node
  detail::flat_vector<owned_node> nodes_;          // destroyed by ~tape and rewind_to, before node_mem_
  detail::flat_vector<statement_origin> origins_;  // anomaly mode only
  detail::flat_vector<std::uint8_t> scratch_;      // anomaly mode only

 public:
  /// Makes this tape the thread's current one (used by tape_scope; returns the previous one).
  tape* activate() noexcept {
    tape* prev = current_;
    current_ = this;
    return prev;
  }
  /// Makes prev the thread's current tape again (what activate returned).
  static void restore(tape* prev) noexcept { current_ = prev; }
};

}  // namespace adx

// The members defined out of the class: recording (statements, blocks, nodes, frames) and the
// backward sweep.
#include "adx/reverse/recording.hpp"
#include "adx/reverse/sweep.hpp"
