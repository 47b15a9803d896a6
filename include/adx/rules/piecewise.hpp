// SPDX-License-Identifier: MIT
// adx: the piecewise functions, with the documented choice at each kink: abs, relu,
// max, min, fmax, fmin, fmod, clamp, where, and floor, ceil, round and trunc.
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

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
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

/// The unary and binary rules of this file (rules/elementary.hpp lists them all).
using piecewise_unary_rules =
    boost::mp11::mp_list<detail::abs_rule, detail::relu_rule, detail::rounding_rule<0>, detail::rounding_rule<1>,
                         detail::rounding_rule<2>, detail::rounding_rule<3>>;
using piecewise_binary_rules =
    boost::mp11::mp_list<detail::max_rule, detail::min_rule, detail::fmax_rule, detail::fmin_rule, detail::fmod_rule>;
using piecewise_ternary_rules = boost::mp11::mp_list<detail::clamp_rule, detail::select_rule>;

}  // namespace adx
