// SPDX-License-Identifier: MIT
// adx forward mode: dual<T>.
#pragma once
#include "adx/forward/dual.hpp"
#include "adx/rules.hpp"  // the gamma family (kept out of the internal headers)
