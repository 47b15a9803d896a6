// SPDX-License-Identifier: MIT
// adx: every elementwise function of <cmath> and the piecewise ones, once, by family: the rule
// protocol and what the families share (rule_support.hpp), arithmetic, exponentials and
// logarithms, trigonometric and hyperbolic, special, piecewise. The gamma family is gamma.hpp.
#pragma once

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include "adx/rules/arithmetic.hpp"
#include "adx/rules/exp_log.hpp"
#include "adx/rules/piecewise.hpp"
#include "adx/rules/rule_support.hpp"
#include "adx/rules/special.hpp"
#include "adx/rules/trig.hpp"

namespace adx {

/// The unary rules of the families above (adx/rules.hpp adds the gamma family's: all_unary_rules).
using elementary_unary_rules = boost::mp11::mp_append<arithmetic_unary_rules, exp_log_unary_rules, trig_unary_rules,
                                                      special_unary_rules, piecewise_unary_rules>;
/// Every binary rule.
using all_binary_rules = boost::mp11::mp_append<arithmetic_binary_rules, exp_log_binary_rules, trig_binary_rules,
                                                special_binary_rules, piecewise_binary_rules>;
/// Every ternary rule (clamp, where).
using all_ternary_rules = piecewise_ternary_rules;

static_assert(detail::rules_conform<1>(elementary_unary_rules{}));
static_assert(detail::rules_conform<2>(all_binary_rules{}));
static_assert(detail::rules_conform<3>(all_ternary_rules{}));

}  // namespace adx
