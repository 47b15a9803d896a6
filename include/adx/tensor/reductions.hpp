// SPDX-License-Identifier: MIT
// adx: the reduction rules: sum, mean, prod, max and min (first extreme, and ties shared), logsumexp
// and the norms. Each gives a line's value and its partials; tensor/reduce.hpp runs them over
// lines and records their tape node.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"

namespace adx::detail {

/// A line of a reduction as a tensor of its own (for a value taken one level down).
template <class T>
tensor<T> line_tensor(std::span<T const> x) {
  return tensor<T>::generate(shape{x.size()}, [&](std::size_t j) { return x[j]; });
}

/// The sum of x in eight_sums' order (tensor/lanes.hpp).
template <class T>
T sum_values(std::span<T const> x) {
  eight_sums<T> s;
  for (std::size_t i = 0; i < x.size(); ++i) s.add(i, x[i]);
  return s.total();
}

struct sum_reduction {
  static constexpr char const* name = "sum";
  static constexpr bool keeps_values = false;  // partials 1: a second sweep needs nothing of the forward pass
  template <class T>
  static T value(std::span<T const> x) {
    return sum_values(x);
  }
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(1);
  }
};

struct mean_reduction {
  static constexpr char const* name = "mean";
  static constexpr bool keeps_values = false;  // partials 1/n
  template <class T>
  static T value(std::span<T const> x) {
    return to_value<T>(sum_values(x) / static_cast<double>(x.size()));  // empty: 0/0 = NaN, as torch
  }
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(1.0 / static_cast<double>(x.size()));
  }
};

struct prod_reduction {
  static constexpr char const* name = "prod";
  // Products start from the first factor, not from a constant 1: over AD numbers, 1 * x has the
  // derivative 0 * x + 1 * x', which is NaN where x is infinite.
  template <class T>
  static T value(std::span<T const> x) {
    if (x.empty()) return constant<T>(1);
    T r = x[0];
    for (std::size_t j = 1; j < x.size(); ++j) r = r * x[j];
    return r;
  }
  /// p_j = product of the others (prefix times suffix): exact at zeros.
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    std::size_t const n = x.size();
    if (n == 0) return;
    p[0] = constant<T>(1);  // prefixes first: p_j = x_0 ... x_{j-1}
    if (n > 1) p[1] = x[0];
    for (std::size_t j = 2; j < n; ++j) p[j] = p[j - 1] * x[j - 1];
    if (n == 1) return;
    T acc = x[n - 1];  // then each times its suffix x_{j+1} ... x_{n-1} (p_0's prefix is empty)
    for (std::size_t j = n - 1; j-- > 1;) {
      p[j] = p[j] * acc;
      acc = acc * x[j];
    }
    p[0] = acc;
  }
};

/// max(t, axis) / min(t, axis), torch.max(dim): the whole gradient goes to the element whose
/// value is returned, the first of tied extremes (or the first NaN), as torch sends it to the
/// index it returns.
template <bool Max>
struct first_extreme_reduction {
  static constexpr char const* name = Max ? "max" : "min";
  /// op: the function called, for the message.
  template <class T>
  static std::size_t position(std::span<T const> x, char const* op = name) {
    if (x.empty()) throw shape_error(std::string("adx: ") + op + ": reduction over an empty tensor or axis");
    std::size_t best = 0;
    if (std::isnan(primal_of(x[0]))) return 0;
    for (std::size_t j = 1; j < x.size(); ++j) {
      auto const a = primal_of(x[j]);
      if (std::isnan(a)) return j;
      if (Max ? a > primal_of(x[best]) : a < primal_of(x[best])) best = j;
    }
    return best;
  }
  template <class T>
  static T value(std::span<T const> x) {
    return x[position(x)];
  }
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    std::size_t const at = position(x);
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(j == at ? 1.0 : 0.0);
  }
};

/// amax / amin, max(t) / min(t): the value of first_extreme_reduction (NaN propagates), but the
/// gradient is shared evenly between the tied extremes (torch's max() and amax/amin).
/// Over AD numbers (a nested mode), tied extremes make the value the same reduction of the line
/// one level down, so that the value's own derivatives share the ties as the partials do (see
/// max_rule in rules/piecewise.hpp). Amax: named amax / amin (the messages name the function
/// called), otherwise max / min.
template <bool Max, bool Amax = true>
struct extreme_reduction : first_extreme_reduction<Max> {
  static constexpr char const* name = Amax ? (Max ? "amax" : "amin") : (Max ? "max" : "min");
  template <class T>
  static std::size_t ties(std::span<T const> x, innermost_t<T> m) {
    std::size_t t = 0;
    for (auto const& e : x) t += primal_of(e) == m;
    return t;
  }
  template <class T>
  static T value(std::span<T const> x) {
    T const& v = x[first_extreme_reduction<Max>::position(x, name)];
    if constexpr (ad_scalar<T>) {
      // NaN: every partial is 0, so the value is a NaN without derivatives (not the NaN element)
      if (std::isnan(primal_of(v))) return constant<T>(primal_of(v));
      if (ties(x, primal_of(v)) > 1) return Max ? amax(line_tensor(x)) : amin(line_tensor(x));
    }
    return v;
  }
  template <class T>
  static void partials(std::span<T const> x, T const& v, T* p) {
    auto const m = primal_of(v);
    std::size_t const t = ties(x, m);  // 0 when the value is NaN: every partial is 0
    double const share = t ? 1.0 / static_cast<double>(t) : 0.0;
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(primal_of(x[j]) == m ? share : 0.0);
  }
};

