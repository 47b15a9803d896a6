// SPDX-License-Identifier: MIT
// adx: a few doubles computed at once (`lanes`), for the tensor element loops over double and
// var<double> (tensor/lanes.hpp). The rules (rules/elementary.hpp) are generic in their number
// type, so a rule whose value and partials are branch-free (it says so with
// `static constexpr bool lanes = true`) computes W elements at a time with the same formulas.
//
// Arithmetic is the processor's, so +, -, *, / and sqrt give exactly the scalar results. The
// transcendental functions (exp, expm1, log, log1p, sin and cos (both from sincos), tan, tanh)
// are SLEEF's vector functions of 1.0-ulp accuracy, as in PyTorch's CPU kernels: they may differ from <cmath>'s in
// the last bit (in about 4 % of sin and cos values over [-3, 3]). They are used only where SLEEF
// was found (ADX_WITH_SLEEF=1, set by the CMake target, which links it); otherwise `lanes` does
// not exist and every loop runs element by element.
//
// Width: 4 (AVX2, SLEEF's avx2 functions) when the translation unit is compiled for AVX2 and
// FMA (-mavx2 -mfma, -march=native on such a machine); otherwise 2 (SSE2, SLEEF's functions
// that choose the best 128-bit implementation when first called).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "adx/core/traits.hpp"

#ifndef ADX_WITH_SLEEF
#define ADX_WITH_SLEEF 0
#endif

#if ADX_WITH_SLEEF && (defined(__x86_64__) || defined(_M_X64)) && defined(__SSE2__)
#define ADX_LANES 1
#else
#define ADX_LANES 0
#endif

#if ADX_LANES
#include <immintrin.h>
#include <sleef.h>

// Everything of a width lives in an inline namespace named after it: a program whose files are
// compiled for different widths (some with -mavx2) then has two sets of functions with different
// names, not one name with two definitions (the linker would keep one of them for every file).
#if defined(__AVX2__) && defined(__FMA__)
#define ADX_LANES_NAMESPACE lanes_avx2
#else
#define ADX_LANES_NAMESPACE lanes_sse2
#endif

