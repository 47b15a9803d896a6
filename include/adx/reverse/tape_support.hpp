// SPDX-License-Identifier: MIT
// adx: what the tape (reverse/tape.hpp) is built from that is not the tape: tests over runs of
// marks and partials, the finiteness probe of a statement's partials, the process-wide epoch
// counter, structural zeros of nested adjoints.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "adx/config.hpp"
#include "adx/core/expr.hpp"

namespace adx {

using index_type = std::uint32_t;
using epoch_type = std::uint32_t;
/// Statements first to last, both included.
struct index_range {
  index_type first;  ///< the first statement
  index_type last;   ///< the last statement
};

namespace detail {
/// Whether any of marks[first .. first + count) is set; null marks count as all set (every input
/// used: tape<T>::node::keeps_values).
inline bool any_marked(std::uint8_t const* marks, index_type first, std::size_t count) {
  return !marks || std::any_of(marks + first, marks + first + count, [](std::uint8_t m) { return m != 0; });
}

/// Whether the n partials p are all +1 or -1 (at the innermost level): a backward pass through
/// them needs no value of the forward pass (torch's release of a swept graph: api/release.hpp).
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

/// Whether the N partials p are all finite: finite_check over them, in one loop.
template <std::size_t N, class T>
ADX_ALWAYS_INLINE bool all_finite_n(T const* p) {
  finite_check<T> f;
  for (std::size_t k = 0; k < N; ++k) f.note(p[k]);
  return f.all();
}

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

/// One seed of a backward sweep: `weight` is added to the adjoint of statement `index` of the
/// recording `epoch` (a var's index() and epoch()).
template <class T>
struct sweep_seed {
  index_type index;  ///< the seeded statement (0, a constant: no seed)
  epoch_type epoch;  ///< the recording it belongs to (checked to be live)
  T weight;          ///< added to its adjoint
};

/// What one backward sweep of a tape does (tape::sweep): the only way a sweep is asked for.
/// The layers above decide the policies (which statements stop it, whether reachability is
/// noted); the tape carries them out.
template <class T>
struct sweep_spec {
  /// The seeds; the sweep starts at the highest seeded statement. None: every adjoint reads zero.
  std::span<sweep_seed<T> const> seeds;
  /// A mask over statements (entry k for statement k; shorter than the recording: the rest
  /// are 0): a statement marked non-zero collects its adjoint but passes nothing on to its
  /// operands. Empty: nothing stops the sweep.
  std::span<std::uint8_t const> stops = {};
  /// Whether the sweep notes which statements it reaches (tape::reached afterwards).
  bool track_reached = false;
};

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

}  // namespace adx
