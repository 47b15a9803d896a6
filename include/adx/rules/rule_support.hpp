// SPDX-License-Identifier: MIT
// adx: what every rule header shares (rules/arithmetic.hpp, exp_log.hpp, trig.hpp, special.hpp,
// piecewise.hpp, gamma.hpp). A rule is a struct with
//   value(args...)                 the function (or value_as<T>(args...) where branches must
//                                  agree on a type),
//   partial<I>(args..., r)         d r / d arg I, given the args' values and the result r,
// written generically so that the rule itself is differentiated when the scalar is nested
// (partials are built from adx functions, never from hand-expanded higher derivatives).
// Forward, reverse and tensor modes all call these. Adding a function = one rule, one
// one-line entry point and one entry in its family's rule list, in its family's header; the
// generic test harness picks it up from `all_unary_rules` or `all_binary_rules`.
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

struct max_rule;
struct min_rule;

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

namespace detail {
/// max(t, 1) and min(t, 1) with an integer are the reductions over axis 1 (tensor/reduce.hpp),
/// as in numpy and torch; elementwise against a number takes a floating one: max(t, 0.0).
template <class Rule, class Y>
concept elementwise_call =
    !(std::is_same_v<Rule, max_rule> || std::is_same_v<Rule, min_rule>) || !std::is_integral_v<std::remove_cvref_t<Y>>;
}  // namespace detail

}  // namespace adx
