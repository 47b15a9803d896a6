// SPDX-License-Identifier: MIT
// adx: the gamma family, lgamma, tgamma, digamma, trigamma and polygamma<N>: rules and entry
// points, as in the other rule headers (rule_support.hpp says what a rule is). digamma and its derivatives are
// computed here (polygamma_value below), not taken from Boost.Math, whose polygamma header would
// take longer to parse than all of adx.
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

/// The polygamma function psi^(n)(x) = d^n/dx^n digamma(x), for n >= 0 and a floating-point x,
/// evaluated in long double (x86-64: 64-bit significand) and rounded once to R.
///
/// - x > 0: the recurrence psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1) moves x up to
///   z >= 16 + 2n (its terms all have psi^(n)'s sign: no cancellation for n >= 1), where the
///   asymptotic series (with B_2 .. B_24) is exact to about 1e-21 relative. digamma (n = 0)
///   near its positive root x0 = 1.4616... is the Taylor series about x0 instead, where the
///   recurrence's sum would cancel (|x - x0| < 0.05; elsewhere the extra 11 bits absorb it).
/// - x < 0: the reflection psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi d^n/dx^n cot(pi x), with
///   d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)), P_0(c) = c, P_(k+1)(c) = -(1 + c^2) P_k'(c), and
///   cot(pi x) from x's distance to the nearest integer (exact).
/// - Poles, x = 0, -1, -2, ... (every double at or below -2^52 is one): NaN at every order, as
///   NaN and -inf are. psi(+inf) = +inf, psi^(n)(+inf) = 0 for n >= 1.
template <class R>
R polygamma_value(int n, R x_in) {
  using L = long double;
  L const x = x_in;
  if (std::isnan(x) || x == -std::numeric_limits<L>::infinity()) return std::numeric_limits<R>::quiet_NaN();
  if (x == std::numeric_limits<L>::infinity()) return n == 0 ? x_in : R(0);
  if (x <= 0) {
    L const nearest = std::nearbyint(x);
    if (x == nearest) return std::numeric_limits<R>::quiet_NaN();  // a pole
    // cot(pi r), r = x - nearest in [-1/2, 1/2] (exact): 1 / tan(pi r) near 0, tan(pi (1/2 - |r|))
    // towards +-1/2, so that a half-integer's cot is exactly 0
    L const r = x - nearest;
    L const c = std::abs(r) <= 0.25L ? 1 / std::tan(std::numbers::pi_v<L> * r)
                                     : std::copysign(std::tan(std::numbers::pi_v<L> * (0.5L - std::abs(r))), r);
    // P_n(c) by its coefficients (P_k has degree k + 1), then pi^(n+1) P_n(c)
    constexpr int max_order = 256;  // P_n's coefficients overflow long before
    if (n > max_order) return std::numeric_limits<R>::quiet_NaN();
    // P_(k+1) = -(1 + c^2) P_k': coefficient j is -((j + 1) p_(j+1) + (j - 1) p_(j-1)), from P_k's
    // coefficients in one array into the other (both zero beyond the degree; P_k reads up to k + 3)
    L coef[2][max_order + 4] = {{0, 1}, {}};  // P_0 = c
    for (int k = 0; k < n; ++k) {
      L const* p = coef[k % 2];
      L* q = coef[(k + 1) % 2];
      for (int j = 0; j <= k + 2; ++j) q[j] = -((j + 1) * p[j + 1] + (j >= 2 ? (j - 1) * p[j - 1] : 0));
    }
    L const* p = coef[n % 2];
    L poly = 0;
    for (int j = n + 1; j >= 0; --j) poly = poly * c + p[j];
    L const reflected = polygamma_value<L>(n, 1 - x);
    return static_cast<R>((n % 2 == 0 ? reflected : -reflected) - std::pow(std::numbers::pi_v<L>, n + 1) * poly);
  }
  if (n == 0) {
    // x0 = 1.46163214496836234126265954232572132846819620400644... as hi + lo
    constexpr L x0_hi = 1.4616321449683622, x0_lo = 9.549995429965697e-17;  // hi: the double nearest x0
    L const d = (x - x0_hi) - x0_lo;
    if (std::abs(d) < 0.05L) {
      // psi^(k)(x0) / k!, k = 1 .. 15 (mpmath, 25 digits)
      constexpr L a[] = {
          0.9676722454476211704274448L,   -0.4427631689835921060928653L,   0.2584997609556510106244014L,
          -0.1639427054424065275042513L,  0.1078240506912623657571829L,    -0.07219956125645471092612178L,
          0.04880428816414310722509253L,  -0.0331611264748473592922584L,   0.02259764823221810465962483L,
          -0.01542476590494895913880032L, 0.01053879161661217538812405L,   -0.007204534386356868240970474L,
          0.004926781395729853446354266L, -0.003369801655439328082792857L, 0.00230512632673492783693838L};
      L t = 0;
      for (int k = 14; k >= 0; --k) t = (t + a[k]) * d;
      return static_cast<R>(t);
    }
  }
  // recurrence up to z >= 16 + 2n: s = sum of (x + j)^-(n+1)
  L const z_min = 16 + 2 * static_cast<L>(n);
  L z = x, s = 0;
  for (; z < z_min; z += 1) s += n == 0 ? 1 / z : std::pow(z, static_cast<L>(-(n + 1)));
  // the Bernoulli numbers B_2, B_4, ..., B_24
  constexpr L bernoulli[] = {1.0L / 6,       -1.0L / 30,       1.0L / 42,       -1.0L / 30,
                             5.0L / 66,      -691.0L / 2730,   7.0L / 6,        -3617.0L / 510,
                             43867.0L / 798, -174611.0L / 330, 854513.0L / 138, -236364091.0L / 2730};
  L const iz2 = 1 / (z * z);
  if (n == 0) {  // psi(z) = ln z - 1/(2z) - sum B_2k / (2k z^2k)
    L series = 0, zk = iz2;
    for (int k = 1; k <= 12; ++k, zk *= iz2) series += bernoulli[k - 1] / (2 * k) * zk;
    return static_cast<R>(std::log(z) - 1 / (2 * z) - series - s);
  }
  // psi^(n)(z) = (-1)^(n+1) (n-1)!/z^n [1 + n/(2z) + sum B_2k g_k],
  // g_k = (2k+n-1)! / ((2k)! (n-1)!) z^-2k
  L series = 1 + n / (2 * z), g = iz2 * n * (n + 1) / 2;
  for (int k = 1; k <= 12; ++k) {
    series += bernoulli[k - 1] * g;
    g *= iz2 * (2 * k + n) * (2 * k + n + 1) / ((2 * k + 1) * (2 * k + 2));
  }
  L const n_fact = std::tgamma(static_cast<L>(n + 1));
  L const magnitude = n_fact / n * std::pow(z, static_cast<L>(-n)) * series + n_fact * s;
  return static_cast<R>(n % 2 == 1 ? magnitude : -magnitude);
}

