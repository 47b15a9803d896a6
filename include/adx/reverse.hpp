// SPDX-License-Identifier: MIT
// adx reverse mode: var<T>, tape<T>, tape_scope.
#pragma once
#include "adx/reverse/tape.hpp"
#include "adx/reverse/var.hpp"
#include "adx/rules.hpp"  // the gamma family (kept out of the internal headers)
