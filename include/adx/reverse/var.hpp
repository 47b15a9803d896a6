// SPDX-License-Identifier: MIT
// adx: reverse mode. var<T> is a value and the index of the statement that produced it on the
// thread's tape<T>. Assigning an expression records one statement (the whole expression's
// partials, computed at compile time by the rules); a copy shares the index (no recording).
//
//   var<double> x = 2.0;   // an independent variable (a new index)
//   var<double> y = x * x * sin(x);   // one statement with three operand entries
//   backward(y); x.adjoint();
//
// var<var<double>>: the sweep of tape<var<double>> does its arithmetic in var<double>, so it
// is recorded on tape<double>: the gradient is itself differentiable (repeated gradients).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "adx/core/source_location.hpp"

#if defined(__SSE2__) && (defined(__x86_64__) || defined(_M_X64))
#if defined(__AVX2__)
#include <immintrin.h>
#else
#include <emmintrin.h>  // SSE2 only: a twentieth of <immintrin.h>'s parsing
#endif
#define ADX_VAR_STORES 1
#else
#define ADX_VAR_STORES 0
#endif

#include "adx/core/compare.hpp"
#include "adx/core/expr.hpp"
#include "adx/reverse/tape.hpp"
#include "adx/rules/elementary.hpp"

namespace adx {

namespace detail {
/// make_independent's and adjoints' bulk access to a run of vars: x[i] has index first + i and
/// one epoch. The loops are written so that they run as vector instructions.
struct var_runs {
  /// The vector paths read and write a var<double> as two words: its value, then index and
  /// epoch as one little-endian word (index in the low half).
  template <class T>
  static constexpr void check_layout() noexcept {
    static_assert(sizeof(var<T>) == 16 && std::is_standard_layout_v<var<T>> && offsetof(var<T>, index_) == 8 &&
                  offsetof(var<T>, epoch_) == 12);
  }
  /// The word of index first + i, epoch e (as the intrinsics take it: a conversion, modulo 2^64).
  static constexpr long long id_word(index_type first, epoch_type e, std::uint64_t i = 0) noexcept {
    return static_cast<long long>((std::uint64_t{first} | std::uint64_t{e} << 32) + i);
  }
  /// x[i] = value v[i], index first + i, epoch e, for i < n. For var<double> (value, index,
  /// epoch: 16 bytes) whole vars are stored, two per 32-byte store with AVX2, one per 16-byte
  /// store with SSE2. (GCC vectorises the field-by-field loop into 8- and 4-byte stores and
  /// extracts, which runs no faster than the scalar loop.)
  template <class T>
  static void make(var<T>* x, T const* v, std::size_t n, index_type first, epoch_type e) noexcept {
    std::size_t i = 0;
#if ADX_VAR_STORES
    if constexpr (std::is_same_v<T, double>) {
      check_layout<T>();
      // first + n - 1 fits in an index (new_variables checked): the ids do not carry into the epoch
#if defined(__AVX2__)
      __m256i ids = _mm256_add_epi64(_mm256_set1_epi64x(id_word(first, e)), _mm256_set_epi64x(3, 2, 1, 0));
      for (; i + 4 <= n; i += 4) {
        __m256d const values = _mm256_loadu_pd(v + i);
        __m256d const lo = _mm256_unpacklo_pd(values, _mm256_castsi256_pd(ids));  // v0 id0 v2 id2
        __m256d const hi = _mm256_unpackhi_pd(values, _mm256_castsi256_pd(ids));  // v1 id1 v3 id3
        _mm256_storeu_pd(reinterpret_cast<double*>(x + i), _mm256_permute2f128_pd(lo, hi, 0x20));
        _mm256_storeu_pd(reinterpret_cast<double*>(x + i + 2), _mm256_permute2f128_pd(lo, hi, 0x31));
        ids = _mm256_add_epi64(ids, _mm256_set1_epi64x(4));
      }
#endif
      for (; i < n; ++i) {
        __m128d const next = _mm_castsi128_pd(_mm_cvtsi64_si128(id_word(first, e, i)));
        _mm_storeu_pd(reinterpret_cast<double*>(x + i), _mm_unpacklo_pd(_mm_load_sd(v + i), next));
      }
    }
#endif
    for (; i < n; ++i) x[i] = var<T>::recorded_active(v[i], first + static_cast<index_type>(i), e);
  }
  /// Whether x[i] has index first + i and epoch e for every i < n: no early exit, so that the
  /// loop runs as vector instructions (with AVX2, two whole vars per load).
  template <class T>
  static bool is_run(var<T> const* x, std::size_t n, index_type first, epoch_type e) noexcept {
    if (first == 0 || n - 1 > std::size_t{~index_type{0} - first}) return false;
    std::size_t i = 0;
#if ADX_VAR_STORES && defined(__AVX2__)
    if constexpr (std::is_same_v<T, double>) {  // two vars per 32-byte load, their ids compared as words
      check_layout<T>();
      __m256i expected = _mm256_set_epi64x(id_word(first, e, 1), 0, id_word(first, e), 0);
      __m256i differ = _mm256_setzero_si256();
      for (; i + 2 <= n; i += 2) {
        __m256i const pair = _mm256_loadu_si256(reinterpret_cast<__m256i const*>(x + i));
        differ = _mm256_or_si256(differ, _mm256_xor_si256(pair, expected));
        expected = _mm256_add_epi64(expected, _mm256_set_epi64x(2, 0, 2, 0));
      }
      // the value words differ anyway: keep the id words
      if (!_mm256_testz_si256(differ, _mm256_set_epi64x(-1, 0, -1, 0))) return false;
    }
#endif
    index_type differ = 0;
    for (; i < n; ++i) differ |= (x[i].index_ - static_cast<index_type>(i) - first) | (x[i].epoch_ ^ e);
    return differ == 0;
  }
};
}  // namespace detail

/// Reverse mode: a value and the index of the tape statement that produced it, on the thread's
/// current tape<T>. Assigning an expression records one statement; backward(y) sweeps the tape
/// and x.adjoint() reads dy/dx. Nesting T (var<var<double>>, var<dual<double>>) gives higher
/// derivatives. Copying a var shares its variable; a var outlives its recording only as a
/// stale_variable_error.
///
///     tape_scope<var<double>> scope;
///     var<double> x = 2.0, y = 3.0;
///     var<double> z = x * x * y;
///     backward(z);                          // x.adjoint() == 12, y.adjoint() == 4
template <class T>
class var {
 public:
  using value_type = T;                       ///< the type of the value and of the adjoint (one level down)
  using ad_type = var;                        ///< the AD scalar type itself (what expressions over vars evaluate to)
  static constexpr std::size_t n_active = 1;  ///< an active leaf of an expression

