// adx: the gamma family, lgamma, tgamma, digamma, trigamma and polygamma<N>: rules and entry
// points, as in elementary.hpp (see there for what a rule is). Kept in a header of its own
// because Boost.Math's polygamma takes about 2 s to parse: the public headers (adx/adx.hpp,
// adx/rules.hpp, adx/forward.hpp, adx/reverse.hpp, adx/tensor.hpp, adx/api.hpp) include it,
// the internal ones (adx/reverse/var.hpp, ...) do not.
#pragma once

#include <boost/math/special_functions/polygamma.hpp>
#include <boost/mp11/list.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include "adx/core/expr.hpp"
#include "adx/rules/elementary.hpp"

namespace adx {
namespace detail {

// Boost.Math reports poles and overflow as inf/NaN here, never by throwing: adx follows IEEE.
using quiet_math_policy =
    boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::pole_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

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
      // Boost gives NaN for NaN, -inf and x <= -2^52 (poles) at orders 0 and 1, but from order 2
      // on it throws boost::math::rounding_error for NaN, -inf and x < -2^63 (it truncates x to
      // an integer first): NaN there at every order, as at the other poles out there.
      using R = decltype(boost::math::polygamma(N, x, quiet_math_policy{}));
      if (std::isnan(x) || x < -0x1p62) return std::numeric_limits<R>::quiet_NaN();
      return boost::math::polygamma(N, x, quiet_math_policy{});
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

}  // namespace adx
