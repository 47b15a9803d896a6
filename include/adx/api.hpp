// SPDX-License-Identifier: MIT
// adx api: the gradient entry points (tf.gradients, torch.autograd, mindspore.grad, the
// function transforms of torch.func / JAX, scalar derivative / gradient / hessian).
#pragma once
#include "adx/api/check.hpp"
#include "adx/api/custom.hpp"
#include "adx/api/functional.hpp"
#include "adx/api/gradients.hpp"
#include "adx/api/mindspore.hpp"
#include "adx/api/scalar.hpp"
#include "adx/rules.hpp"  // the gamma family (kept out of the internal headers)
