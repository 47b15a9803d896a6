// SPDX-License-Identifier: MIT
// adx: automatic differentiation for C++20. Includes every layer.
#pragma once
#include "adx/api/check.hpp"
#include "adx/api/custom.hpp"
#include "adx/api/functional.hpp"
#include "adx/api/gradients.hpp"
#include "adx/api/mindspore.hpp"
#include "adx/api/scalar.hpp"
#include "adx/core.hpp"
#include "adx/forward.hpp"
#include "adx/nn/init.hpp"
#include "adx/nn/layers.hpp"
#include "adx/nn/module.hpp"
#include "adx/nn/optim.hpp"
#include "adx/nn/schedule.hpp"
#include "adx/reverse.hpp"
#include "adx/rules.hpp"
#include "adx/tensor.hpp"
