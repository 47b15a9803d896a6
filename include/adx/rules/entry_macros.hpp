// adx: the macros that write a rule's entry points: the scalar function and its elementwise
// tensor overload (tensor/elementwise.hpp builds the tensor expression). Included by the rule
// headers (elementary.hpp, gamma.hpp), each of which undefines them at its end; no include
// guard, so that each can define them again.
#define ADX_UNARY_ENTRY(fn, rule)                                      \
  template <ad_operand X>                                              \
  constexpr auto fn(X&& x) {                                           \
    return detail::make_expr<detail::rule>(std::forward<X>(x));        \
  }                                                                    \
  template <tensor_operand X>                                          \
  auto fn(X&& x) {                                                     \
    return detail::make_tensor_expr<detail::rule>(std::forward<X>(x)); \
  }
#define ADX_OWN_UNARY_ENTRY(fn, rule)                                  \
  template <rule_operand X>                                            \
  constexpr auto fn(X&& x) {                                           \
    return detail::make_expr<detail::rule>(std::forward<X>(x));        \
  }                                                                    \
  template <tensor_operand X>                                          \
  auto fn(X&& x) {                                                     \
    return detail::make_tensor_expr<detail::rule>(std::forward<X>(x)); \
  }
#define ADX_BINARY_ENTRY(fn, rule)                                                                                    \
  template <class X, class Y>                                                                                         \
  requires rule_operands2<X, Y>                                                                                       \
  constexpr auto fn(X&& x, Y&& y) { return detail::make_expr<detail::rule>(std::forward<X>(x), std::forward<Y>(y)); } \
  template <class X, class Y>                                                                                         \
  requires tensor_operands2<X, Y> && detail::elementwise_call<detail::rule, Y>                                        \
  auto fn(X&& x, Y&& y) { return detail::make_tensor_expr<detail::rule>(std::forward<X>(x), std::forward<Y>(y)); }
