// SPDX-License-Identifier: MIT
// adx: forward mode. dual<T> carries a value and one tangent; assigning an expression to it
// evaluates the value (already in the node) and the tangent in one pass over the tree, with the
// same rules as every other mode. Nesting (dual<dual<double>>, dual<var<double>>) gives higher
// orders and mixed modes.
#pragma once

#include <type_traits>
#include <utility>

#include "adx/core/compare.hpp"
#include "adx/core/expr.hpp"
#include "adx/rules/elementary.hpp"

namespace adx {

/// Forward mode: a value and one tangent (directional derivative), both of type T. Arithmetic
/// on duals propagates the tangent through every rule; nesting T (dual<dual<double>>,
/// dual<var<double>>) gives higher derivatives.
///
///     dual<double> x(2.0, 1.0);            // value 2, tangent 1
///     dual<double> y = x * x * sin(x);     // y.value() = 4 sin 2, y.tangent() = dy/dx at 2
template <class T>
class dual {
 public:
  using value_type = T;                       ///< the type of the value and of the tangent (one level down)
  using ad_type = dual;                       ///< the AD scalar type itself (what expressions over duals evaluate to)
  static constexpr std::size_t n_active = 1;  ///< an active leaf of an expression

  /// Zero, with tangent zero.
  constexpr dual() = default;
  /// A value with tangent zero. A plain number becomes T as T's own constructor makes it.
  template <class U>
  requires(level_v<U> < level_v<dual> && std::is_constructible_v<T, U const&>) constexpr dual(U const& v)
      : v_(v), t_(detail::constant<T>(0)) {}
  /// Value and tangent.
  template <class U, class V>
  requires(level_v<U> < level_v<dual> && level_v<V> < level_v<dual> && std::is_constructible_v<T, U const&> &&
           std::is_constructible_v<T, V const&>) constexpr dual(U const& v, V const& t)
      : v_(v), t_(t) {}
  /// Evaluates an expression: value and directional derivative.
  template <ad_expression E>
  requires std::is_same_v<ad_type_t<E>, dual>
  constexpr dual(E const& e) : v_(e.val()), t_(e.tangent()) {}
  /// Does not compile: a var (or other AD scalar) of the same level; nest the modes instead.
  template <ad_operand U>
  requires(level_v<U> == level_v<dual> && !std::is_same_v<ad_type_t<U>, dual>) dual(U const&) {
    static_assert(sizeof(U) == 0,
                  "adx: a dual<T> cannot be made from a var (or another scalar type) of the same nesting level; "
                  "nest the modes instead, e.g. var<dual<double>> or dual<var<double>>");
  }

  /// Assigns a number (tangent zero) or evaluates an expression into this dual.
  template <class X>
  requires std::is_constructible_v<dual, X const&>
  constexpr dual& operator=(X const& x) { return *this = dual(x); }
  /// Copies value and tangent.
  constexpr dual(dual const&) = default;
  /// Copies value and tangent.
  constexpr dual& operator=(dual const&) = default;

  /// *this = *this + x (alias-safe).
  template <class X>
  constexpr dual& operator+=(X const& x) {
    return *this = *this + x;
  }
  /// *this = *this - x.
  template <class X>
  constexpr dual& operator-=(X const& x) {
    return *this = *this - x;
  }
  /// *this = *this * x.
  template <class X>
  constexpr dual& operator*=(X const& x) {
    return *this = *this * x;
  }
  /// *this = *this / x.
  template <class X>
  constexpr dual& operator/=(X const& x) {
    return *this = *this / x;
  }

  /// The value (the expression protocol's name for it; the same as value()).
  constexpr T const& val() const noexcept { return v_; }
  /// The value, one level down.
  constexpr T const& value() const noexcept { return v_; }
  /// The tangent: the directional derivative along the seeded direction.
  constexpr T const& tangent() const noexcept { return t_; }
  /// The value, to set in place.
  constexpr T& value() noexcept { return v_; }
  /// The tangent, to set in place (to seed a direction).
  constexpr T& tangent() noexcept { return t_; }

 private:
  T v_{};
  T t_{};
};

/// What generic code asks of a dual (core/traits.hpp).
template <class T>
struct ad_traits<dual<T>> {
  using value_type = T;                         ///< one level down
  static constexpr int level = level_v<T> + 1;  ///< nesting level: 1 for dual<double>
  static constexpr bool is_reverse = false;     ///< forward mode
  /// A constant: value v, tangent zero.
  static constexpr dual<T> constant(T const& v) { return dual<T>(v, detail::constant<T>(0)); }
  /// Whether value and tangent are finite at every level.
  static constexpr bool all_finite(dual<T> const& d) {
    return detail::all_finite(d.value()) && detail::all_finite(d.tangent());
  }
};

/// The tangent of a dual (one level down).
template <class T>
constexpr T const& tangent(dual<T> const& d) noexcept {
  return d.tangent();
}

}  // namespace adx
