// SPDX-License-Identifier: MIT
// adx: a few building blocks for small networks, written with the public tensor operations so
// that they differentiate in every mode: a dense (fully connected) layer and a 2-D convolution
// (the losses are in nn/loss.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "adx/api/parameter.hpp"
#include "adx/nn/init.hpp"
#include "adx/nn/loss.hpp"
#include "adx/tensor/conv.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/linalg.hpp"
#include "adx/tensor/reduce.hpp"

namespace adx::nn {

/// Values uniform in [-bound, bound) from a seeded mt19937_64, the same on every platform (the
/// standard distributions are not specified bit for bit, so they are not used here).
template <class T>
tensor<T> uniform_init(shape const& sh, double bound, std::uint64_t seed) {
  adx::detail::unit_source u(seed);
  tensor<T> t(sh);
  T* p = t.data();
  for (std::size_t i = 0; i < t.size(); ++i) p[i] = static_cast<T>((2 * u() - 1) * bound);
  return t;
}

/// A fully connected layer, y = x W^T + b, as MindSpore's nn.Dense and torch's nn.Linear:
/// weight of shape [out, in], bias of shape [out], x of shape [..., in] (rank 1 or 2).
/// Initialised deterministically: uniform in +-1/sqrt(in) from `seed` (bias from seed + 1).
/// The parameters are named "<name>.weight" and "<name>.bias".
///
///     nn::dense<double> layer(784, 10, /*seed=*/1);
///     auto logits = layer(x);                      // x: [batch, 784] -> [batch, 10]
///     auto grads = grad(loss, none, layer.trainable_params())(x, y);   // {dW, db}
template <class T = double>
class dense {
 public:
  /// A layer from `in` features to `out`, its parameters drawn from `seed`; value_error if in
  /// or out is 0. Without bias (has_bias false) the bias is empty and unused.
  dense(std::size_t in, std::size_t out, std::uint64_t seed = 0, bool has_bias = true,
        std::string const& name = "dense")
      : weight(uniform_init<T>(shape{out, in}, 1 / std::sqrt(static_cast<double>(in)), seed), name + ".weight"),
        bias(has_bias ? uniform_init<T>(shape{out}, 1 / std::sqrt(static_cast<double>(in)), seed + 1)
                      : tensor<T>(shape{0}),
             name + ".bias"),
        has_bias_(has_bias) {
    if (in == 0 || out == 0) throw value_error("adx: nn::dense: in and out must be positive");
  }

  /// x W^T + b for x of shape [in] or [batch, in] (a tensor of numbers or AD scalars, or an
  /// expression); the result has shape [out] or [batch, out].
  template <tensor_operand X>
  auto operator()(X const& x) const {
    auto const y = matmul(x, weight.transpose());
    using Y = std::remove_cvref_t<decltype(y)>;
    if (has_bias_) return Y(y + bias);
    return y;
  }

  /// {weight, bias} ({weight} without bias), for grad(..., weights) and optimisers.
  parameter_list<T> trainable_params() {
    if (has_bias_) return {weight, bias};
    return {weight};
  }

  parameter<T> weight;  ///< shape [out, in], named "<name>.weight"
  parameter<T> bias;    ///< shape [out] (or [0] without bias), named "<name>.bias"

 private:
  bool has_bias_;
};

/// A 2-D convolution layer, as torch's nn.Conv2d: weight [out, in / groups, kh, kw], bias [out],
/// applied to x [N, in, H, W] by adx::conv2d with the options given (stride, padding, dilation,
/// groups). Initialised as torch initialises it, deterministically: weight and bias uniform in
/// +-1/sqrt(fan_in), fan_in = in / groups * kh * kw, from `seed` (the bias from seed + 1).
/// The parameters are named "<name>.weight" and "<name>.bias".
template <class T = double>
class conv2d {
 public:
  /// A layer from `in` channels to `out`, with a kernel of kernel.h x kernel.w (one number: square); value_error if
  /// a size is 0 or the channels do not divide into the groups.
  conv2d(std::size_t in, std::size_t out, size2 kernel, std::uint64_t seed = 0, conv2d_options options = {},
         bool has_bias = true, std::string const& name = "conv2d")
      : weight(uniform_init<T>(shape{out, in / std::max<std::size_t>(options.groups, 1), kernel[0], kernel[1]},
                               bound(in, kernel, options), seed),
               name + ".weight"),
        bias(has_bias ? uniform_init<T>(shape{out}, bound(in, kernel, options), seed + 1) : tensor<T>(shape{0}),
             name + ".bias"),
        options_(options),
        has_bias_(has_bias) {
    if (in == 0 || out == 0 || kernel[0] == 0 || kernel[1] == 0)
      throw value_error("adx: nn::conv2d: the channels and the kernel must be positive");
    if (options.groups == 0 || in % options.groups != 0 || out % options.groups != 0)
      throw value_error("adx: nn::conv2d: the channels (" + std::to_string(in) + " in, " + std::to_string(out) +
                        " out) do not divide into " + std::to_string(options.groups) + " groups");
  }

  /// The convolution of x [N, in, H, W] (a tensor of numbers or of AD scalars): [N, out, OH, OW].
  template <class S>
  auto operator()(tensor<S> const& x) const {
    if (has_bias_) return adx::conv2d(x, weight, bias, options_);
    return adx::conv2d(x, weight, options_);
  }
  /// The convolution of an expression, evaluated first.
  template <tensor_operand X>
  requires(!tensor_type<X>) auto operator()(X const& x) const { return (*this)(eval(x)); }

  /// {weight, bias} ({weight} without bias), for grad(..., weights) and optimisers.
  parameter_list<T> trainable_params() {
    if (has_bias_) return {weight, bias};
    return {weight};
  }

  parameter<T> weight;  ///< shape [out, in / groups, kh, kw], named "<name>.weight"
  parameter<T> bias;    ///< shape [out] (or [0] without bias), named "<name>.bias"

 private:
  static double bound(std::size_t in, size2 k, conv2d_options const& o) {
    double const fan_in = static_cast<double>(in / std::max<std::size_t>(o.groups, 1) * k[0] * k[1]);
    return fan_in > 0 ? 1 / std::sqrt(fan_in) : 0;
  }
  conv2d_options options_;
  bool has_bias_;
};

}  // namespace adx::nn
