// SPDX-License-Identifier: MIT
// adx: values at every nesting level: constants, conversions, the value one level down and at
// the bottom, and a rule's value as a given type. What the expression nodes (core/expr.hpp,
// core/sum.hpp) are built from.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "adx/core/traits.hpp"

namespace adx::detail {

/// A constant operand (a plain number, or a value one nesting level down). Never active.
template <class C>
struct const_leaf {
  using ad_type = void;
  static constexpr std::size_t n_active = 0;
  C value;
  constexpr C const& val() const noexcept { return value; }
};

template <class X>
struct is_const_leaf : std::false_type {};
template <class C>
struct is_const_leaf<const_leaf<C>> : std::true_type {};

/// The position, among a statement's active leaves, that a node hands its child for writer W:
/// `pos` for a writer that places operands by position (`static constexpr bool
/// takes_positions = true`, the tensor nodes' writers), 0 for every other one, so that
/// identical subtrees share one push however far into the statement they are.
template <class W>
constexpr std::size_t leaf_position(std::size_t pos) noexcept {
  if constexpr (requires { W::takes_positions; })
    return W::takes_positions ? pos : 0;
  else
    return 0;
}

// ---- values and constants at any level ------------------------------------------------------

/// A constant of type T holding the number c (inactive at every level).
template <class T, class C>
constexpr T constant(C const& c) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<T>(c);
  else if constexpr (is_lanes<T>)
    return T(static_cast<double>(c));
  else
    return ad_traits<T>::constant(constant<value_type_t<T>>(c));
}

/// Turns x (a number, a T, a lower-level AD value or an expression evaluating to T) into a T.
/// Expressions at T's own level are evaluated (and, for var, recorded as a statement).
template <class T, class X>
constexpr T to_value(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (std::is_same_v<D, T>)
    return std::forward<X>(x);
  else if constexpr (std::is_arithmetic_v<D>)
    return constant<T>(x);
  else if constexpr (level_v<D> < level_v<T>)
    return ad_traits<T>::constant(to_value<value_type_t<T>>(std::forward<X>(x)));
  else
    return T(std::forward<X>(x));
}

/// The value one level down of an operand; a plain number is its own value.
template <class X>
constexpr decltype(auto) value_of(X const& x) {
  if constexpr (ad_operand<X>)
    return x.val();
  else
    return (x);
}

/// The plain number at the bottom of any nesting.
template <class X>
constexpr innermost_t<X> primal_of(X const& x) {
  if constexpr (ad_operand<X>)
    return primal_of(x.val());
  else
    return x;
}

/// True if every component of x at every level is finite. Components recorded on another tape
/// (the value of a var) are that tape's business; dual tangents are checked here.
template <class X>
constexpr bool all_finite(X const& x) {
  if constexpr (std::is_arithmetic_v<X>)
    return std::isfinite(x);
  else
    return ad_traits<X>::all_finite(x);
}

/// Evaluates a rule's value as a T. Rules whose branches return different types (max, clamp,
/// where) define value_as<T>; the others define value.
template <class Rule, class T, class... A>
constexpr T evaluate_rule(A const&... a) {
  if constexpr (requires { Rule::template value_as<T>(a...); })
    return Rule::template value_as<T>(a...);
  else
    return to_value<T>(Rule::value(a...));
}

}  // namespace adx::detail
