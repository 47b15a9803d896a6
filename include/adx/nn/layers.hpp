// SPDX-License-Identifier: MIT
// adx: a few building blocks for small networks, written with the public tensor operations so
// that they differentiate in every mode: a dense (fully connected) layer (the losses are in
// nn/loss.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "adx/api/parameter.hpp"
#include "adx/nn/init.hpp"
#include "adx/nn/loss.hpp"
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

}  // namespace adx::nn
