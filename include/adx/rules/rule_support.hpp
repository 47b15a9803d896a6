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
// generic test harness picks it up from `all_unary_rules` or `all_binary_rules` (ternary rules:
// `all_ternary_rules`). The concept elementwise_rule below states the protocol; the lists are
// checked against it, and test/rules/test_rule_lists.cpp checks that every rule is listed.
// A rule whose value and partials have no branch on the values, and whose functions core/simd.hpp
// has in a vector form, says `static constexpr bool lanes = true`: tensor loops over double may
// then compute it several elements at a time (tensor/lanes.hpp) with these same formulas.
//
// Constant parameters (torch's float arguments: leaky_relu's negative_slope, elu's alpha,
// hardtanh's bounds, softplus's beta and threshold) are operands of the rule after x, so that a
// parameterised function is an ordinary rule of arity 1 + K and the expression node, every mode
// and the fused tensor loops take it unchanged. Its entry point admits plain numbers only there
// (make_with_parameters below): a plain operand is stored as a constant leaf, never active, so
// the node never asks for its partial, and a rule's partial<I> for a parameter is a worded
// compile error (parameter_has_no_partial). Over a tensor a parameter is a scalar operand that
// every element reads. Such a rule lists its parameters' defaults, `static constexpr
// std::array defaults` (torch's, which its entry point takes as default arguments), and
// at_defaults<Rule> is the unary rule of x alone at them: that is what the family's unary list
// holds, so every generic harness tests it; the reference tests take other parameters.
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
#include <concepts>
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

namespace detail {
template <std::size_t>
using rule_arg = double;
/// Whether R has partial<J>(x..., r) over numbers x (one per I) and a result r.
template <class R, std::size_t J, std::size_t... I>
constexpr bool has_partial(std::index_sequence<I...>) {
  return requires(rule_arg<I>... x, double r) { R::template partial<J>(x..., r); };
}
/// Whether R has value(x...) or value_as<double>(x...), and partial<I>(x..., r) for every I,
/// over one number per I.
template <class R, std::size_t... I>
constexpr bool rule_shape(std::index_sequence<I...>) {
  using args = std::index_sequence<I...>;
  constexpr bool has_value = requires(rule_arg<I>... x) { R::value(x...); }
  || requires(rule_arg<I>... x) { R::template value_as<double>(x...); };
  return has_value && (has_partial<R, I>(args{}) && ...);
}
}  // namespace detail

/// The rule protocol (the comment atop this file): a rule of Arity arguments has a `name`, its
/// value over numbers (value, or value_as<T> where branches must agree on a type) and its
/// partial<I>(args..., result) for each argument I. Every rule of the rule lists satisfies it
/// (checked where rules/elementary.hpp and adx/rules.hpp join the lists).
template <class R, std::size_t Arity>
concept elementwise_rule = requires {
  { R::name } -> std::convertible_to<char const*>;
}
&&detail::rule_shape<R>(std::make_index_sequence<Arity>{});

