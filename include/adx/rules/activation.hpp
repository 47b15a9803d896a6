// SPDX-License-Identifier: MIT
// adx: the activation functions of neural networks, sigmoid, logsigmoid, softplus, silu, mish,
// gelu, relu6, selu, and logit and sinc: rules and entry points, as in the other rule headers
// (rule_support.hpp says what a rule is). Each value and partial is the formula PyTorch 1.13's
// CPU kernels use (torch.sigmoid, F.logsigmoid, F.softplus with beta 1 and threshold 20, F.silu,
// F.mish, F.gelu without approximation, F.relu6, F.selu, torch.logit without eps, torch.sinc), so that values
// and derivatives agree with torch's to the last bit or two, edges included
// (docs/derivative_rules.md).
#pragma once

#include <boost/mp11/list.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>
#include <utility>

#include "adx/core/expr.hpp"
#include "adx/rules/elementary.hpp"

namespace adx {
namespace detail {

/// sigmoid(x) for a partial: 1/(1 + e^-x) as torch writes it, but e^x/(1 + e^x) below 0, where
/// e^-x overflows (x < -709) and a nested level would differentiate 1/inf into NaN.
template <class T, class X>
T stable_sigmoid(X const& x) {
  using std::exp;
  if (primal_of(x) < 0) {
    T const z = exp(x);
    return z / (1 + z);
  }
  return 1 / (1 + exp(-x));
}

/// The value of Rule, for every rule of this file: on a plain number, Rule::plain of it as a
/// floating-point number (an int as a double); on an AD number (a nested level, as in
/// var<var<double>>), Rule itself one level down, so that the level below differentiates it by
/// Rule's partial. The formula differentiated by the chain rule would disagree at the edges:
/// sigmoid's 1/(1 + e^-x) at x = -1e300 has the derivative -(1/inf^2) (-inf) = NaN where the
/// partial gives 0.
template <class Rule>
struct value_by_level {
  template <class X>
  static auto value(X const& x) {
    if constexpr (ad_operand<X>)
      return make_expr<Rule>(x);
    else if constexpr (std::is_floating_point_v<X>)
      return Rule::plain(x);
    else
      return Rule::plain(static_cast<double>(x));
  }
};

// r = 1/(1 + e^-x); d = r (1 - r)
struct sigmoid_rule : value_by_level<sigmoid_rule> {
  static constexpr char const* name = "sigmoid";
  template <class R>
  static R plain(R v) {
    using std::exp;
    return 1 / (1 + exp(-v));  // e^-x overflows to inf for x < -709: r = 0, as torch gives
  }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const& r) {
    return (1 - r) * r;
  }
};

// r = min(x, 0) - log1p(e^-|x|); d = 1/(1 + e^x)
struct logsigmoid_rule : value_by_level<logsigmoid_rule> {
  static constexpr char const* name = "logsigmoid";
  template <class R>
  static R plain(R v) {
    using std::exp;
    using std::log1p;
    return v < 0 ? v - log1p(exp(v)) : -log1p(exp(-v));
  }
  /// torch's backward: 1 - z/(1 + z) below 0 and z/(1 + z) above, z = e^-|x|.
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    if (primal_of(x) < 0) {
      T const z = exp(x);
      return 1 - z / (1 + z);
    }
    T const z = exp(-x);
    return z / (1 + z);
  }
};

// r = log1p(e^x), x itself above 20; d = e^x/(e^x + 1), 1 above 20
struct softplus_rule : value_by_level<softplus_rule> {
  static constexpr char const* name = "softplus";
  static constexpr double threshold = 20;  ///< torch's default (beta 1)
  template <class R>
  static R plain(R v) {
    using std::exp;
    using std::log1p;
    return v > threshold ? v : log1p(exp(v));
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    if (primal_of(x) > threshold) return cst<T>(1);
    T const z = exp(x);
    return z / (z + 1);
  }
};

// r = x/(1 + e^-x); d = s (1 + x (1 - s)), s = 1/(1 + e^-x)
struct silu_rule : value_by_level<silu_rule> {
  static constexpr char const* name = "silu";
  template <class R>
  static R plain(R v) {
    using std::exp;
    return v / (1 + exp(-v));
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    T const s = stable_sigmoid<T>(x);
    return s * (1 + x * (1 - s));
  }
};

// r = x tanh(log1p(e^x)); d = t + x s (1 - t^2), t = tanh(log1p(e^x)), s = sigmoid(x)
struct mish_rule : value_by_level<mish_rule> {
  static constexpr char const* name = "mish";
  template <class R>
  static R plain(R v) {
    using std::exp;
    using std::log1p;
    using std::tanh;
    return v * tanh(log1p(exp(v)));
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    using std::log1p;
    using std::tanh;
    T const s = stable_sigmoid<T>(x);
    T const t = tanh(log1p(exp(x)));
    return t + x * s * (1 - t * t);
  }
};

