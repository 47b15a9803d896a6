// SPDX-License-Identifier: MIT
// adx: trigonometric and hyperbolic functions and their inverses, atan2 and hypot.
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

// ---- trigonometric and hyperbolic -----------------------------------------------------------
/// sin and cos of x in one call where the C library has it (glibc's sincos gives the same
/// values as sin and cos).
template <class X>
std::pair<X, X> sin_and_cos(X x) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  X s, c;
  if constexpr (std::is_same_v<X, float>)
    ::sincosf(x, &s, &c);
  else if constexpr (std::is_same_v<X, double>)
    ::sincos(x, &s, &c);
  else
    ::sincosl(x, &s, &c);
  return {s, c};
#else
  return {std::sin(x), std::cos(x)};
#endif
}

struct sin_rule {
  static constexpr char const* name = "sin";
  static constexpr bool lanes = true;
  template <class X>
  requires std::is_floating_point_v<X> || is_lanes<X>
  static std::pair<X, X> value_and_derivative(X x) { return sin_and_cos(x); }
  template <class X>
  static auto value(X const& x) {
    using std::sin;
    return sin(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::cos;
    return cos(x);
  }
};
struct cos_rule {
  static constexpr char const* name = "cos";
  static constexpr bool lanes = true;
  template <class X>
  requires std::is_floating_point_v<X> || is_lanes<X>
  static std::pair<X, X> value_and_derivative(X x) {
    auto const [s, c] = sin_and_cos(x);
    return {c, -s};
  }
  template <class X>
  static auto value(X const& x) {
    using std::cos;
    return cos(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::sin;
    return -sin(x);
  }
};
struct tan_rule {  // d = 1 + r^2
  static constexpr char const* name = "tan";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::tan;
    return tan(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return 1 + r * r;
  }
};
struct asin_rule {  // d = 1/sqrt(1 - x^2)
  static constexpr char const* name = "asin";
  template <class X>
  static auto value(X const& x) {
    using std::asin;
    return asin(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::sqrt;
    return 1 / sqrt((1 - x) * (1 + x));
  }
};
struct acos_rule {  // d = -1/sqrt(1 - x^2)
  static constexpr char const* name = "acos";
  template <class X>
  static auto value(X const& x) {
    using std::acos;
    return acos(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::sqrt;
    return -1 / sqrt((1 - x) * (1 + x));
  }
};
struct atan_rule {  // d = 1/(1 + x^2)
  static constexpr char const* name = "atan";
  template <class X>
  static auto value(X const& x) {
    using std::atan;
    return atan(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 1 / (1 + x * x);
  }
};
struct atan2_rule {  // atan2(y, x): d/dy = x/(x^2+y^2), d/dx = -y/(x^2+y^2); NaN at (0, 0)
  static constexpr char const* name = "atan2";
  template <class Y, class X>
  static auto value(Y const& y, X const& x) {
    using std::atan2;
    return atan2(y, x);
  }
  template <std::size_t I, class Y, class X, class T>
  static T partial(Y const& y, X const& x, T const&) {
    if constexpr (I == 0)
      return x / (x * x + y * y);
    else
      return -y / (x * x + y * y);
  }
};
struct sinh_rule {
  static constexpr char const* name = "sinh";
  template <class X>
  static auto value(X const& x) {
    using std::sinh;
    return sinh(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::cosh;
    return cosh(x);
  }
};
struct cosh_rule {
  static constexpr char const* name = "cosh";
  template <class X>
  static auto value(X const& x) {
    using std::cosh;
    return cosh(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::sinh;
    return sinh(x);
  }
};
struct tanh_rule {  // d = 1 - r^2
  static constexpr char const* name = "tanh";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::tanh;
    return tanh(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return 1 - r * r;
  }
};
struct asinh_rule {  // d = 1/hypot(x, 1) (no overflow for large x)
  static constexpr char const* name = "asinh";
  template <class X>
  static auto value(X const& x) {
    using std::asinh;
    return asinh(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::hypot;
    return 1 / hypot(x, 1);
  }
};
struct acosh_rule {  // d = 1/(sqrt(x-1) sqrt(x+1))
  static constexpr char const* name = "acosh";
  template <class X>
  static auto value(X const& x) {
    using std::acosh;
    return acosh(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::sqrt;
    return 1 / (sqrt(x - 1) * sqrt(x + 1));
  }
};
struct atanh_rule {  // d = 1/((1-x)(1+x))
  static constexpr char const* name = "atanh";
  template <class X>
  static auto value(X const& x) {
    using std::atanh;
    return atanh(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 1 / ((1 - x) * (1 + x));
  }
};
struct hypot_rule {  // d/dx = x/r, d/dy = y/r; NaN at (0, 0)
  static constexpr char const* name = "hypot";
  template <class X, class Y>
  static auto value(X const& x, Y const& y) {
    using std::hypot;
    return hypot(x, y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const& r) {
    if constexpr (I == 0)
      return x / r;
    else
      return y / r;
  }
};

}  // namespace detail

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
ADX_UNARY_ENTRY(sin, sin_rule)
ADX_UNARY_ENTRY(cos, cos_rule)
ADX_UNARY_ENTRY(tan, tan_rule)
ADX_UNARY_ENTRY(asin, asin_rule)
ADX_UNARY_ENTRY(acos, acos_rule)
ADX_UNARY_ENTRY(atan, atan_rule)
ADX_BINARY_ENTRY(atan2, atan2_rule)
ADX_UNARY_ENTRY(sinh, sinh_rule)
ADX_UNARY_ENTRY(cosh, cosh_rule)
ADX_UNARY_ENTRY(tanh, tanh_rule)
ADX_UNARY_ENTRY(asinh, asinh_rule)
ADX_UNARY_ENTRY(acosh, acosh_rule)
ADX_UNARY_ENTRY(atanh, atanh_rule)
ADX_BINARY_ENTRY(hypot, hypot_rule)
#include "adx/rules/entry_macros_end.hpp"

/// The unary and binary rules of this file (rules/elementary.hpp lists them all).
using trig_unary_rules =
    boost::mp11::mp_list<detail::sin_rule, detail::cos_rule, detail::tan_rule, detail::asin_rule, detail::acos_rule,
                         detail::atan_rule, detail::sinh_rule, detail::cosh_rule, detail::tanh_rule, detail::asinh_rule,
                         detail::acosh_rule, detail::atanh_rule>;
using trig_binary_rules = boost::mp11::mp_list<detail::atan2_rule, detail::hypot_rule>;

}  // namespace adx
