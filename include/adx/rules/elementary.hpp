// SPDX-License-Identifier: MIT
// adx: every elementwise function, once. A rule is a struct with
//   value(args...)                 the function (or value_as<T>(args...) where branches must
//                                  agree on a type),
//   partial<I>(args..., r)         d r / d arg I, given the args' values and the result r,
// written generically so that the rule itself is differentiated when the scalar is nested
// (partials are built from adx functions, never from hand-expanded higher derivatives).
// Forward, reverse and tensor modes all call these. Adding a function = one rule + one
// one-line entry point below; the generic test harness picks it up from `all_unary_rules` or
// `all_binary_rules`. The gamma family lives in gamma.hpp (Boost.Math is slow to parse).
// A rule whose value and partials have no branch on the values, and whose functions core/simd.hpp
// has in a vector form, says `static constexpr bool lanes = true`: tensor loops over double may
// then compute it several elements at a time (tensor/lanes.hpp) with these same formulas.
//
// Non-differentiable points (one rule each, the same in every mode and nesting level; they are
// PyTorch 1.13's values but for the differences docs/derivative_rules.md lists):
//   abs/fabs'(0) = 0 (sign)            sqrt'(0) = +inf, log'(0) = +inf
//   max/min ties: 1/2 to each side     fmax/fmin ties: all to the first argument; a NaN
//   relu'(0) = 0                       argument of fmax/fmin gets 0, the other 1
//   pow(x, y): d/dx = 0 where y == 0; d/dy = 0 where x == 0 and y >= 0 (else r log x, NaN x<0)
//   clamp(x, lo, hi): d/dx = 1 on the closed interval [lo, hi], else the bound that is taken
//   floor, ceil, round, trunc: derivative 0 (connected; unconnected in tf.gradients)
//   fmod: d/dy = -trunc(x / y)
//   where(c, a, b): the unselected side gets a zero multiplier (0 * inf = NaN, as in torch)
#pragma once

#include <boost/mp11/list.hpp>
#include <cmath>
// <math.h> too: its C++ form declares <cmath>'s overloads in the global namespace as well, so that
// generic code calling `abs(x)` unqualified on a plain double (with `using namespace adx`, the
// README's style) gets the double overload, not C's int abs (a silent truncation; adx's abs takes
// AD operands only, as <cmath>'s functions are left to the standard library for numbers).
#include <math.h>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>
#include <utility>

#include "adx/core/expr.hpp"

