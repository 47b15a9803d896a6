// SPDX-License-Identifier: MIT
// adx: the activation functions of neural networks, sigmoid, logsigmoid, softplus, silu, mish,
// gelu, gelu_tanh, relu6, selu, leaky_relu, elu, hardtanh, and logit and sinc: rules and entry
// points, as in the other rule headers (rule_support.hpp says what a rule is). Each value and
// partial is the formula PyTorch 1.13's CPU kernels use (torch.sigmoid, F.logsigmoid,
// F.softplus, F.silu, F.mish, F.gelu, F.relu6, F.selu, F.leaky_relu, F.elu, F.hardtanh,
// torch.logit without eps, torch.sinc), so that values and derivatives agree with torch's to the
// last bit or two, edges included (docs/derivative_rules.md).
//
// torch's float arguments (leaky_relu's negative_slope, elu's alpha, hardtanh's min_val and
// max_val, softplus's beta and threshold) are constant operands of the rule after x, plain
// numbers with torch's defaults (rule_support.hpp says how every mode and tensors take them).
// F.gelu(x, approximate='tanh') is gelu_tanh(x): another formula with its own derivative, so
// its own rule and name; a run-time argument could not choose between two rules (each is a
// different node type) without putting both formulas in one rule behind a branch per element.
#pragma once

#include <array>
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

