// SPDX-License-Identifier: MIT
// adx: the macros that write a rule's entry points: the scalar function and its elementwise
// tensor overload (tensor/elementwise.hpp builds the tensor expression). Included by the rule
// headers (exp_log.hpp, trig.hpp, special.hpp, piecewise.hpp, gamma.hpp), each of which undefines them after its entry
// points with entry_macros_end.hpp; no include guard, so that each can define them again.

// A unary function whose scalar overload takes operands satisfying `scalar` (rule_operand: AD
// operands and plain numbers). Plain numbers are taken too so that a generic function gives the
// same answer over double (a transform calls it so to learn what it captures, api/level.hpp);
// for the functions <cmath> also has, an unqualified call on a double still finds the
// non-template <cmath> function first.
#define ADX_UNARY_ENTRY_FOR(scalar, fn, rule)                          \
  template <scalar X>                                                  \
  constexpr auto fn(X&& x) {                                           \
    return detail::make_expr<detail::rule>(std::forward<X>(x));        \
  }                                                                    \
  template <tensor_operand X>                                          \
  auto fn(X&& x) {                                                     \
    return detail::make_tensor_expr<detail::rule>(std::forward<X>(x)); \
  }
#define ADX_UNARY_ENTRY(fn, rule) ADX_UNARY_ENTRY_FOR(rule_operand, fn, rule)
// A unary function whose rule is flagged unconnected_in_tf (core/expr.hpp): its result is
// recorded where it is called, so the entry takes the caller's line for anomaly mode.
#define ADX_UNCONNECTED_UNARY_ENTRY(fn, rule)                                        \
  template <rule_operand X>                                                          \
  constexpr auto fn(X&& x, source_location where = source_location::current()) {     \
    return detail::make_unconnected<detail::rule>(where, std::forward<X>(x));        \
  }                                                                                  \
  template <tensor_operand X>                                                        \
  auto fn(X&& x, source_location where = source_location::current()) {               \
    return detail::make_unconnected_tensor<detail::rule>(where, std::forward<X>(x)); \
  }
#define ADX_OWN_UNARY_ENTRY(fn, rule) ADX_UNARY_ENTRY_FOR(rule_operand, fn, rule)
#define ADX_BINARY_ENTRY(fn, rule)                                                                                    \
  template <class X, class Y>                                                                                         \
  requires rule_operands2<X, Y>                                                                                       \
  constexpr auto fn(X&& x, Y&& y) { return detail::make_expr<detail::rule>(std::forward<X>(x), std::forward<Y>(y)); } \
  template <class X, class Y>                                                                                         \
  requires tensor_operands2<X, Y> && detail::elementwise_call<detail::rule, Y>                                        \
  auto fn(X&& x, Y&& y) { return detail::make_tensor_expr<detail::rule>(std::forward<X>(x), std::forward<Y>(y)); }
// A two-argument function of adx's own (<cmath> has none): also over two plain numbers, which it
// evaluates at once (as ADX_OWN_UNARY_ENTRY does).
#define ADX_OWN_BINARY_ENTRY(fn, rule)            \
  ADX_BINARY_ENTRY(fn, rule)                      \
  template <arithmetic X, arithmetic Y>           \
  constexpr auto fn(X x, Y y) {                   \
    return detail::make_expr<detail::rule>(x, y); \
  }