/// lgamma without the global signgam that std::lgamma writes (two threads calling it at once
/// are a data race, which ThreadSanitizer reports): glibc's reentrant lgamma_r where available.
template <class X>
auto lgamma_reentrant(X x) {
#if defined(__GLIBC__)
  int sign = 0;
  if constexpr (std::is_same_v<X, float>)
    return ::lgammaf_r(x, &sign);
  else if constexpr (std::is_same_v<X, long double>)
    return ::lgammal_r(x, &sign);
  else
    return ::lgamma_r(static_cast<double>(x), &sign);
#else
  return std::lgamma(x);
#endif
}

template <int N>
struct polygamma_rule;
struct lgamma_rule {  // d = digamma(x)
  static constexpr char const* name = "lgamma";
  template <class X>
  static auto value(X const& x) {
    if constexpr (std::is_arithmetic_v<X>) {
      return lgamma_reentrant(x);
    } else {
      using std::lgamma;
      return lgamma(x);
    }
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return make_expr<polygamma_rule<0>>(x);
  }
};
struct tgamma_rule {  // d = r digamma(x)
  static constexpr char const* name = "tgamma";
  template <class X>
  static auto value(X const& x) {
    using std::tgamma;
    return tgamma(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const& r) {
    return r * make_expr<polygamma_rule<0>>(x);
  }
};
template <int N>
struct polygamma_rule {  // psi^(N); d = psi^(N+1)
  static constexpr char const* name = N == 0 ? "digamma" : N == 1 ? "trigamma" : "polygamma";
  template <class X>
  static auto value(X const& x) {
    if constexpr (std::is_arithmetic_v<X>) {
      using R = std::conditional_t<std::is_integral_v<X>, double, X>;
      return polygamma_value<R>(N, static_cast<R>(x));
    } else {
      return make_expr<polygamma_rule<N>>(x);
    }
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return make_expr<polygamma_rule<N + 1>>(x);
  }
};

}  // namespace detail

#include "adx/rules/entry_macros.hpp"

ADX_UNARY_ENTRY(lgamma, lgamma_rule)
ADX_UNARY_ENTRY(tgamma, tgamma_rule)
ADX_OWN_UNARY_ENTRY(digamma, polygamma_rule<0>)
ADX_OWN_UNARY_ENTRY(trigamma, polygamma_rule<1>)
#include "adx/rules/entry_macros_end.hpp"

/// psi^(N)(x), the N-th derivative of digamma.
template <int N, rule_operand X>
constexpr auto polygamma(X&& x) {
  return detail::make_expr<detail::polygamma_rule<N>>(std::forward<X>(x));
}
template <int N, tensor_operand X>
auto polygamma(X&& x) {
  return detail::make_tensor_expr<detail::polygamma_rule<N>>(std::forward<X>(x));
}

/// The rules of this file (adx/rules.hpp joins them to elementary.hpp's: all_unary_rules).
using gamma_unary_rules = boost::mp11::mp_list<detail::lgamma_rule, detail::tgamma_rule, detail::polygamma_rule<0>,
                                               detail::polygamma_rule<1>>;
static_assert(detail::rules_conform<1>(gamma_unary_rules{}));

}  // namespace adx