  /// An inactive zero (no tape entry): a constant until assigned.
  constexpr var() = default;
  /// An independent variable with value v (a new index on the current tape). Plain numbers are
  /// first made into T by T's own constructor (so var<var<double>>(2.0) is independent at
  /// both levels).
  template <class U>
  requires(level_v<U> < level_v<var> && std::is_constructible_v<T, U const&>)
      var(U const& v, source_location where = source_location::current())
      : value_(v) {
    auto& t = tape<T>::current();
    index_ = t.new_variable(where);
    epoch_ = t.epoch();
  }
  /// Records the expression as one statement (`where`: the line that did, for anomaly mode).
  template <ad_expression E>
  requires std::is_same_v<ad_type_t<E>, var> ADX_ALWAYS_INLINE var(E const& e,
                                                                   source_location where = source_location::current())
      : value_(e.val()) {
    auto& t = tape<T>::current();
    index_ = t.record(e, where);
    epoch_ = index_ ? t.epoch() : 0;
  }
  /// Does not compile: a dual (or other AD scalar) of the same level; nest the modes instead.
  template <ad_operand U>
  requires(level_v<U> == level_v<var> && !std::is_same_v<ad_type_t<U>, var>) var(U const&) {
    static_assert(sizeof(U) == 0,
                  "adx: a var<T> cannot be made from a dual (or another scalar type) of the same nesting level; "
                  "nest the modes instead, e.g. var<dual<double>> for forward-over-reverse");
  }

