// SPDX-License-Identifier: MIT
// adx core: traits, the expression node and comparisons.
#pragma once
#include "adx/config.hpp"
#include "adx/core/compare.hpp"
#include "adx/core/error.hpp"
#include "adx/core/expr.hpp"
#include "adx/core/traits.hpp"
