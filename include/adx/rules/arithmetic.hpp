// SPDX-License-Identifier: MIT
// adx: the arithmetic rules and operators: -x, x + y, x - y, x * y, x / y (over AD
// operands, `+` and `-` make sum nodes: core/sum.hpp).
#pragma once

#include <boost/mp11/list.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>
#include <utility>

#include "adx/rules/rule_support.hpp"

namespace adx {
namespace detail {

// ---- arithmetic -----------------------------------------------------------------------------
struct neg_rule {
  static constexpr char const* name = "neg";
  static constexpr bool lanes = true;
  template <class X>
  static constexpr auto value(X const& x) {
    return -x;
  }
  template <std::size_t, class X, class T>
  static constexpr T partial(X const&, T const&) {
    return cst<T>(-1);
  }
};
struct add_rule {
  static constexpr char const* name = "add";
  /// Over an AD operand, a term of a sum node (core/sum.hpp): added.
  static constexpr bool sum_term_negative = false;
  static constexpr bool lanes = true;
  template <class X, class Y>
  static constexpr auto value(X const& x, Y const& y) {
    return x + y;
  }
  template <std::size_t, class X, class Y, class T>
  static constexpr T partial(X const&, Y const&, T const&) {
    return cst<T>(1);
  }
};
struct sub_rule {
  static constexpr char const* name = "sub";
  /// Over an AD operand, a term of a sum node (core/sum.hpp): subtracted.
  static constexpr bool sum_term_negative = true;
  static constexpr bool lanes = true;
  template <class X, class Y>
  static constexpr auto value(X const& x, Y const& y) {
    return x - y;
  }
  template <std::size_t I, class X, class Y, class T>
  static constexpr T partial(X const&, Y const&, T const&) {
    return cst<T>(I == 0 ? 1 : -1);
  }
};
struct mul_rule {
  static constexpr char const* name = "mul";
  static constexpr bool lanes = true;
  template <class X, class Y>
  static constexpr auto value(X const& x, Y const& y) {
    return x * y;
  }
  template <std::size_t I, class X, class Y, class T>
  static constexpr T partial(X const& x, Y const& y, T const&) {
    if constexpr (I == 0)
      return to_value<T>(y);
    else
      return to_value<T>(x);
  }
};
struct div_rule {  // d/dx = 1/y, d/dy = -r/y
  static constexpr char const* name = "div";
  static constexpr bool lanes = true;
  template <class X, class Y>
  static constexpr auto value(X const& x, Y const& y) {
    return x / y;
  }
  template <std::size_t I, class X, class Y, class T>
  static constexpr T partial(X const&, Y const& y, T const& r) {
    if constexpr (I == 0)
      return 1 / y;
    else if constexpr (std::is_floating_point_v<Y> || is_lanes<Y>) {
      // Shares 1/y with the other partial (one division fewer). r * -(1/y) has the value of
      // -r * (1/y) (a negation is exact; only a NaN's sign bit may differ); for a
      // loop-invariant y, -(1/y) is hoisted whole and forward loops negate nothing per element
      // (normal_lpdf forward: 1.12 -> 1.07 of double). Where 1/y overflows (y nearer 0 than 2^-1024: a
      // subnormal, or 0) -r/y can still be finite (x = 1e-320, y = 1e-310: -1e300, not -inf).
      auto const q = 1 / y;
      if (any_infinite(q)) [[unlikely]]
        return -r / y;
      return r * -q;
    } else {
      return -r / y;
    }
  }
};

}  // namespace detail

template <ad_operand X>
constexpr auto operator-(X&& x) {
  return detail::make_expr<detail::neg_rule>(std::forward<X>(x));
}
template <ad_operand X>
constexpr auto operator+(X&& x) {
  return ad_type_t<X>(std::forward<X>(x));
}
template <class X, class Y>
requires rule_operands2<X, Y>
constexpr auto operator+(X&& x, Y&& y) {
  return detail::make_expr<detail::add_rule>(std::forward<X>(x), std::forward<Y>(y));
}
template <class X, class Y>
requires rule_operands2<X, Y>
constexpr auto operator-(X&& x, Y&& y) {
  return detail::make_expr<detail::sub_rule>(std::forward<X>(x), std::forward<Y>(y));
}
template <class X, class Y>
requires rule_operands2<X, Y>
constexpr auto operator*(X&& x, Y&& y) {
  return detail::make_expr<detail::mul_rule>(std::forward<X>(x), std::forward<Y>(y));
}
template <class X, class Y>
requires rule_operands2<X, Y>
constexpr auto operator/(X&& x, Y&& y) {
  return detail::make_expr<detail::div_rule>(std::forward<X>(x), std::forward<Y>(y));
}

/// The unary and binary rules of this file (rules/elementary.hpp lists them all).
using arithmetic_unary_rules = boost::mp11::mp_list<detail::neg_rule>;
using arithmetic_binary_rules =
    boost::mp11::mp_list<detail::add_rule, detail::sub_rule, detail::mul_rule, detail::div_rule>;

}  // namespace adx
