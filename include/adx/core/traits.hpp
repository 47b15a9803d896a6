// SPDX-License-Identifier: MIT
// adx: what every layer needs to know about scalar types: which are AD scalars, how deeply
// they nest, their value type one level down and the plain number at the bottom.
#pragma once

#include <cstddef>
#include <type_traits>

namespace adx {

template <class T>
class dual;
template <class T>
class var;

/// Specialised by each mode (forward/dual.hpp, reverse/var.hpp) for its scalar type.
/// Provides `value_type`, `level`, `constant(value_type)` and `is_reverse`.
template <class S>
struct ad_traits;

namespace detail {
template <class S, class = void>
struct is_ad_scalar : std::false_type {};
template <class S>
struct is_ad_scalar<S, std::void_t<typename ad_traits<S>::value_type>> : std::true_type {};

/// Tag base of every expression node; its ad_type names the scalar it evaluates to.
struct expr_tag {};
/// Tag base of tensors and tensor expressions (tensor/), so that the elementwise entry points
/// of the rules accept them without the rules knowing about tensors.
struct tensor_tag {};
/// True for core/simd.hpp's `lanes` (several doubles computed at once), which the rules accept
/// like a plain number.
template <class T>
inline constexpr bool is_lanes = false;
}  // namespace detail

/// A forward or reverse AD scalar at any nesting depth: dual<T>, var<T>.
template <class S>
concept ad_scalar = detail::is_ad_scalar<std::remove_cvref_t<S>>::value;

/// An unevaluated expression over AD scalars (what `a * b` returns).
template <class E>
concept ad_expression = std::is_base_of_v<detail::expr_tag, std::remove_cvref_t<E>>;

/// Anything that takes part in differentiation: an AD scalar or an expression of them.
template <class X>
concept ad_operand = ad_scalar<X> || ad_expression<X>;

/// A tensor or an unevaluated elementwise tensor expression.
template <class X>
concept tensor_operand = std::is_base_of_v<detail::tensor_tag, std::remove_cvref_t<X>>;

/// A plain number that may be mixed with AD operands (int literals, double, float).
template <class X>
concept arithmetic = std::is_arithmetic_v<std::remove_cvref_t<X>>;

namespace detail {
template <class X, class = void>
struct ad_type_of {
  using type = void;
};
template <class X>
struct ad_type_of<X, std::enable_if_t<ad_scalar<X>>> {
  using type = std::remove_cvref_t<X>;
};
template <class X>
struct ad_type_of<X, std::enable_if_t<ad_expression<X>>> {
  using type = typename std::remove_cvref_t<X>::ad_type;
};

template <class X>
struct level_of : std::integral_constant<int, 0> {};
template <ad_scalar X>
struct level_of<X> : std::integral_constant<int, ad_traits<std::remove_cvref_t<X>>::level> {};
template <ad_expression X>
struct level_of<X> : level_of<typename std::remove_cvref_t<X>::ad_type> {};

template <class X>
struct innermost {
  using type = std::remove_cvref_t<X>;
};
template <ad_operand X>
struct innermost<X> : innermost<typename ad_traits<typename ad_type_of<X>::type>::value_type> {};
}  // namespace detail

/// The AD scalar an operand evaluates to (void for plain numbers).
template <class X>
using ad_type_t = typename detail::ad_type_of<std::remove_cvref_t<X>>::type;

/// Nesting depth: 0 for double, 1 for var<double>, 2 for var<dual<double>>, ...
template <class X>
inline constexpr int level_v = detail::level_of<std::remove_cvref_t<X>>::value;

/// One level down: var<dual<double>> -> dual<double>.
template <ad_scalar S>
using value_type_t = typename ad_traits<std::remove_cvref_t<S>>::value_type;

/// The plain number at the bottom of a nesting: var<dual<float>> -> float.
template <class X>
using innermost_t = typename detail::innermost<std::remove_cvref_t<X>>::type;

/// True if S itself is a reverse-mode scalar (var<T>), whatever it holds.
template <class S>
inline constexpr bool is_reverse_v = [] {
  if constexpr (ad_scalar<S>)
    return ad_traits<std::remove_cvref_t<S>>::is_reverse;
  else
    return false;
}();

/// True if some level of S records on a tape (S is var<...> or contains one).
template <class S>
inline constexpr bool has_reverse_v = [] {
  if constexpr (ad_scalar<S>)
    return ad_traits<std::remove_cvref_t<S>>::is_reverse || has_reverse_v<value_type_t<S>>;
  else
    return false;
}();

}  // namespace adx