  /// The var of statement `index` recorded on the current tape in recording `epoch` (for code
  /// that records statements itself, such as tensor reductions and tape nodes).
  static constexpr var recorded(T const& v, index_type index, epoch_type epoch) {
    return recorded_active(v, index, index ? epoch : 0);
  }

  /// recorded() for an index known to be non-zero (the outputs of a tape node, a block of
  /// variables): no test, so that a loop making many of them stores value, index and epoch
  /// without a branch.
  static constexpr var recorded_active(T const& v, index_type index, epoch_type epoch) noexcept {
    var r;
    r.value_ = v;
    r.index_ = index;
    r.epoch_ = epoch;
    return r;
  }

  /// A constant: value v, no tape entry, derivative zero.
  static constexpr var constant(T const& v) {
    var r;
    r.value_ = v;
    return r;
  }

  // Assigning an expression or a number goes through the converting constructors above and the
  // copy assignment below: the conversion runs where the assignment is written, so anomaly
  // mode sees that line (an operator= cannot take a defaulted source_location of its own).
  // Copies are trivial, so that a var, and every expression holding vars, is trivially
  // copyable: an expression's operands are then copied as plain memory, with no copy
  // constructor to compile for each expression type.
  /// Shares o's variable (no recording).
  constexpr var(var const& o) noexcept = default;
  /// Shares o's variable (no recording).
  constexpr var& operator=(var const& o) noexcept = default;

  /// *this = *this + x, one statement (alias-safe).
  template <class X>
  ADX_ALWAYS_INLINE var& operator+=(X const& x) {
    return *this = var(*this + x, source_location{});
  }
  /// *this = *this - x, one statement.
  template <class X>
  ADX_ALWAYS_INLINE var& operator-=(X const& x) {
    return *this = var(*this - x, source_location{});
  }
  /// *this = *this * x, one statement.
  template <class X>
  ADX_ALWAYS_INLINE var& operator*=(X const& x) {
    return *this = var(*this * x, source_location{});
  }
  /// *this = *this / x, one statement.
  template <class X>
  ADX_ALWAYS_INLINE var& operator/=(X const& x) {
    return *this = var(*this / x, source_location{});
  }

  /// The value (the expression protocol's name for it; the same as value()).
  constexpr T const& val() const noexcept { return value_; }
  /// The value, one level down.
  constexpr T const& value() const noexcept { return value_; }
  /// The index of the statement that produced it on its tape (0: a constant).
  constexpr index_type index() const noexcept { return index_; }
  /// The recording it belongs to (0: a constant).
  constexpr epoch_type epoch() const noexcept { return epoch_; }
  /// True if the var depends on some independent variable of a live recording.
  constexpr bool is_active() const noexcept { return index_ != 0; }

  /// The adjoint after a backward sweep of this var's tape (zero if not reached).
  T adjoint() const { return tape<T>::current().adjoint(index_, epoch_); }

  /// Hands (index, partial) to the writer of a statement, with the leaf's position Pos in it
  /// if the writer takes one (a tensor node that treats positions differently).
  template <std::size_t Pos = 0, class W>
  ADX_ALWAYS_INLINE void push(W& w, T const& m) const {
    if constexpr (requires { w.template add_at<Pos>(index_, epoch_, m); })
      w.template add_at<Pos>(index_, epoch_, m);
    else
      w.add(index_, epoch_, m);
  }

