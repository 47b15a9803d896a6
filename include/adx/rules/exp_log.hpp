// SPDX-License-Identifier: MIT
// adx: exponentials, logarithms, roots, square and pow.
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

// ---- exponentials and logarithms ------------------------------------------------------------
struct exp_rule {  // d = r
  static constexpr char const* name = "exp";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::exp;
    return exp(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return r;
  }
};
struct exp2_rule {  // d = r ln 2
  static constexpr char const* name = "exp2";
  template <class X>
  static auto value(X const& x) {
    using std::exp2;
    return exp2(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return r * std::numbers::ln2_v<innermost_t<T>>;
  }
};
struct expm1_rule {  // d = exp(x) (not r + 1, which loses every digit for x << 0)
  static constexpr char const* name = "expm1";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::expm1;
    return expm1(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    return exp(x);
  }
};
struct log_rule {  // d = 1/x
  static constexpr char const* name = "log";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::log;
    return log(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 1 / x;
  }
};
struct log2_rule {  // d = 1/(x ln 2)
  static constexpr char const* name = "log2";
  template <class X>
  static auto value(X const& x) {
    using std::log2;
    return log2(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 1 / (x * std::numbers::ln2_v<innermost_t<T>>);
  }
};
struct log10_rule {  // d = 1/(x ln 10)
  static constexpr char const* name = "log10";
  template <class X>
  static auto value(X const& x) {
    using std::log10;
    return log10(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 1 / (x * std::numbers::ln10_v<innermost_t<T>>);
  }
};
struct log1p_rule {  // d = 1/(1+x)
  static constexpr char const* name = "log1p";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::log1p;
    return log1p(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 1 / (1 + x);
  }
};
struct sqrt_rule {  // d = 1/(2r); sqrt'(0) = +inf
  static constexpr char const* name = "sqrt";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    using std::sqrt;
    return sqrt(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return 0.5 / r;
  }
};
struct cbrt_rule {  // d = 1/(3 r^2)
  static constexpr char const* name = "cbrt";
  template <class X>
  static auto value(X const& x) {
    using std::cbrt;
    return cbrt(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return 1 / (3 * (r * r));
  }
};
struct square_rule {  // d = 2 x (square(x) = x * x: one evaluation of x, no call to pow)
  static constexpr char const* name = "square";
  static constexpr bool lanes = true;
  template <class X>
  static auto value(X const& x) {
    if constexpr (std::is_integral_v<X>) {  // square(50000) is a double: no int overflow
      double const d = static_cast<double>(x);
      return d * d;
    } else {
      return x * x;
    }
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return 2 * x;
  }
};
struct pow_rule {  // d/dx = y x^(y-1) (0 where y == 0); d/dy = r log x (0 where x == 0, y >= 0)
  static constexpr char const* name = "pow";
  template <class X, class Y>
  static auto value(X const& x, Y const& y) {
    using std::pow;
    return pow(x, y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const& r) {
    using std::log;
    using std::pow;
    if constexpr (I == 0) {
      if (primal_of(y) == 0) return cst<T>(0);
      return y * pow(x, y - 1);
    } else {
      if (primal_of(x) == 0 && primal_of(y) >= 0) return cst<T>(0);
      return r * log(x);
    }
  }
};

}  // namespace detail

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
ADX_UNARY_ENTRY(exp, exp_rule)
ADX_UNARY_ENTRY(exp2, exp2_rule)
ADX_UNARY_ENTRY(expm1, expm1_rule)
ADX_UNARY_ENTRY(log, log_rule)
ADX_UNARY_ENTRY(log2, log2_rule)
ADX_UNARY_ENTRY(log10, log10_rule)
ADX_UNARY_ENTRY(log1p, log1p_rule)
ADX_UNARY_ENTRY(sqrt, sqrt_rule)
ADX_UNARY_ENTRY(cbrt, cbrt_rule)
ADX_OWN_UNARY_ENTRY(square, square_rule)
ADX_BINARY_ENTRY(pow, pow_rule)
#include "adx/rules/entry_macros_end.hpp"

/// The unary and binary rules of this file (rules/elementary.hpp lists them all).
using exp_log_unary_rules =
    boost::mp11::mp_list<detail::exp_rule, detail::exp2_rule, detail::expm1_rule, detail::log_rule, detail::log2_rule,
                         detail::log10_rule, detail::log1p_rule, detail::sqrt_rule, detail::cbrt_rule,
                         detail::square_rule>;
using exp_log_binary_rules = boost::mp11::mp_list<detail::pow_rule>;

}  // namespace adx