namespace adx {
namespace detail {

template <class T, class C>
constexpr T cst(C c) {
  return constant<T>(c);
}
/// Whether x is +inf or -inf (lanes: whether any lane is; core/simd.hpp): the test of a rule's
/// rare case, one branch for all of a lanes' elements.
template <std::floating_point F>
constexpr bool any_infinite(F x) {
  return x == std::numeric_limits<F>::infinity() || x == -std::numeric_limits<F>::infinity();
}

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
// ---- piecewise: documented choices at the kinks ---------------------------------------------
template <class T, class X>
constexpr T sign_of(X const& x) {
  auto p = primal_of(x);
  return cst<T>(p > 0 ? 1 : (p < 0 ? -1 : 0));
}
struct abs_rule {  // d = sign(x); 0 at +-0
  static constexpr char const* name = "abs";
  template <class X>
  static auto value(X const& x) {
    using std::abs;
    return abs(x);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return sign_of<T>(x);
  }
};
struct relu_rule {  // d = 1 if x > 0 else 0; NaN in, NaN out (with d = 1), as torch
  static constexpr char const* name = "relu";
  template <class X>
  static bool passes(X const& x) {
    auto const v = primal_of(x);
    return v > 0 || std::isnan(v);
  }
  template <class T, class X>
  static T value_as(X const& x) {
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(relu(to_value<T>(x)));
    else
      return passes(x) ? to_value<T>(x) : cst<T>(0);
  }
  template <std::size_t, class X, class T>
  static T partial(X const& x, T const&) {
    return cst<T>(passes(x) ? 1 : 0);
  }
};
// The rules that pick an operand (relu, max, min, fmax, fmin, clamp, where), when their value is
// an AD number (a nested mode), make it by the same rule one level down, down to the plain
// numbers. Returning the picked operand whole would differ from the partials at this level in
// two ways:
// - at a tie of max and min the partials give each side 1/2; the inner level would give the
//   side returned everything;
// - an operand not picked has partial 0 here, so its own infinite partials give 0 * inf = NaN
//   at this level (as in torch, which multiplies its gradient by a zero mask); returned whole,
//   the other operand left it unconnected one level down, which then gave 0 (max(1, sqrt(x))
//   at x = 0: NaN at the outer level, 0 at the inner one).
// At the plain numbers max and min return x at a tie (-0 and +0 tie, and give x).
struct max_rule {  // ties: 1/2 each; NaN in either argument: NaN with zero partials
  static constexpr char const* name = "max";
  template <class T, class X, class Y>
  static T value_as(X const& x, Y const& y) {
    innermost_t<T> a = primal_of(x), b = primal_of(y);  // an int operand is compared as T's number
    if (a != a || b != b) return cst<T>(std::numeric_limits<innermost_t<T>>::quiet_NaN());
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(max(to_value<T>(x), to_value<T>(y)));
    else
      return a >= b ? to_value<T>(x) : to_value<T>(y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    innermost_t<T> a = primal_of(x), b = primal_of(y);  // an int operand is compared as T's number
    if (I == 1) std::swap(a, b);
    return cst<T>(a > b ? 1.0 : (a == b ? 0.5 : 0.0));
  }
};
struct min_rule {  // ties: 1/2 each; NaN in either argument: NaN with zero partials
  static constexpr char const* name = "min";
  template <class T, class X, class Y>
  static T value_as(X const& x, Y const& y) {
    innermost_t<T> a = primal_of(x), b = primal_of(y);  // an int operand is compared as T's number
    if (a != a || b != b) return cst<T>(std::numeric_limits<innermost_t<T>>::quiet_NaN());
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(min(to_value<T>(x), to_value<T>(y)));
    else
      return a <= b ? to_value<T>(x) : to_value<T>(y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    innermost_t<T> a = primal_of(x), b = primal_of(y);  // an int operand is compared as T's number
    if (I == 1) std::swap(a, b);
    return cst<T>(a < b ? 1.0 : (a == b ? 0.5 : 0.0));
  }
};
struct fmax_rule {  // ties and NaN-free pairs: all to the larger, ties to x; a NaN side gets 0
  static constexpr char const* name = "fmax";
  static constexpr bool take_x(auto a, auto b) { return b != b || a >= b; }
  template <class T, class X, class Y>
  static T value_as(X const& x, Y const& y) {
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(fmax(to_value<T>(x), to_value<T>(y)));
    else
      return take_x(primal_of(x), primal_of(y)) ? to_value<T>(x) : to_value<T>(y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    bool tx = take_x(primal_of(x), primal_of(y));
    return cst<T>((I == 0) == tx ? 1 : 0);
  }
};
struct fmin_rule {  // ties: all to x; a NaN side gets 0
  static constexpr char const* name = "fmin";
  static constexpr bool take_x(auto a, auto b) { return b != b || a <= b; }
  template <class T, class X, class Y>
  static T value_as(X const& x, Y const& y) {
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(fmin(to_value<T>(x), to_value<T>(y)));
    else
      return take_x(primal_of(x), primal_of(y)) ? to_value<T>(x) : to_value<T>(y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    bool tx = take_x(primal_of(x), primal_of(y));
    return cst<T>((I == 0) == tx ? 1 : 0);
  }
};
struct clamp_rule {  // d/dx = 1 on [lo, hi] (inclusive, as torch.clamp); outside, the bound taken gets 1
  static constexpr char const* name = "clamp";
  // which operand the result is: 0 = x, 1 = lo, 2 = hi (lo > hi gives hi, as torch)
  static constexpr int pick(auto x, auto lo, auto hi) {
    if (lo > hi) return 2;
    if (x < lo) return 1;
    if (x > hi) return 2;
    return 0;
  }
  template <class T, class X, class L, class H>
  static T value_as(X const& x, L const& lo, H const& hi) {
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(clamp(to_value<T>(x), to_value<T>(lo), to_value<T>(hi)));
    auto const px = primal_of(x);
    if (px != px) return to_value<T>(x);
    switch (pick(px, primal_of(lo), primal_of(hi))) {
      case 1:
        return to_value<T>(lo);
      case 2:
        return to_value<T>(hi);
      default:
        return to_value<T>(x);
    }
  }
  template <std::size_t I, class X, class L, class H, class T>
  static T partial(X const& x, L const& lo, H const& hi, T const&) {
    auto const px = primal_of(x);
    if (px != px) return cst<T>(0);
    return cst<T>(pick(px, primal_of(lo), primal_of(hi)) == static_cast<int>(I) ? 1 : 0);
  }
};
struct select_rule {  // where(c, a, b): d/da = c, d/db = !c
  static constexpr char const* name = "where";
  template <class T, class C, class A, class B>
  static T value_as(C const& c, A const& a, B const& b) {
    if constexpr (ad_scalar<T>)  // see the note before max_rule
      return T(where(primal_of(c) != 0, to_value<T>(a), to_value<T>(b)));
    else
      return primal_of(c) != 0 ? to_value<T>(a) : to_value<T>(b);
  }
  template <std::size_t I, class C, class A, class B, class T>
  static T partial(C const& c, A const&, B const&, T const&) {
    if constexpr (I == 0) {
      return cst<T>(0);  // the condition (an AD mask is read as != 0): piecewise constant
    } else {
      bool const take_a = primal_of(c) != 0;
      return cst<T>((I == 1) == take_a ? 1 : 0);
    }
  }
};
struct fmod_rule {  // d/dx = 1, d/dy = -trunc(x/y)
  static constexpr char const* name = "fmod";
  template <class X, class Y>
  static auto value(X const& x, Y const& y) {
    using std::fmod;
    return fmod(x, y);
  }
  template <std::size_t I, class X, class Y, class T>
  static T partial(X const& x, Y const& y, T const&) {
    if constexpr (I == 0)
      return cst<T>(1);
    else
      return cst<T>(-std::trunc(primal_of(x) / primal_of(y)));
  }
};
/// Rounding: piecewise constant, derivative 0 (the result stays connected to x), except in
/// tf.gradients, where, as TensorFlow registers a None gradient for Floor, Ceil and Round, the
/// result is unconnected from x (trunc goes with them; TensorFlow has no unary Trunc).
template <int Kind>
struct rounding_rule {
  static constexpr char const* name = Kind == 0 ? "floor" : Kind == 1 ? "ceil" : Kind == 2 ? "round" : "trunc";
  static constexpr bool unconnected_in_tf = true;
  template <class T, class X>
  static T value_as(X const& x) {
    if constexpr (ad_scalar<T>) {  // the same rounding one level down: a zero derivative there, connected, as here
      T const v = to_value<T>(x);
      if constexpr (Kind == 0)
        return T(floor(v));
      else if constexpr (Kind == 1)
        return T(ceil(v));
      else if constexpr (Kind == 2)
        return T(round(v));
      else
        return T(trunc(v));
    } else {
      auto p = primal_of(x);
      innermost_t<T> v = Kind == 0   ? std::floor(p)
                         : Kind == 1 ? std::ceil(p)
                         : Kind == 2 ? std::round(p)
                                     : std::trunc(p);
      return cst<T>(v);
    }
  }
  template <class X>
  requires std::is_arithmetic_v<X>
  static X value(X const& x) { return value_as<X>(x); }
  template <std::size_t, class X, class T>
  static T partial(X const&, T const&) {
    return cst<T>(0);
  }
};

}  // namespace detail

// ---- entry points ---------------------------------------------------------------------------
// Functions that <cmath> also has take at least one AD operand (plain numbers keep calling std,
// so `using namespace adx;` never makes a call ambiguous). adx's own functions (square, relu,
// clamp, where, digamma, trigamma, polygamma) also take plain numbers and evaluate them at once.

template <class X>
concept rule_operand = ad_operand<X> || arithmetic<X>;
template <class X, class Y>
concept rule_operands2 = rule_operand<X> && rule_operand<Y> &&(ad_operand<X> || ad_operand<Y>);
/// Elementwise over tensors: at least one tensor operand, the others tensors or scalars.
template <class X, class Y>
concept tensor_operands2 = (tensor_operand<X> || tensor_operand<Y>)&&(tensor_operand<X> ||
                                                                      rule_operand<X>)&&(tensor_operand<Y> ||
                                                                                         rule_operand<Y>);

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

namespace detail {
/// max(t, 1) and min(t, 1) with an integer are the reductions over axis 1 (tensor/reduce.hpp),
/// as in numpy and torch; elementwise against a number takes a floating one: max(t, 0.0).
template <class Rule, class Y>
concept elementwise_call =
    !(std::is_same_v<Rule, max_rule> || std::is_same_v<Rule, min_rule>) || !std::is_integral_v<std::remove_cvref_t<Y>>;
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
ADX_UNARY_ENTRY(erf, erf_rule)
ADX_UNARY_ENTRY(erfc, erfc_rule)
ADX_UNARY_ENTRY(abs, abs_rule)
ADX_UNARY_ENTRY(fabs, abs_rule)
ADX_OWN_UNARY_ENTRY(relu, relu_rule)
ADX_BINARY_ENTRY(max, max_rule)
ADX_BINARY_ENTRY(min, min_rule)
/// max and min of two plain numbers (<cmath> has none): a generic function gives over double
/// what it gives over AD scalars (api/level.hpp calls it so).
template <arithmetic X, arithmetic Y>
constexpr auto max(X x, Y y) {
  return detail::make_expr<detail::max_rule>(x, y);
}
template <arithmetic X, arithmetic Y>
constexpr auto min(X x, Y y) {
  return detail::make_expr<detail::min_rule>(x, y);
}
ADX_BINARY_ENTRY(fmax, fmax_rule)
ADX_BINARY_ENTRY(fmin, fmin_rule)
ADX_BINARY_ENTRY(fmod, fmod_rule)
ADX_UNCONNECTED_UNARY_ENTRY(floor, rounding_rule<0>)
ADX_UNCONNECTED_UNARY_ENTRY(ceil, rounding_rule<1>)
ADX_UNCONNECTED_UNARY_ENTRY(round, rounding_rule<2>)
ADX_UNCONNECTED_UNARY_ENTRY(trunc, rounding_rule<3>)
#include "adx/rules/entry_macros_end.hpp"

/// clamp(x, lo, hi) with inclusive bounds (d/dx = 1 at lo and hi).
template <rule_operand X, rule_operand L, rule_operand H>
constexpr auto clamp(X&& x, L&& lo, H&& hi) {
  return detail::make_expr<detail::clamp_rule>(std::forward<X>(x), std::forward<L>(lo), std::forward<H>(hi));
}
/// where(c, a, b): a where c holds, else b. The gradient flows into the selected side only.
template <rule_operand A, rule_operand B>
constexpr auto where(bool c, A&& a, B&& b) {
  return detail::make_expr<detail::select_rule>(c, std::forward<A>(a), std::forward<B>(b));
}

/// The unary rules of this file (adx/rules.hpp adds the gamma family's: all_unary_rules).
using elementary_unary_rules = boost::mp11::mp_list<
    detail::neg_rule, detail::exp_rule, detail::exp2_rule, detail::expm1_rule, detail::log_rule, detail::log2_rule,
    detail::log10_rule, detail::log1p_rule, detail::sqrt_rule, detail::cbrt_rule, detail::square_rule, detail::sin_rule,
    detail::cos_rule, detail::tan_rule, detail::asin_rule, detail::acos_rule, detail::atan_rule, detail::sinh_rule,
    detail::cosh_rule, detail::tanh_rule, detail::asinh_rule, detail::acosh_rule, detail::atanh_rule, detail::erf_rule,
    detail::erfc_rule, detail::abs_rule, detail::relu_rule, detail::rounding_rule<0>, detail::rounding_rule<1>,
    detail::rounding_rule<2>, detail::rounding_rule<3>>;
using all_binary_rules =
    boost::mp11::mp_list<detail::add_rule, detail::sub_rule, detail::mul_rule, detail::div_rule, detail::pow_rule,
                         detail::atan2_rule, detail::hypot_rule, detail::max_rule, detail::min_rule, detail::fmax_rule,
                         detail::fmin_rule, detail::fmod_rule>;

}  // namespace adx
