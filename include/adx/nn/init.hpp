// SPDX-License-Identifier: MIT
// adx: parameter initialisers, as torch.nn.init has them: uniform, normal, Xavier (Glorot) and
// Kaiming (He), with torch's fans and gains. Each takes its seed explicitly and draws from a
// 64-bit Mersenne Twister through adx's own transforms (53 random bits per uniform number, the
// Box-Muller transform for normal ones), not the standard distributions, which differ between
// standard libraries: a seed gives the same tensor wherever the C library's log, sqrt, sin and
// cos round alike. The numbers are not torch's (its generator is another one); their
// distribution is.
//
//     nn::dense<double> layer(784, 128);
//     layer.weight.assign(nn::init::kaiming_normal<double>(layer.weight.shape(), /*seed=*/7));
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>

#include "adx/core/error.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {
/// Uniform numbers in [0, 1) with 53 random bits each, from a seeded mt19937_64.
class unit_source {
 public:
  explicit unit_source(std::uint64_t seed) : gen_(seed) {}
  double operator()() { return static_cast<double>(gen_() >> 11) * 0x1p-53; }

 private:
  std::mt19937_64 gen_;
};
}  // namespace detail

namespace nn::init {

/// A tensor of shape sh uniform in [a, b) from seed (torch.nn.init.uniform_).
template <class T>
tensor<T> uniform(shape const& sh, std::uint64_t seed, double a = 0, double b = 1) {
  if (!(a <= b)) throw value_error("adx: nn::init::uniform: a must not exceed b");
  adx::detail::unit_source u(seed);
  tensor<T> t(sh);
  for (T& v : std::span<T>(t.data(), t.size())) v = static_cast<T>(a + (b - a) * u());
  return t;
}

/// A tensor of shape sh normal with the given mean and standard deviation, from seed
/// (torch.nn.init.normal_).
template <class T>
tensor<T> normal(shape const& sh, std::uint64_t seed, double mean = 0, double std = 1) {
  if (!(std >= 0)) throw value_error("adx: nn::init::normal: std must be >= 0");
  adx::detail::unit_source u(seed);
  tensor<T> t(sh);
  T* p = t.data();
  for (std::size_t i = 0; i < t.size(); i += 2) {  // Box-Muller: two normal numbers from two uniform ones
    double const r = std::sqrt(-2 * std::log(1 - u())), angle = 2 * std::numbers::pi * u();  // 1 - u in (0, 1]
    p[i] = static_cast<T>(mean + std * r * std::cos(angle));
    if (i + 1 < t.size()) p[i + 1] = static_cast<T>(mean + std * r * std::sin(angle));
  }
  return t;
}

/// A weight's fans: fan_in = sh[1] * r and fan_out = sh[0] * r, r the product of the dimensions
/// after the second (a convolution's kernel size; 1 for a [out, in] matrix), as torch computes
/// them. value_error for fewer than 2 dimensions.
struct fans {
  double in;   ///< fan_in
  double out;  ///< fan_out
};
inline fans fans_of(shape const& sh) {
  if (sh.rank() < 2)
    throw value_error("adx: nn::init: fan in and fan out cannot be computed for a tensor of fewer than 2 dimensions");
  double r = 1;
  for (std::size_t k = 2; k < sh.rank(); ++k) r *= static_cast<double>(sh[k]);
  return {static_cast<double>(sh[1]) * r, static_cast<double>(sh[0]) * r};
}

/// The nonlinearities torch.nn.init.calculate_gain knows.
enum class nonlinearity { linear, conv, sigmoid, tanh, relu, leaky_relu, selu };

/// The recommended gain for a nonlinearity (torch.nn.init.calculate_gain): 1 for linear,
/// convolution and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for
/// leaky_relu with negative slope `slope`, 3/4 for selu.
inline double calculate_gain(nonlinearity f, double slope = 0.01) {
  switch (f) {
    case nonlinearity::tanh:
      return 5.0 / 3;
    case nonlinearity::relu:
      return std::sqrt(2.0);
    case nonlinearity::leaky_relu:
      return std::sqrt(2.0 / (1 + slope * slope));
    case nonlinearity::selu:
      return 3.0 / 4;
    default:
      return 1;
  }
}

/// Xavier (Glorot) uniform: U(-bound, bound) with bound = gain sqrt(6 / (fan_in + fan_out))
/// (torch.nn.init.xavier_uniform_).
template <class T>
tensor<T> xavier_uniform(shape const& sh, std::uint64_t seed, double gain = 1) {
  fans const f = fans_of(sh);
  double const bound = gain * std::sqrt(6 / (f.in + f.out));
  return uniform<T>(sh, seed, -bound, bound);
}

/// Xavier (Glorot) normal: N(0, std^2) with std = gain sqrt(2 / (fan_in + fan_out))
/// (torch.nn.init.xavier_normal_).
template <class T>
tensor<T> xavier_normal(shape const& sh, std::uint64_t seed, double gain = 1) {
  fans const f = fans_of(sh);
  return normal<T>(sh, seed, 0, gain * std::sqrt(2 / (f.in + f.out)));
}

/// Kaiming's options, torch's defaults: the negative slope a of the leaky_relu after the layer,
/// the fan that keeps its variance (fan_in: the forward pass, fan_out: the backward pass), and
/// the nonlinearity whose gain is used.
struct kaiming_options {
  double a = 0;                               ///< the negative slope (leaky_relu)
  bool fan_out = false;                       ///< use fan_out instead of fan_in
  nonlinearity f = nonlinearity::leaky_relu;  ///< the nonlinearity after the layer
};

/// Kaiming (He) uniform: U(-bound, bound) with bound = gain sqrt(3 / fan)
/// (torch.nn.init.kaiming_uniform_). torch's nn.Linear initialises its weight with a = sqrt(5),
/// bound 1/sqrt(fan_in), as nn::dense does.
template <class T>
tensor<T> kaiming_uniform(shape const& sh, std::uint64_t seed, kaiming_options o = {}) {
  fans const f = fans_of(sh);
  double const bound = calculate_gain(o.f, o.a) * std::sqrt(3 / (o.fan_out ? f.out : f.in));
  return uniform<T>(sh, seed, -bound, bound);
}

/// Kaiming (He) normal: N(0, std^2) with std = gain / sqrt(fan) (torch.nn.init.kaiming_normal_).
template <class T>
tensor<T> kaiming_normal(shape const& sh, std::uint64_t seed, kaiming_options o = {}) {
  fans const f = fans_of(sh);
  return normal<T>(sh, seed, 0, calculate_gain(o.f, o.a) / std::sqrt(o.fan_out ? f.out : f.in));
}

}  // namespace nn::init
}  // namespace adx
