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

template <class T>
class dual {
 public:
  using value_type = T;
  using ad_type = dual;
  static constexpr std::size_t n_active = 1;

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
  template <ad_operand U>
  requires(level_v<U> == level_v<dual> && !std::is_same_v<ad_type_t<U>, dual>) dual(U const&) {
    static_assert(sizeof(U) == 0,
                  "adx: a dual<T> cannot be made from a var (or another scalar type) of the same nesting level; "
                  "nest the modes instead, e.g. var<dual<double>> or dual<var<double>>");
  }

  template <class X>
  requires std::is_constructible_v<dual, X const&>
  constexpr dual& operator=(X const& x) { return *this = dual(x); }
  constexpr dual(dual const&) = default;
  constexpr dual& operator=(dual const&) = default;

  template <class X>
  constexpr dual& operator+=(X const& x) {
    return *this = *this + x;
  }
  template <class X>
  constexpr dual& operator-=(X const& x) {
    return *this = *this - x;
  }
  template <class X>
  constexpr dual& operator*=(X const& x) {
    return *this = *this * x;
  }
  template <class X>
  constexpr dual& operator/=(X const& x) {
    return *this = *this / x;
  }

  constexpr T const& val() const noexcept { return v_; }
  constexpr T const& value() const noexcept { return v_; }
  constexpr T const& tangent() const noexcept { return t_; }
  constexpr T& value() noexcept { return v_; }
  constexpr T& tangent() noexcept { return t_; }

 private:
  T v_{};
  T t_{};
};

template <class T>
struct ad_traits<dual<T>> {
  using value_type = T;
  static constexpr int level = level_v<T> + 1;
  static constexpr bool is_reverse = false;
  static constexpr dual<T> constant(T const& v) { return dual<T>(v, detail::constant<T>(0)); }
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
