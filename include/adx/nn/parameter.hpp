// SPDX-License-Identifier: MIT
// adx: parameter and parameter_list, which the gradient APIs take, live in the API layer
// (adx/api/parameter.hpp); this header, where they were first, still gives them.
#pragma once

#include "adx/api/parameter.hpp"
