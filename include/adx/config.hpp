// SPDX-License-Identifier: MIT
// adx: version, feature macros and the one place that knows whether CBLAS and LAPACKE are
// available.
#pragma once

#define ADX_VERSION_MAJOR 0
#define ADX_VERSION_MINOR 1
#define ADX_VERSION_PATCH 0
#define ADX_VERSION_STRING "0.1.0"

// ADX_WITH_BLAS is set by the CMake target (1 or 0). A header-only user without CMake may
// define it; otherwise adx detects <cblas.h> and falls back to its portable kernels.
#ifndef ADX_WITH_BLAS
#if __has_include(<cblas.h>)
#define ADX_WITH_BLAS 1
#else
#define ADX_WITH_BLAS 0
#endif
#endif

// ADX_WITH_LAPACK likewise (1 or 0, set by the CMake target): whether float and double
// factorizations (adx::linalg) go to LAPACKE. It needs CBLAS too; without a definition it is 1
// when ADX_WITH_BLAS is and <lapacke.h> is found (then link -llapacke), else adx's portable
// kernels serve.
#ifndef ADX_WITH_LAPACK
#if ADX_WITH_BLAS && __has_include(<lapacke.h>)
#define ADX_WITH_LAPACK 1
#else
#define ADX_WITH_LAPACK 0
#endif
#endif

// ADX_FORCE_INLINE (1 or 0): whether the element loops' small functions and lambdas are forced
// inline (ADX_ALWAYS_INLINE, ADX_INLINE_LAMBDA). By default only an optimised build forces
// them: GCC and clang inline always_inline functions at -O0 too, and in a debug or sanitizer
// build of code with many nested instantiations that costs much of the compile time (clang -O0
// with ASan + UBSan) and gains nothing.
#ifndef ADX_FORCE_INLINE
#if defined(__OPTIMIZE__)
#define ADX_FORCE_INLINE 1
#else
#define ADX_FORCE_INLINE 0
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ADX_NOINLINE __attribute__((noinline))
#else
#define ADX_NOINLINE
#endif
#if (defined(__GNUC__) || defined(__clang__)) && ADX_FORCE_INLINE
#define ADX_ALWAYS_INLINE inline __attribute__((always_inline))
#define ADX_INLINE_LAMBDA __attribute__((always_inline))
#else
#define ADX_ALWAYS_INLINE inline
#define ADX_INLINE_LAMBDA
#endif

namespace adx {
/// adx's version (adx::version: major, minor, patch; ADX_VERSION_STRING as text).
struct version_info {
  int major;  ///< incompatible changes
  int minor;  ///< additions (0.x: compatible only within one minor version)
  int patch;  ///< fixes
};
inline constexpr version_info version{ADX_VERSION_MAJOR, ADX_VERSION_MINOR, ADX_VERSION_PATCH};
}  // namespace adx