// r = x Phi(x) = x (1 + erf(x/sqrt 2))/2; d = Phi(x) + x phi(x)
struct gelu_rule : value_by_level<gelu_rule> {
  static constexpr char const* name = "gelu";
  template <class R>
  static constexpr R sqrt1_2 = std::numbers::sqrt2_v<R> / 2;  ///< 1/sqrt(2) (M_SQRT1_2)
  template <class R>
  static R plain(R v) {
    using std::erf;
    return v * R(0.5) * (1 + erf(v * sqrt1_2<R>));
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::erf;
    using std::exp;
    using R = innermost_t<T>;
    R const alpha = 2 * std::numbers::inv_sqrtpi_v<R> * sqrt1_2<R> * R(0.5);  // 1/sqrt(2 pi), as torch's kAlpha
    T const cdf = R(0.5) * (1 + erf(x * sqrt1_2<R>));
    T const pdf = alpha * exp(R(-0.5) * x * x);
    return cdf + x * pdf;
  }
};

// r = log(x/(1 - x)); d = 1/(x (1 - x)), NaN outside [0, 1]
struct logit_rule : value_by_level<logit_rule> {
  static constexpr char const* name = "logit";
  template <class R>
  static R plain(R v) {
    using std::log;
    return log(v / (1 - v));
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    auto const p = primal_of(x);
    T const d = 1 / (x * (1 - x));
    if (p < 0 || p > 1) return d * cst<T>(std::numeric_limits<innermost_t<T>>::quiet_NaN());  // NaN at every order
    return d;
  }
};

// r = sin(pi x)/(pi x), 1 at 0; d = (pi x cos(pi x) - sin(pi x))/(pi x^2), 0 at 0
struct sinc_rule : value_by_level<sinc_rule> {
  static constexpr char const* name = "sinc";
  template <class R>
  static R plain(R v) {
    using std::sin;
    if (v == 0) return R(1);
    R const px = std::numbers::pi_v<R> * v;
    return sin(px) / px;
  }
  /// torch's formula, except for |pi x| < 0.1 (where it cancels: at x = 1e-8 it is 35 % off,
  /// and NaN once x^2 underflows) the series pi (-u/3 + u^3/30 - u^5/840 + u^7/45360 -
  /// u^9/3991680), u = pi x, exact there to a few units in the last place, and 0 at 0 as torch
  /// gives; its own derivative is then right too (sinc''(0) = -pi^2/3).
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::cos;
    using std::sin;
    using R = innermost_t<T>;
    T const u = std::numbers::pi_v<R> * x;
    if (std::abs(primal_of(u)) < R(0.1)) {
      T const u2 = u * u;
      return std::numbers::pi_v<R> * u *
             (R(-1) / 3 + u2 * (R(1) / 30 + u2 * (R(-1) / 840 + u2 * (R(1) / 45360 + u2 * (R(-1) / 3991680)))));
    }
    return (u * cos(u) - sin(u)) / (std::numbers::pi_v<R> * x * x);
  }
};

// r = min(max(x, 0), 6); d = 1 inside (0, 6), 0 at and beyond 0 and 6; NaN: r NaN, d 1
struct relu6_rule : value_by_level<relu6_rule> {
  static constexpr char const* name = "relu6";
  template <class X>
  static bool inside(X const& x) {  // torch's hardtanh_backward: 0 where x <= 0 or x >= 6
    auto const v = primal_of(x);
    return !(v <= 0 || v >= 6);
  }
  template <class R>
  static R plain(R v) {
    return v < 0 ? R(0) : v > 6 ? R(6) : v;  // as torch: -0.0 and NaN pass through
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return cst<T>(inside(x) ? 1 : 0);
  }
};

// r = s x above 0, s a (e^x - 1) at and below 0; d = s, or s a e^x
struct selu_rule : value_by_level<selu_rule> {
  static constexpr char const* name = "selu";
  static constexpr double alpha = 1.6732632423543772848170429916717;  ///< torch's selu constants
  static constexpr double scale = 1.0507009873554804934193349852946;
  template <class R>
  static R plain(R v) {
    using std::exp;
    R const negcoef = R(alpha) * R(scale);
    return v <= 0 ? (exp(v) - 1) * negcoef : v * R(scale);  // torch's elu kernel
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::exp;
    using R = innermost_t<T>;
    if (primal_of(x) <= 0) return R(alpha) * R(scale) * exp(x);  // NaN: not <= 0, so scale, as torch
    return cst<T>(R(scale));
  }
};

}  // namespace detail

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
ADX_OWN_UNARY_ENTRY(sigmoid, sigmoid_rule)
ADX_OWN_UNARY_ENTRY(logsigmoid, logsigmoid_rule)
ADX_OWN_UNARY_ENTRY(softplus, softplus_rule)
ADX_OWN_UNARY_ENTRY(silu, silu_rule)
ADX_OWN_UNARY_ENTRY(mish, mish_rule)
ADX_OWN_UNARY_ENTRY(gelu, gelu_rule)
ADX_OWN_UNARY_ENTRY(logit, logit_rule)
ADX_OWN_UNARY_ENTRY(sinc, sinc_rule)
ADX_OWN_UNARY_ENTRY(relu6, relu6_rule)
ADX_OWN_UNARY_ENTRY(selu, selu_rule)
#include "adx/rules/entry_macros_end.hpp"

/// The unary rules of this file (adx/rules.hpp lists them all).
using activation_unary_rules =
    boost::mp11::mp_list<detail::sigmoid_rule, detail::logsigmoid_rule, detail::softplus_rule, detail::silu_rule,
                         detail::mish_rule, detail::gelu_rule, detail::logit_rule, detail::sinc_rule,
                         detail::relu6_rule, detail::selu_rule>;
static_assert(detail::rules_conform<1>(activation_unary_rules{}));

}  // namespace adx