namespace detail {
/// True for a list of rules of Arity arguments; else a compile error naming the rule that
/// breaks the protocol.
template <std::size_t Arity, class... R>
constexpr bool rules_conform(boost::mp11::mp_list<R...>) {
  static_assert((elementwise_rule<R, Arity> && ...),
                "adx: a rule of a rule list lacks `name`, value(x...) (or value_as<T>(x...)) or partial<I>(x..., r) "
                "for one of its arguments: see rules/rule_support.hpp");
  return true;
}

/// The value of Rule for the rules that give `plain(v...)`, their formula over floating-point
/// numbers: on plain numbers, Rule::plain of them as their common floating-point type (ints as
/// double); with an AD operand (a nested level, as in var<var<double>>), Rule itself one level
/// down, so that the level below differentiates it by Rule's partials. The formula
/// differentiated by the chain rule would disagree at the edges: sigmoid's 1/(1 + e^-x) at
/// x = -1e300 has the derivative -(1/inf^2) (-inf) = NaN where the partial gives 0.
template <class Rule>
struct value_by_level {
  template <class... A>
  static auto value(A const&... a) {
    if constexpr ((ad_operand<A> || ...))
      return make_expr<Rule>(a...);
    else
      return Rule::plain(static_cast<plain_result_t<A...>>(a)...);
  }
};

// ---- rules with constant parameters (the comment atop this file) ----------------------------

/// The plain number at the bottom of an operand: of its elements for a tensor (value_type) or a
/// tensor expression (element_type).
template <class X>
struct operand_number {
  using type = innermost_t<X>;
};
template <tensor_operand X>
requires requires { typename std::remove_cvref_t<X>::value_type; }
struct operand_number<X> {
  using type = innermost_t<typename std::remove_cvref_t<X>::value_type>;
};
template <tensor_operand X>
requires requires { typename std::remove_cvref_t<X>::element_type; }
struct operand_number<X> {
  using type = innermost_t<typename std::remove_cvref_t<X>::element_type>;
};
/// The number type of the constant parameters of a rule over x: x's own floating-point type,
/// so that float stays float; double for integers.
template <class X>
using parameter_t = std::conditional_t<std::is_floating_point_v<typename operand_number<X>::type>,
                                       typename operand_number<X>::type, double>;

/// Called first by a parameterised rule's partial<I>: only x (operand 0) has one.
template <std::size_t I>
constexpr void parameter_has_no_partial() {
  static_assert(I == 0,
                "adx: a constant parameter of this rule (negative_slope, alpha, min_val, beta, ...) has no partial: "
                "the rule's entry point takes a plain number there");
}

/// Rule with its constant parameters at Rule::defaults: a unary rule of x (adx/rules.hpp lists
/// these, so that the generic harnesses test every parameterised rule).
template <class Rule>
struct at_defaults {
  static constexpr char const* name = Rule::name;
  template <class X>
  static auto value(X const& x) {
    return value_at(x, std::make_index_sequence<Rule::defaults.size()>{});
  }
  template <std::size_t I, class X, class T>
  static T partial(X const& x, T const& r) {
    return partial_at<I>(x, r, std::make_index_sequence<Rule::defaults.size()>{});
  }

 private:
  template <class X, std::size_t... K>
  static auto value_at(X const& x, std::index_sequence<K...>) {
    return Rule::value(x, static_cast<parameter_t<X>>(Rule::defaults[K])...);
  }
  template <std::size_t I, class X, class T, std::size_t... K>
  static T partial_at(X const& x, T const& r, std::index_sequence<K...>) {
    return Rule::template partial<I>(x, static_cast<parameter_t<T>>(Rule::defaults[K])..., r);
  }
};

/// True for a list of parameterised rules (each with `defaults` and the protocol's value and
/// partials over x and its parameters); else a compile error.
template <class... R>
constexpr bool parameterised_rules_conform(boost::mp11::mp_list<R...>) {
  static_assert((elementwise_rule<R, 1 + R::defaults.size()> && ...),
                "adx: a parameterised rule lacks `name`, value(x, p...) or partial<0>(x, p..., r): see "
                "rules/rule_support.hpp");
  return true;
}

/// Rule over x and its constant parameters p: a node (or, over a tensor, an elementwise
/// expression) whose parameter operands are plain numbers of x's type (parameter_t).
template <class Rule, class X, class... P>
auto make_with_parameters(X&& x, P const&... p) {
  if constexpr (!(arithmetic<P> && ...)) {
    static_assert(
        (arithmetic<P> && ...),
        "adx: the parameters of leaky_relu, elu, hardtanh and softplus (negative_slope, alpha, min_val and "
        "max_val, beta and threshold) are plain numbers, as torch's float arguments: they have no derivative");
    return 0;
  } else if constexpr (tensor_operand<X>) {
    return make_tensor_expr<Rule>(std::forward<X>(x), static_cast<parameter_t<X>>(p)...);
  } else {
    return make_expr<Rule>(std::forward<X>(x), static_cast<parameter_t<X>>(p)...);
  }
}
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