// r = log1p(e^(b x))/b, x itself where b x > t; d = e^(b x)/(e^(b x) + 1), 1 where b x > t
struct softplus_rule : value_by_level<softplus_rule> {
  static constexpr char const* name = "softplus";
  static constexpr std::array<double, 2> defaults{1, 20};  ///< beta, threshold (torch's)
  template <class R>
  static R plain(R v, R beta, R threshold) {
    using std::exp;
    using std::log1p;
    return v * beta > threshold ? v : log1p(exp(v * beta)) / beta;
  }
  /// NaN: e^NaN/(e^NaN + 1) = NaN, as torch (its value is NaN too).
  template <std::size_t I, class X, class B, class H, class T>
  static T partial(X const& x, B const& beta, H const& threshold, T const&) {
    using std::exp;
    parameter_has_no_partial<I>();
    if (primal_of(x) * beta > threshold) return cst<T>(1);
    T const z = exp(x * beta);
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

// r = x (1 + t)/2, t = tanh(k (x + c x^3)), k = sqrt(2/pi), c = 0.044715;
// d = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2)
struct gelu_tanh_rule : value_by_level<gelu_tanh_rule> {
  static constexpr char const* name = "gelu_tanh";
  static constexpr double sqrt_2_over_pi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  ///< torch's kBeta
  template <class R>
  static constexpr R k = R(sqrt_2_over_pi);
  template <class R>
  static constexpr R c = R(0.044715);
  template <class R>
  static R plain(R v) {
    using std::tanh;
    R const inner = k<R> * (v + c<R> * (v * v * v));
    return R(0.5) * v * (1 + tanh(inner));  // -inf: -inf * 0 = NaN, as torch
  }
  /// torch's formula, with 1 - t^2 as (1 - t)(1 + t): torch's kernel (built for AVX2) computes
  /// it with one fused multiply-add, 1 - t^2 rounded once, which (1 - t)(1 + t) matches to an ulp,
  /// where 1 - t * t would differ by up to 1e-9 relative towards x = -5. Beyond |x| = 10 (where
  /// t is +-1 to the last bit and the formula gives exactly 1 or 0) the constant, which the
  /// formula turns into 0 * inf = NaN once x^2 overflows (|x| > 1.3e154).
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    using std::tanh;
    using R = innermost_t<T>;
    auto const p = primal_of(x);
    if (std::abs(p) > 10) return cst<T>(p > 0 ? 1 : 0);
    T const x2 = x * x;
    T const t = tanh(k<R> * (x + c<R> * (x2 * x)));
    return R(0.5) * (1 + t) + R(0.5) * x * ((1 - t) * (1 + t)) * (k<R> * (1 + R(3) * c<R> * x2));
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

// ---- with constant parameters (rule_support.hpp: operands after x, plain numbers) ----------

// r = x above 0, s x at and below 0; d = 1, or s (at 0 too); NaN: r NaN, d s
struct leaky_relu_rule : value_by_level<leaky_relu_rule> {
  static constexpr char const* name = "leaky_relu";
  static constexpr std::array<double, 1> defaults{0.01};  ///< negative_slope (torch's)
  template <class R>
  static R plain(R v, R slope) {
    return v > 0 ? v : v * slope;
  }
  template <std::size_t I, class X, class S, class T>
  static T partial(X const& x, S const& slope, T const&) {
    parameter_has_no_partial<I>();
    return cst<T>(primal_of(x) > 0 ? S(1) : slope);
  }
};

// r = x above 0, a (e^x - 1) at and below 0; d = 1, or a e^x (at 0 too); NaN: r NaN, d 1
struct elu_rule : value_by_level<elu_rule> {
  static constexpr char const* name = "elu";
  static constexpr std::array<double, 1> defaults{1};  ///< alpha (torch's)
  template <class R>
  static R plain(R v, R alpha) {
    using std::exp;
    return v <= 0 ? (exp(v) - 1) * alpha : v;  // torch's elu kernel (scale and input_scale 1)
  }
  template <std::size_t I, class X, class A, class T>
  static T partial(X const& x, A const& alpha, T const&) {
    using std::exp;
    parameter_has_no_partial<I>();
    if (primal_of(x) <= 0) return alpha * exp(x);
    return cst<T>(1);
  }
};

// r = min(max(x, lo), hi); d = 1 inside (lo, hi), 0 at and beyond the bounds; NaN: r NaN, d 1
struct hardtanh_rule : value_by_level<hardtanh_rule> {
  static constexpr char const* name = "hardtanh";
  static constexpr std::array<double, 2> defaults{-1, 1};  ///< min_val, max_val (torch's)
  template <class R>
  static R plain(R v, R lo, R hi) {
    R const m = v < lo ? lo : v;  // torch's clamp kernel: std::min(std::max(v, lo), hi), so hi if lo > hi
    return hi < m ? hi : m;
  }
  template <std::size_t I, class X, class L, class H, class T>
  static T partial(X const& x, L const& lo, H const& hi, T const&) {
    parameter_has_no_partial<I>();
    auto const v = primal_of(x);
    return cst<T>(v <= lo || v >= hi ? 0 : 1);  // torch's hardtanh_backward
  }
};

}  // namespace detail

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
ADX_OWN_UNARY_ENTRY(sigmoid, sigmoid_rule)
ADX_OWN_UNARY_ENTRY(logsigmoid, logsigmoid_rule)
ADX_OWN_UNARY_ENTRY(silu, silu_rule)
ADX_OWN_UNARY_ENTRY(mish, mish_rule)
ADX_OWN_UNARY_ENTRY(gelu, gelu_rule)
ADX_OWN_UNARY_ENTRY(gelu_tanh, gelu_tanh_rule)
ADX_OWN_UNARY_ENTRY(logit, logit_rule)
ADX_OWN_UNARY_ENTRY(sinc, sinc_rule)
ADX_OWN_UNARY_ENTRY(relu6, relu6_rule)
ADX_OWN_UNARY_ENTRY(selu, selu_rule)
#include "adx/rules/entry_macros_end.hpp"

// The functions with constant parameters: plain numbers (rule_support.hpp), converted to x's
// number type, with torch's defaults; over AD numbers of every mode and elementwise over tensors.

/// torch.nn.functional.leaky_relu(x, negative_slope): x above 0, negative_slope * x at and below.
template <class X, class S = double>
requires rule_operand<X> || tensor_operand<X>
auto leaky_relu(X&& x, S negative_slope = detail::leaky_relu_rule::defaults[0]) {
  return detail::make_with_parameters<detail::leaky_relu_rule>(std::forward<X>(x), negative_slope);
}
/// torch.nn.functional.elu(x, alpha): x above 0, alpha (e^x - 1) at and below.
template <class X, class A = double>
requires rule_operand<X> || tensor_operand<X>
auto elu(X&& x, A alpha = detail::elu_rule::defaults[0]) {
  return detail::make_with_parameters<detail::elu_rule>(std::forward<X>(x), alpha);
}
/// torch.nn.functional.hardtanh(x, min_val, max_val): x clamped to [min_val, max_val], with
/// derivative 1 strictly inside only.
template <class X, class L = double, class H = double>
requires rule_operand<X> || tensor_operand<X>
auto hardtanh(X&& x, L min_val = detail::hardtanh_rule::defaults[0], H max_val = detail::hardtanh_rule::defaults[1]) {
  return detail::make_with_parameters<detail::hardtanh_rule>(std::forward<X>(x), min_val, max_val);
}
/// torch.nn.functional.softplus(x, beta, threshold): log(1 + e^(beta x))/beta, and x itself
/// where beta x > threshold.
template <class X, class B = double, class H = double>
requires rule_operand<X> || tensor_operand<X>
auto softplus(X&& x, B beta = detail::softplus_rule::defaults[0], H threshold = detail::softplus_rule::defaults[1]) {
  return detail::make_with_parameters<detail::softplus_rule>(std::forward<X>(x), beta, threshold);
}

/// The rules of this file with constant parameters (each with its `defaults`).
using activation_parameterised_rules =
    boost::mp11::mp_list<detail::leaky_relu_rule, detail::elu_rule, detail::hardtanh_rule, detail::softplus_rule>;
static_assert(detail::parameterised_rules_conform(activation_parameterised_rules{}));

/// The unary rules of this file (adx/rules.hpp lists them all), with the parameterised ones at
/// their defaults.
using activation_unary_rules =
    boost::mp11::mp_list<detail::sigmoid_rule, detail::logsigmoid_rule, detail::silu_rule, detail::mish_rule,
                         detail::gelu_rule, detail::gelu_tanh_rule, detail::logit_rule, detail::sinc_rule,
                         detail::relu6_rule, detail::selu_rule, detail::at_defaults<detail::leaky_relu_rule>,
                         detail::at_defaults<detail::elu_rule>, detail::at_defaults<detail::hardtanh_rule>,
                         detail::at_defaults<detail::softplus_rule>>;
static_assert(detail::rules_conform<1>(activation_unary_rules{}));

}  // namespace adx
