// SPDX-License-Identifier: MIT
// adx: linear algebra with derivatives (adx::linalg, after torch.linalg): solve, inv,
// solve_triangular, cholesky, cholesky_solve, cholesky_inverse, det, slogdet, logdet, eigh,
// eigvalsh, svdvals, qr, lstsq, matrix_exp, matrix_norm, and the structural trace, diagonal,
// diag, tril, triu. Each operation is one tape node whose rules are written with tensor
// operations (linalg/op.hpp), so they hold for every element type and nesting level.
#pragma once
#include "adx/linalg/det.hpp"
#include "adx/linalg/matrix_exp.hpp"
#include "adx/linalg/qr.hpp"
#include "adx/linalg/solve.hpp"
#include "adx/linalg/spectral.hpp"
#include "adx/linalg/structure.hpp"
