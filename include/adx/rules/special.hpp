// SPDX-License-Identifier: MIT
// adx: erf, erfc and erfinv, and xlogy and xlog1py (torch.special's; the gamma family is in
// gamma.hpp). erfinv, xlogy and xlog1py give PyTorch 1.13's values and partials, edges
// included (docs/derivative_rules.md).
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

// ---- special functions ----------------------------------------------------------------------
struct erf_rule {  // d = 2/sqrt(pi) exp(-x^2)
  static constexpr char const* name = "erf";
  template <class X>
  static auto value(X const& x) {
    using std::erf;
    return erf(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    return std::numbers::inv_sqrtpi_v<innermost_t<T>> * 2 * exp(-(x * x));
  }
};
struct erfc_rule {  // d = -2/sqrt(pi) exp(-x^2)
  static constexpr char const* name = "erfc";
  template <class X>
  static auto value(X const& x) {
    using std::erfc;
    return erfc(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    return std::numbers::inv_sqrtpi_v<innermost_t<T>> * -2 * exp(-(x * x));
  }
};

// r = erfinv(x), the y with erf(y) = x: +-inf at +-1, NaN beyond; d = sqrt(pi)/2 e^(r^2)
struct erfinv_rule : value_by_level<erfinv_rule> {
  static constexpr char const* name = "erfinv";
  /// torch's calc_erfinv, so that the values agree to the bit: a first guess by the rational
  /// approximation of MATLAB 2.0's erfinv.m (G. Pavlis, 1996), in y^2 for |y| <= 0.7 and in
  /// sqrt(-log((1 - |y|)/2)) beyond, then two Newton steps on erf(x) = y. Its polynomials are
  /// evaluated with fused multiply-adds, as torch's kernel (built for AVX2) evaluates them: with
  /// separate roundings the first guess, and after the Newton steps the value, differ by 1 ulp
  /// at some points beyond 0.7.
  template <class R>
  static R plain(R y) {
    using std::copysign;
    using std::erf;
    using std::exp;
    using std::fma;
    using std::log;
    using std::sqrt;
    R const a = std::abs(y);
    if (a > 1) return std::numeric_limits<R>::quiet_NaN();
    if (a == 1) return copysign(std::numeric_limits<R>::infinity(), y);
    R x;
    if (a <= R(0.7)) {
      R const z = y * y;
      R const num = fma(fma(fma(R(-0.140543331), z, R(0.914624893)), z, R(-1.645349621)), z, R(0.886226899));
      R const den =
          fma(fma(fma(fma(R(0.012229801), z, R(-0.329097515)), z, R(1.442710462)), z, R(-2.118377725)), z, R(1));
      x = y * num / den;
    } else {  // NaN too
      R const z = sqrt(-log((1 - a) / 2));
      R const num = fma(fma(fma(R(1.641345311), z, R(3.429567803)), z, R(-1.624906493)), z, R(-1.970840454));
      R const den = fma(fma(R(1.6370678), z, R(3.5438892)), z, R(1));
      x = copysign(num, y) / den;
    }
    R const two_over_sqrt_pi = R(2) / R(std::sqrt(std::numbers::pi));  // erf' = this e^(-x^2)
    x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
    x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
    return x;
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    using std::exp;
    using R = innermost_t<T>;
    return R(0.5 * std::sqrt(std::numbers::pi)) * exp(r * r);
  }
};

// r = x log y, 0 where x == 0 unless y is NaN; d/dx = log y (0 where x == 0 and y <= 0),
// d/dy = x/y
struct xlogy_rule : value_by_level<xlogy_rule> {
  static constexpr char const* name = "xlogy";
  template <class R>
  static R plain(R x, R y) {
    using std::log;
    if (y != y) return y;
    if (x == 0) return R(0);
    return x * log(y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    using std::log;
    if constexpr (I == 0) {
      if (primal_of(x) == 0 && primal_of(y) <= 0) return cst<T>(0);  // torch's mask
      return log(y);
    } else {
      return x / y;  // 0/0 = NaN at x == y == 0, as torch
    }
  }
};

// r = x log1p(y), 0 where x == 0 unless y is NaN; d/dx = log1p(y) (0 where x == 0 and
// y <= -1), d/dy = x/(1 + y)
struct xlog1py_rule : value_by_level<xlog1py_rule> {
  static constexpr char const* name = "xlog1py";
  template <class R>
  static R plain(R x, R y) {
    using std::log1p;
    if (y != y) return y;
    if (x == 0) return R(0);
    return x * log1p(y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    using std::log1p;
    if constexpr (I == 0) {
      if (primal_of(x) == 0 && primal_of(y) <= -1) return cst<T>(0);  // torch's mask
      return log1p(y);
    } else {
      return x / (y + 1);
    }
  }
};

}  // namespace detail

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
ADX_UNARY_ENTRY(erf, erf_rule)
ADX_UNARY_ENTRY(erfc, erfc_rule)
ADX_OWN_UNARY_ENTRY(erfinv, erfinv_rule)
ADX_OWN_BINARY_ENTRY(xlogy, xlogy_rule)
ADX_OWN_BINARY_ENTRY(xlog1py, xlog1py_rule)
#include "adx/rules/entry_macros_end.hpp"

/// The unary and binary rules of this file (rules/elementary.hpp lists them all).
using special_unary_rules = boost::mp11::mp_list<detail::erf_rule, detail::erfc_rule, detail::erfinv_rule>;
using special_binary_rules = boost::mp11::mp_list<detail::xlogy_rule, detail::xlog1py_rule>;

}  // namespace adx