 private:
  friend struct detail::var_runs;
  T value_{};
  index_type index_ = 0;
  epoch_type epoch_ = 0;
};

/// What generic code asks of a var (core/traits.hpp).
template <class T>
struct ad_traits<var<T>> {
  using value_type = T;                         ///< one level down
  static constexpr int level = level_v<T> + 1;  ///< nesting level: 1 for var<double>
  static constexpr bool is_reverse = true;      ///< reverse mode
  /// A constant: value v, no tape entry.
  static constexpr var<T> constant(T const& v) { return var<T>::constant(v); }
  /// Whether the value is finite at every level.
  static constexpr bool all_finite(var<T> const& v) { return detail::all_finite(v.val()); }
  /// v is the result of a rule flagged unconnected_in_tf (core/expr.hpp).
  static void note_unconnected(var<T> const& v) {
    if (v.index() != 0) tape<T>::current().mark_unconnected(v.index(), 1);
  }
};

/// Sweeps y's tape backward from y with seed (default 1); read results with x.adjoint().
template <class T>
void backward(var<T> const& y, value_type_t<var<T>> const& seed) {
  sweep_seed<T> const s{y.index(), y.epoch(), seed};
  tape<T>::current().sweep({.seeds = {&s, 1}});
}
template <class T>
void backward(var<T> const& y) {
  backward(y, detail::constant<T>(1));
}

/// The adjoint of x after the last sweep.
template <class T>
T adjoint(var<T> const& x) {
  return x.adjoint();
}

/// Makes every x[i] an independent variable of value values[i] on the current tape<T>, in one
/// tape entry with consecutive indices: the inputs of a gradient set up at once (the same
/// result as x[i] = var<T>(values[i]) for each i, with one tape lookup). The sizes must match.
template <class T>
void make_independent(std::span<var<T>> x, std::type_identity_t<std::span<T const>> values,
                      source_location where = source_location::current()) {
  if (x.size() != values.size())
    throw error("adx: make_independent: " + std::to_string(x.size()) + " vars for " + std::to_string(values.size()) +
                " values");
  auto& t = tape<T>::current();
  index_type const first = t.new_variables(x.size(), where);
  detail::var_runs::make(x.data(), values.data(), x.size(), first, t.epoch());
}
template <class T>
void make_independent(std::vector<var<T>>& x, std::type_identity_t<std::span<T const>> values,
                      source_location where = source_location::current()) {
  make_independent(std::span<var<T>>(x), values, where);
}

/// Writes x[i].adjoint() to out[i] for every i, checking each recording once rather than each
/// var (stale_variable_error if one has ended). The sizes must match.
template <class T>
void adjoints(std::span<var<T> const> x, std::type_identity_t<std::span<T>> out) {
  if (x.size() != out.size())
    throw error("adx: adjoints: " + std::to_string(x.size()) + " vars for an output of " + std::to_string(out.size()) +
                " elements");
  auto const& t = tape<T>::current();
  if (x.empty()) return;
  // Variables made one after another in one recording (make_independent, a block): one check
  // and a copy of their adjoint slots, instead of a check per var.
  index_type const first = x[0].index();
  epoch_type const e0 = x[0].epoch();
  if (detail::var_runs::is_run(x.data(), x.size(), first, e0)) {
    t.check_live(e0);
    t.adjoints_of_live(first, x.size(), out.data());
    return;
  }
  epoch_type live = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    t.check_live(x[i].epoch(), live);
    out[i] = t.adjoint_of_live(x[i].index());
  }
}
template <class T>
void adjoints(std::vector<var<T>> const& x, std::type_identity_t<std::span<T>> out) {
  adjoints(std::span<var<T> const>(x), out);
}

namespace detail {
template <class S>
struct scope_levels {
  static void open() {}
  static void close() noexcept {}
  /// The recording a scope opened, on its highest tape: (tape, depth).
  static std::pair<void const*, std::size_t> top() noexcept { return {nullptr, 0}; }
};
}  // namespace detail

