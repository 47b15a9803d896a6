// SPDX-License-Identifier: MIT
// adx rules: every elementwise function's value and partials.
#pragma once
#include <boost/mp11/algorithm.hpp>

#include "adx/rules/activation.hpp"
#include "adx/rules/elementary.hpp"
#include "adx/rules/gamma.hpp"

namespace adx {
/// Every unary rule, for the generic tests and for tools that enumerate functions.
using all_unary_rules = boost::mp11::mp_append<elementary_unary_rules, gamma_unary_rules, activation_unary_rules>;
}  // namespace adx
