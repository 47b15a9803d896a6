// SPDX-License-Identifier: MIT
// adx: the sum node. `a + b - c + d` is one node of four terms, not three binary nodes nested
// three deep: adding a term to a sum makes a sum of one more term. Its push hands every term the
// statement's multiplier (or its negation) directly and its tangent adds the terms' tangents in
// order, so a sum of any length is a shallow tree. A nested one would be as deep as the sum is
// long, and the compiler would instantiate, inline and optimise one push per level, each after
// the levels below it were inlined into it: a cost that grows with the square of the length.
//
// Over a forward scalar (dual<T>) a sum is a forward_sum, its value and tangent so far: a term
// is not needed again once its tangent is known.
//
// The numbers are those of the nested binary nodes: the value is ((a + b) - c) + d, evaluated
// left to right as each term is added; the tangent adds the terms' tangents in the same order;
// the partials handed to the terms are the multiplier and its negation (the binary nodes'
// m * 1 and m * -1).
#pragma once

#include <cstddef>
#include <utility>

#include "adx/config.hpp"
#include "adx/core/traits.hpp"
#include "adx/core/value.hpp"

namespace adx::detail {

/// Term I of a sum (subtracted if Neg), after Before active leaves of the terms before it.
template <std::size_t I, class T, bool Neg, std::size_t Before>
struct sum_term {
  T item;
};

/// No terms: the start of every sum's list.
struct no_terms {
  static constexpr std::size_t size = 0;
  static constexpr std::size_t n_active = 0;
  static constexpr bool any_negative = false;
};

/// The terms of a sum: those of Prev, then T. An aggregate whose bases are Prev and the term
/// slot, so extending a sum copies its terms as one object and term I is reached by one cast.
template <class Prev, class T, bool Neg>
struct sum_terms : Prev, sum_term<Prev::size, T, Neg, Prev::n_active> {
  static constexpr std::size_t size = Prev::size + 1;
  static constexpr std::size_t n_active = Prev::n_active + T::n_active;
  /// Whether an active term is subtracted (the push then needs the negated multiplier).
  static constexpr bool any_negative = Prev::any_negative || (Neg && T::n_active > 0);
  /// The first active term (meaningful when n_active > 0).
  static constexpr std::size_t first_active = [] {
    if constexpr (Prev::n_active > 0)
      return Prev::first_active;
    else
      return Prev::size;
  }();
};

/// A long sum's terms push out of line, one function per term type and writer (positions
/// are 0 for the tape's writer, so equal terms share it): the statement's function then holds a
/// call per term instead of every term's code, which is what the compiler spends its time on.
/// A short sum's terms are inlined.
inline constexpr std::size_t inline_sum_leaves = 8;
template <std::size_t Pos, class T, class W, class M>
ADX_NOINLINE void push_outlined(T const& t, W& w, M const& m) {
  t.template push<Pos>(w, m);
}
template <std::size_t Pos, class T, class W>
ADX_NOINLINE void push_outlined(T const& t, W& w) {
  t.template push<Pos>(w);
}

/// Hands term t the multiplier m (or neg, its negation, if subtracted).
template <bool Outline, std::size_t Pos, std::size_t I, class T, bool Neg, std::size_t Before, class W, class M>
ADX_ALWAYS_INLINE void push_term(sum_term<I, T, Neg, Before> const& t, W& w, M const& m, M const& neg) {
  constexpr std::size_t at = leaf_position<W>(Pos + Before);
  if constexpr (T::n_active == 0)
    return;
  else if constexpr (Outline)
    push_outlined<at>(t.item, w, Neg ? neg : m);
  else
    t.item.template push<at>(w, Neg ? neg : m);
}
/// At the root of a statement: an added expression pushes without a multiplier, an added leaf
/// takes one and a subtracted term minus one.
template <bool Outline, std::size_t Pos, std::size_t I, class T, bool Neg, std::size_t Before, class W, class M>
ADX_ALWAYS_INLINE void push_root_term(sum_term<I, T, Neg, Before> const& t, W& w, M const& one, M const& minus_one) {
  constexpr std::size_t at = leaf_position<W>(Pos + Before);
  if constexpr (T::n_active == 0)
    return;
  else if constexpr (!ad_expression<T>)
    t.item.template push<at>(w, Neg ? minus_one : one);  // a leaf: one call to the writer
  else if constexpr (Outline && Neg)
    push_outlined<at>(t.item, w, minus_one);
  else if constexpr (Outline)
    push_outlined<at>(t.item, w);
  else if constexpr (Neg)
    t.item.template push<at>(w, minus_one);
  else
    t.item.template push<at>(w);
}
/// Adds term t's tangent to r (F: the first active term, which starts r).
template <std::size_t F, std::size_t I, class T, bool Neg, std::size_t Before, class V>
ADX_ALWAYS_INLINE constexpr void add_tangent(sum_term<I, T, Neg, Before> const& t, V& r) {
  if constexpr (T::n_active == 0)
    return;
  else if constexpr (I == F)
    r = Neg ? to_value<V>(-t.item.tangent()) : to_value<V>(t.item.tangent());
  else if constexpr (Neg)
    r = to_value<V>(r - t.item.tangent());
  else
    r = to_value<V>(r + t.item.tangent());
}

/// The last term of a terms list: its type, sign and slot, and the list before it.
template <class Terms>
struct last_term;
template <class Prev, class T, bool Neg>
struct last_term<sum_terms<Prev, T, Neg>> {
  using prev = Prev;
  using slot = sum_term<Prev::size, T, Neg, Prev::n_active>;
  static constexpr bool negative = Neg;
};

struct sum_pair_t {
  explicit sum_pair_t() = default;
};
struct sum_extend_t {
  explicit sum_extend_t() = default;
};

/// A sum over the AD scalar S of the terms Terms (a sum_terms list): core/expr.hpp's make_expr
/// makes one for `+` and `-` with an AD operand.
template <class S, class Terms>
class sum_expr : public expr_tag {
  using last = last_term<Terms>;
  using prev_terms = typename last::prev;

