// SPDX-License-Identifier: MIT
// adx: making tensors: zeros, ones, full, arange, linspace, eye and the seeded random ones
// (the same numbers on every platform).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <type_traits>

#include "adx/tensor/tensor.hpp"

namespace adx {

/// A tensor of shape sh whose every element is S(v). Over var elements and a number v each
/// element is an independent variable of its own, the tensor one block of them on the current
/// tape (as torch.full(..., requires_grad=True) makes, and as tensor<var<T>>(full<T>(sh, v))
/// is); a var v is copied into every element, as tensor<S>(sh, v) does: one shared variable.
/// A constant tensor is tensor<S>(sh, S::constant(v)) or, simpler, a tensor of numbers, which
/// mixes with tensors of vars in every operation.
template <class S = double, class V>
tensor<S> full(shape const& sh, V const& v) {
  if constexpr (is_reverse_v<S> && std::is_arithmetic_v<V>) {
    return tensor<S>(full<value_type_t<S>>(sh, v));
  } else {
    tensor<S> t(sh);
    S* p = t.data();
    for (std::size_t i = 0; i < t.size(); ++i) p[i] = S(v);
    return t;
  }
}
/// full(sh, 0): over var elements, independent variables (torch.zeros(..., requires_grad=True)).
template <class S = double>
tensor<S> zeros(shape const& sh) {
  return full<S>(sh, 0.0);
}
/// full(sh, 1): over var elements, independent variables (torch.ones(..., requires_grad=True)).
template <class S = double>
tensor<S> ones(shape const& sh) {
  return full<S>(sh, 1.0);
}
/// start, start + step, ... below stop (rank 1).
template <class S = double>
tensor<S> arange(double start, double stop, double step = 1.0) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw shape_error("adx: arange: step must be non-zero and the bounds finite");
  double const count = std::ceil((stop - start) / step);
  std::size_t const n = count > 0 ? static_cast<std::size_t>(count) : 0;
  tensor<S> t(shape{n});
  S* p = t.data();
  for (std::size_t i = 0; i < n; ++i) p[i] = S(start + static_cast<double>(i) * step);
  return t;
}
template <class S = double>
tensor<S> arange(std::size_t n) {
  return arange<S>(0.0, static_cast<double>(n));
}
namespace detail {
/// A tensor of draws of dist from a std::mt19937_64 seeded with `seed`, in row-major order.
template <class S, class Dist>
tensor<S> draws(shape const& sh, std::uint64_t seed, Dist dist) {
  std::mt19937_64 gen(seed);
  tensor<S> t(sh);
  S* p = t.data();
  for (std::size_t i = 0; i < t.size(); ++i) p[i] = S(dist(gen));
  return t;
}
}  // namespace detail

/// Normal(mean, stddev) draws from a std::mt19937_64 seeded with `seed` (reproducible).
template <class S = double>
tensor<S> random_normal(shape const& sh, std::uint64_t seed, double mean = 0.0, double stddev = 1.0) {
  return detail::draws<S>(sh, seed, std::normal_distribution<double>(mean, stddev));
}
/// Uniform [lo, hi) draws from a std::mt19937_64 seeded with `seed` (reproducible).
template <class S = double>
tensor<S> random_uniform(shape const& sh, std::uint64_t seed, double lo = 0.0, double hi = 1.0) {
  return detail::draws<S>(sh, seed, std::uniform_real_distribution<double>(lo, hi));
}

}  // namespace adx
