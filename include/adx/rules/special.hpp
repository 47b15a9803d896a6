// SPDX-License-Identifier: MIT
// adx: erf and erfc (the gamma family is in gamma.hpp).
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

}  // namespace detail

#include "adx/rules/entry_macros.hpp"  // ADX_UNARY_ENTRY and friends, until entry_macros_end.hpp
ADX_UNARY_ENTRY(erf, erf_rule)
ADX_UNARY_ENTRY(erfc, erfc_rule)
#include "adx/rules/entry_macros_end.hpp"

/// The unary and binary rules of this file (rules/elementary.hpp lists them all).
using special_unary_rules = boost::mp11::mp_list<detail::erf_rule, detail::erfc_rule>;
using special_binary_rules = boost::mp11::mp_list<>;

}  // namespace adx
