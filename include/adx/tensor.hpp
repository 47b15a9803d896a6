// SPDX-License-Identifier: MIT
// adx: the tensor layer (tensor<S>, fused elementwise expressions, reductions, matmul, concat,
// printing).
#pragma once
#include "adx/rules.hpp"  // the gamma family (kept out of the internal headers)
#include "adx/tensor/concat.hpp"
#include "adx/tensor/conv.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/gemm.hpp"
#include "adx/tensor/indexing.hpp"
#include "adx/tensor/linalg.hpp"
#include "adx/tensor/print.hpp"
#include "adx/tensor/reduce.hpp"
#include "adx/tensor/scans.hpp"
#include "adx/tensor/shape.hpp"
#include "adx/tensor/tensor.hpp"
