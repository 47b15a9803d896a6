// SPDX-License-Identifier: MIT
// adx: comparisons and printing of AD operands. Comparisons look at values only (the innermost
// number), so branches in user code behave as they do on doubles; they are not differentiable.
#pragma once

#include <iosfwd>

#include "adx/core/expr.hpp"

namespace adx {

template <class X, class Y>
concept comparable_operands = (ad_operand<X> || ad_operand<Y>)&&(ad_operand<X> || arithmetic<X>)&&(ad_operand<Y> ||
                                                                                                   arithmetic<Y>);

template <class X, class Y>
requires comparable_operands<X, Y>
constexpr bool operator==(X const& x, Y const& y) { return primal(x) == primal(y); }
template <class X, class Y>
requires comparable_operands<X, Y>
constexpr auto operator<=>(X const& x, Y const& y) { return primal(x) <=> primal(y); }

template <ad_operand X>
constexpr bool isnan(X const& x) {
  return primal(x) != primal(x);
}
template <ad_operand X>
constexpr bool isinf(X const& x) {
  using std::isinf;
  return isinf(primal(x));
}
template <ad_operand X>
constexpr bool isfinite(X const& x) {
  using std::isfinite;
  return isfinite(primal(x));
}

/// Prints the value (one level down, recursively), like the number it stands for. (A template
/// over the stream, so that only a program that prints pays for <ostream>.)
template <class CharT, class Traits, ad_operand X>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os, X const& x) {
  return os << value(x);
}

}  // namespace adx