struct logsumexp_reduction {
  static constexpr char const* name = "logsumexp";
  /// The largest finite-or-infinite primal (NaN elements are skipped; 0 if it is not finite).
  /// Four running maxima: one chain would wait on each comparison (a maximum is exact, so the
  /// order cannot change the result; std::max keeps the first of equal values, and -0 or +0 as
  /// the shift gives the same exp(x - m) and log(s) + m).
  template <class T>
  static double shift(std::span<T const> x) {
    constexpr double lowest = -std::numeric_limits<double>::infinity();
    double m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
    std::size_t j = 0;
    for (; j + 4 <= x.size(); j += 4) {
      m0 = std::max(m0, static_cast<double>(primal_of(x[j])));
      m1 = std::max(m1, static_cast<double>(primal_of(x[j + 1])));
      m2 = std::max(m2, static_cast<double>(primal_of(x[j + 2])));
      m3 = std::max(m3, static_cast<double>(primal_of(x[j + 3])));
    }
    for (; j < x.size(); ++j) m0 = std::max(m0, static_cast<double>(primal_of(x[j])));
    double const m = std::max(std::max(m0, m1), std::max(m2, m3));
    return std::isfinite(m) ? m : 0.0;
  }
  template <class T>
  static T value(std::span<T const> x) {
    using std::exp;
    using std::log;
    double const m = shift(x);
    T s = constant<T>(0);
    for (auto const& v : x) s = s + exp(v - m);
    return to_value<T>(log(s) + m);
  }
  template <class T>
  static void partials(std::span<T const> x, T const& v, T* p) {  // softmax
    using std::exp;
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = to_value<T>(exp(x[j] - v));
  }
  /// The value and the softmax partials from one exp per element.
  template <class T>
  static T value_and_partials(std::span<T const> x, T* p) {
    using std::exp;
    using std::log;
    double const m = shift(x);
    T s = constant<T>(0);
    for (std::size_t j = 0; j < x.size(); ++j) {
      p[j] = to_value<T>(exp(x[j] - m));
      s = s + p[j];
    }
    T const inv = to_value<T>(1.0 / s);
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = to_value<T>(p[j] * inv);
    return to_value<T>(log(s) + m);
  }
};

struct norm_reduction {
  static constexpr char const* name = "norm";
  template <class T>
  static T value(std::span<T const> x) {
    using std::sqrt;
    if constexpr (ad_scalar<T>) {
      // Over AD numbers the squares are of x scaled by a power of two near its largest magnitude,
      // and the root scaled back: the same value wherever the plain sum of squares neither
      // underflows nor overflows (powers of two scale exactly), and the inner levels'
      // derivatives (1 / (2 sqrt s), then the higher powers of 1 / ||x||) stay finite for tiny x:
      // at ||x|| = 1e-160 the plain sum is subnormal and reverse-over-reverse gave -inf.
      using P = std::remove_cvref_t<decltype(primal_of(x[0]))>;
      // where the plain sum of squares underflows to 0 (or is 0) or overflows, the norm is what
      // it is over plain numbers at every level (0 with the zero subgradient; inf with partials
      // x / inf): the norm one level down (at 0, sqrt'(0) would also make the inner level's
      // derivatives NaN)
      P plain = 0, big = 0;
      for (auto const& v : x) {
        P const p = primal_of(v);
        plain += p * p;
        big = std::max(big, std::abs(p));
      }
      if (plain == 0 || std::isinf(plain)) return norm(line_tensor(x));
      int e = 0;
      if (std::isfinite(big) && big != 0) (void)std::frexp(big, &e);
      // 2^-e and 2^e finite in P, with room below for the smallest subnormals' squares (double:
      // |e| <= 1000, float: 104)
      int const limit = std::numeric_limits<P>::max_exponent - 24;
      e = std::clamp(e, -limit, limit);
      P const down = std::ldexp(P(1), -e), up = std::ldexp(P(1), e);
      T s = constant<T>(0);
      for (auto const& v : x) {
        T const y = to_value<T>(v * down);
        s = s + y * y;
      }
      return to_value<T>(sqrt(s) * up);
    } else {
      T s = constant<T>(0);
      for (auto const& v : x) s = s + v * v;
      return to_value<T>(sqrt(s));
    }
  }
  /// x / ||x||, and zero at ||x|| = 0 (torch's subgradient).
  template <class T>
  static void partials(std::span<T const> x, T const& v, T* p) {
    bool const zero = primal_of(v) == 0;
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = zero ? constant<T>(0) : to_value<T>(x[j] / v);
  }
};

}  // namespace adx::detail