namespace adx::detail {
inline namespace ADX_LANES_NAMESPACE {

#if defined(__AVX2__) && defined(__FMA__)
inline constexpr std::size_t lane_width = 4;
using lane_register = __m256d;
#define ADX_LANE_OP(op) _mm256_##op##_pd
#define ADX_SLEEF(f) Sleef_##f##d4_u10avx2
#else
inline constexpr std::size_t lane_width = 2;
using lane_register = __m128d;
#define ADX_LANE_OP(op) _mm_##op##_pd
#define ADX_SLEEF(f) Sleef_##f##d2_u10
#endif

/// lane_width doubles, computed together. Plain numbers mix in as if broadcast.
struct lanes {
  lane_register r;

  lanes() = default;
  explicit lanes(lane_register x) noexcept : r(x) {}
  explicit lanes(double x) noexcept : r(ADX_LANE_OP(set1)(x)) {}
  static lanes load(double const* p) noexcept { return lanes(ADX_LANE_OP(loadu)(p)); }
  void store(double* p) const noexcept { ADX_LANE_OP(storeu)(p, r); }
  /// Lane k's value.
  double operator[](std::size_t k) const noexcept {
    alignas(32) double v[lane_width];
    ADX_LANE_OP(store)(v, r);
    return v[k];
  }
};

/// A plain number beside lanes: the same number in every lane.
template <class X>
concept lane_scalar = std::is_arithmetic_v<X>;

inline lanes operator-(lanes a) noexcept { return lanes(ADX_LANE_OP(xor)(a.r, ADX_LANE_OP(set1)(-0.0))); }

#define ADX_LANE_BINARY(sym, op)                                                                    \
  inline lanes operator sym(lanes a, lanes b) noexcept { return lanes(ADX_LANE_OP(op)(a.r, b.r)); } \
  template <lane_scalar C>                                                                          \
  lanes operator sym(lanes a, C b) noexcept {                                                       \
    return a sym lanes(static_cast<double>(b));                                                     \
  }                                                                                                 \
  template <lane_scalar C>                                                                          \
  lanes operator sym(C a, lanes b) noexcept {                                                       \
    return lanes(static_cast<double>(a)) sym b;                                                     \
  }                                                                                                 \
  inline lanes& operator sym##=(lanes& a, lanes b) noexcept { return a = a sym b; }
ADX_LANE_BINARY(+, add)
ADX_LANE_BINARY(-, sub)
ADX_LANE_BINARY(*, mul)
ADX_LANE_BINARY(/, div)
#undef ADX_LANE_BINARY

/// Whether any lane of a is above the number b (false for NaN).
inline bool any_above(lanes a, double b) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
  return _mm256_movemask_pd(_mm256_cmp_pd(a.r, _mm256_set1_pd(b), _CMP_GT_OQ)) != 0;
#else
  return _mm_movemask_pd(_mm_cmpgt_pd(a.r, _mm_set1_pd(b))) != 0;
#endif
}
/// f applied lane by lane (<cmath>'s function: the rare arguments SLEEF gets wrong).
inline lanes each_lane(lanes a, double (*f)(double)) noexcept {
  alignas(32) double v[lane_width];
  ADX_LANE_OP(store)(v, a.r);
  for (double& x : v) x = f(x);
  return lanes(ADX_LANE_OP(load)(v));
}

// Found by argument-dependent lookup from the rules' `using std::exp; exp(x)`.
inline lanes sqrt(lanes a) noexcept { return lanes(ADX_LANE_OP(sqrt)(a.r)); }
#define ADX_LANE_FUNCTION(f) \
  inline lanes f(lanes a) noexcept { return lanes(ADX_SLEEF(f)(a.r)); }
ADX_LANE_FUNCTION(expm1)
ADX_LANE_FUNCTION(log)
ADX_LANE_FUNCTION(tan)
ADX_LANE_FUNCTION(tanh)
#undef ADX_LANE_FUNCTION
// Two of SLEEF's functions overflow early (checked with SLEEF 3.5): exp gives inf from
// x = 709.78271115 on, where the double is finite up to log(DBL_MAX) = 709.782712893384; log1p
// gives inf above 1e307 (log1p(1e308) is 709.196). A vector with such an argument takes
// <cmath>'s function, so that lanes and element loops agree there (one compare per vector).
inline lanes exp(lanes a) noexcept {
  if (any_above(a, 709.78)) [[unlikely]]
    return each_lane(a, [](double x) { return std::exp(x); });
  return lanes(ADX_SLEEF(exp)(a.r));
}
inline lanes log1p(lanes a) noexcept {
  if (any_above(a, 1e306)) [[unlikely]]
    return each_lane(a, [](double x) { return std::log1p(x); });
  return lanes(ADX_SLEEF(log1p)(a.r));
}

/// Whether any lane is +inf or -inf (rules/rule_support.hpp's any_infinite for lanes): a
/// magnitude above the largest double.
inline bool any_infinite(lanes a) noexcept {
  lanes const magnitude(ADX_LANE_OP(andnot)(ADX_LANE_OP(set1)(-0.0), a.r));
  return any_above(magnitude, std::numeric_limits<double>::max());
}

/// sin and cos in one call (rules/trig.hpp's sin_and_cos for lanes). SLEEF's sincos and
/// its sin differ in the last bit for about 4 % of arguments, so sin and cos alone are taken
/// from sincos too: a value is then the same whether or not its derivative is wanted.
inline std::pair<lanes, lanes> sin_and_cos(lanes a) noexcept {
  auto const sc = ADX_SLEEF(sincos)(a.r);
  return {lanes(sc.x), lanes(sc.y)};
}
inline lanes sin(lanes a) noexcept { return lanes(ADX_SLEEF(sincos)(a.r).x); }
inline lanes cos(lanes a) noexcept { return lanes(ADX_SLEEF(sincos)(a.r).y); }

#undef ADX_LANE_OP
#undef ADX_SLEEF

}  // namespace ADX_LANES_NAMESPACE

template <>
inline constexpr bool is_lanes<lanes> = true;

}  // namespace adx::detail
#endif