/// RAII recording: opens a nested frame on every tape that the AD scalar S records on (for
/// var<var<double>>: tape<var<double>> and tape<double>) and drops it, in O(1), when it ends.
/// Vars recorded inside become stale after the scope. Not copyable, not movable.
///
///   { tape_scope<var<double>> scope; var<double> x = 1; ... backward(y); g = x.adjoint(); }
/// Scopes end in the reverse order of their start: one that ends while a scope opened after it
/// is still open (its destructor called by hand) throws error and leaves every recording open.
/// During stack unwinding it only leaves them open; where its end is noexcept
/// (std::optional::reset) the throw terminates the program. A scope cannot be made with new.
template <class S>
class tape_scope {
 public:
  tape_scope() : exceptions_(std::uncaught_exceptions()) {
    detail::scope_levels<S>::open();
    top_ = detail::scope_levels<S>::top();
  }
  tape_scope(tape_scope const&) = delete;
  tape_scope& operator=(tape_scope const&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;
  ~tape_scope() noexcept(false) {
    if (detail::scope_levels<S>::top() == top_) {
      detail::scope_levels<S>::close();
      return;
    }
    if (std::uncaught_exceptions() > exceptions_) return;  // unwinding: no second exception
    throw error(
        "adx: a tape_scope ended while a tape_scope opened after it was still open (or on another tape): scopes "
        "must end in the reverse order of their start");
  }

 private:
  int exceptions_;
  std::pair<void const*, std::size_t> top_{};
};

namespace detail {
template <class T>
struct scope_levels<var<T>> {
  static void open() {
    tape<T>::current().push_frame();
    scope_levels<T>::open();
  }
  static void close() noexcept {
    scope_levels<T>::close();
    tape<T>::current().pop_frame();
  }
  static std::pair<void const*, std::size_t> top() noexcept {
    auto const& t = tape<T>::current();
    return {&t, t.depth()};
  }
};
template <class T>
struct scope_levels<dual<T>> : scope_levels<T> {};
}  // namespace detail

/// Makes a given tape the thread's current tape<T> for a scope (for users who keep their own).
template <class T>
class tape_activation {
 public:
  /// Makes t the thread's current tape<T> until this object ends.
  explicit tape_activation(tape<T>& t) : prev_(t.activate()) {}
  tape_activation(tape_activation const&) = delete;
  tape_activation& operator=(tape_activation const&) = delete;
  ~tape_activation() { tape<T>::restore(prev_); }

 private:
  tape<T>* prev_;
};

/// RAII, like torch.no_grad(): while one is alive on a thread, nothing that thread computes on
/// vars or active tensors is recorded, on any tape type and at every nesting level. Results
/// are constants (index 0): no tape growth, zero gradient, and a sweep does not reach through
/// them. Independent variables made inside (var<T>(2.0)) still get their index, as a tensor
/// made with requires_grad=True under torch.no_grad() is still a leaf. Nestable; per thread.
/// Entry points that open their own recording (adx::functional, adx::grad, gradient, hessian)
/// ignore an outer no_grad, as torch.func's transforms do: they hold an enable_grad.
class no_grad {
 public:
  no_grad() noexcept { ++detail::recording_modes; }
  no_grad(no_grad const&) = delete;
  no_grad& operator=(no_grad const&) = delete;
  ~no_grad() { --detail::recording_modes; }
};

/// RAII, like torch.enable_grad(): records again inside an open no_grad, until it ends.
class enable_grad {
 public:
  enable_grad() noexcept : saved_(detail::recording_modes & detail::no_grad_mask) {
    detail::recording_modes &= ~detail::no_grad_mask;
  }
  enable_grad(enable_grad const&) = delete;
  enable_grad& operator=(enable_grad const&) = delete;
  ~enable_grad() { detail::recording_modes |= saved_; }

 private:
  std::uint64_t saved_;
};

/// False while a no_grad scope is open on this thread (torch.is_grad_enabled()).
inline bool is_grad_enabled() noexcept { return detail::grad_enabled(); }

}  // namespace adx