 public:
  using ad_type = S;
  using value_type = value_type_t<S>;
  using terms_type = Terms;
  static constexpr std::size_t n_active = Terms::n_active;
  static_assert(n_active > 0, "adx: internal: a sum node needs an active term");

  /// a + b, or a - b (Terms says which).
  template <class A, class B>
  constexpr sum_expr(sum_pair_t, A&& a, B&& b) : terms_{{{}, {std::forward<A>(a)}}, {std::forward<B>(b)}} {
    using first = typename last_term<prev_terms>::slot;
    val_ = combine(static_cast<first const&>(terms_).item.val());
  }
  /// The sum of terms `prev` (whose value is prev_value) and one more term.
  template <class B>
  constexpr sum_expr(sum_extend_t, prev_terms const& prev, value_type const& prev_value, B&& b)
      : terms_{prev, {std::forward<B>(b)}} {
    val_ = combine(prev_value);
  }

  constexpr value_type const& val() const noexcept { return val_; }
  constexpr Terms const& terms() const noexcept { return terms_; }

  /// Reverse: hands every active term the multiplier m (negated for a subtracted one).
  template <std::size_t Pos = 0, class W>
  ADX_ALWAYS_INLINE void push(W& w, value_type const& m) const {
    push_all<Pos>(w, m, std::make_index_sequence<Terms::size>{});
  }
  /// Reverse, at the root of a statement (multiplier one), or as a term of a sum at the root.
  template <std::size_t Pos = 0, class W>
  ADX_ALWAYS_INLINE void push(W& w) const {
    root_all<Pos>(w, std::make_index_sequence<Terms::size>{});
  }

  /// Forward: the terms' tangents added in order.
  ADX_ALWAYS_INLINE constexpr value_type tangent() const {
    return tangent_all(std::make_index_sequence<Terms::size>{});
  }

 private:
  /// The value of the terms before the last, with the last one added (or subtracted).
  template <class P>
  constexpr value_type combine(P const& prev) const {
    auto const& v = static_cast<typename last::slot const&>(terms_).item.val();
    if constexpr (last::negative)
      return to_value<value_type>(prev - v);
    else
      return to_value<value_type>(prev + v);
  }

  template <std::size_t Pos, class W, std::size_t... I>
  ADX_ALWAYS_INLINE void push_all(W& w, value_type const& m, std::index_sequence<I...>) const {
    if constexpr (Terms::any_negative) {
      value_type const neg = to_value<value_type>(-m);
      (push_term<outline, Pos, I>(terms_, w, m, neg), ...);
    } else {
      (push_term<outline, Pos, I>(terms_, w, m, m), ...);
    }
  }
  template <std::size_t Pos, class W, std::size_t... I>
  ADX_ALWAYS_INLINE void root_all(W& w, std::index_sequence<I...>) const {
    value_type const one = constant<value_type>(1);
    value_type const minus_one = constant<value_type>(-1);
    (push_root_term<outline, Pos, I>(terms_, w, one, minus_one), ...);
  }
  template <std::size_t... I>
  ADX_ALWAYS_INLINE constexpr value_type tangent_all(std::index_sequence<I...>) const {
    value_type r{};
    (add_tangent<Terms::first_active, I>(terms_, r), ...);
    return r;
  }

  static constexpr bool outline = n_active > inline_sum_leaves;

  Terms terms_;
  value_type val_{};
};

/// Tag of forward_sum's constructor.
struct forward_sum_t {
  explicit forward_sum_t() = default;
};

/// A sum over a forward-mode scalar S (dual<T>): its value and its tangent, added up as the terms
/// come, in the order and with the operations of sum_expr (and so of the nested binary nodes).
/// A forward sum needs nothing of a term once the term's tangent is known, so however long it is
/// it holds two values and adding a term copies no others: a sum_expr is copied into the next
/// one with each term, which g++ does in memory, a cost that grows with the square of the
/// length (reverse mode must keep its terms for the push).
template <class S>
class forward_sum : public expr_tag {
 public:
  using ad_type = S;
  using value_type = value_type_t<S>;
  static constexpr std::size_t n_active = 1;  ///< one active operand, the sum itself

  /// a + b, or a - b (Neg): a and b are operands as core/expr.hpp's wrap makes them (constants
  /// have no tangent), a may be a forward_sum.
  template <bool Neg, class A, class B>
  ADX_ALWAYS_INLINE constexpr forward_sum(forward_sum_t, std::bool_constant<Neg>, A const& a, B const& b) {
    if constexpr (Neg)
      val_ = to_value<value_type>(a.val() - b.val());
    else
      val_ = to_value<value_type>(a.val() + b.val());
    if constexpr (A::n_active == 0)
      tan_ = Neg ? to_value<value_type>(-b.tangent()) : to_value<value_type>(b.tangent());
    else if constexpr (B::n_active == 0)
      tan_ = to_value<value_type>(a.tangent());
    else if constexpr (Neg)
      tan_ = to_value<value_type>(a.tangent() - b.tangent());
    else
      tan_ = to_value<value_type>(a.tangent() + b.tangent());
  }

  constexpr value_type const& val() const noexcept { return val_; }
  /// Forward: the terms' tangents added in order.
  constexpr value_type tangent() const { return tan_; }  // by value, as every node's tangent

 private:
  value_type val_{}, tan_{};
};

}  // namespace adx::detail
