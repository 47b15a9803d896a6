// train_bench's problems: the gradient of convolutional networks (forward and backward) and one
// optimiser step over many parameters. Every implementation reads the same data from here.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace adx_bench::train {

/// One convolution layer: out channels, a square kernel, padding; tanh between layers.
struct conv_layer {
  std::size_t out, k, pad;
};

/// L = sum(R * y), y the last layer's output, x -> conv (+ bias) -> tanh -> conv (+ bias) ...
/// The gradient is in the layers' weights and biases, in order: w1, b1, w2, b2, ...
struct conv_problem {
  std::string name;
  std::size_t batch, channels, size;  // x: [batch, channels, size, size]
  std::vector<conv_layer> layers;
  std::vector<double> x, params, r;  // the input, the parameters, the output weights R

  std::size_t out_size(std::size_t layer) const {  // the spatial size after layer `layer`
    std::size_t s = size;
    for (std::size_t l = 0; l <= layer; ++l) s = s + 2 * layers[l].pad - layers[l].k + 1;
    return s;
  }
  std::size_t in_channels(std::size_t layer) const { return layer == 0 ? channels : layers[layer - 1].out; }
  std::size_t weight_size(std::size_t l) const { return layers[l].out * in_channels(l) * layers[l].k * layers[l].k; }
  /// Where layer l's weight (and, after it, its bias) starts in params.
  std::size_t offset(std::size_t l) const {
    std::size_t o = 0;
    for (std::size_t i = 0; i < l; ++i) o += weight_size(i) + layers[i].out;
    return o;
  }
};

inline double wave(std::size_t i, double a) { return std::sin(a * static_cast<double>(i) + 0.3); }

inline conv_problem make_conv_problem(std::string name, std::size_t batch, std::size_t channels, std::size_t size,
                                      std::vector<conv_layer> layers) {
  conv_problem p{std::move(name), batch, channels, size, std::move(layers), {}, {}, {}};
  p.x.resize(batch * channels * size * size);
  for (std::size_t i = 0; i < p.x.size(); ++i) p.x[i] = wave(i, 0.37);
  std::size_t n = 0;
  for (std::size_t l = 0; l < p.layers.size(); ++l) n += p.weight_size(l) + p.layers[l].out;
  p.params.resize(n);
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    double const bound = 1 / std::sqrt(static_cast<double>(p.in_channels(l) * p.layers[l].k * p.layers[l].k));
    for (std::size_t i = 0; i < p.weight_size(l) + p.layers[l].out; ++i)
      p.params[p.offset(l) + i] = bound * wave(i + 101 * l, 0.71);
  }
  std::size_t const last = p.layers.size() - 1, s = p.out_size(last);
  p.r.resize(batch * p.layers[last].out * s * s);
  for (std::size_t i = 0; i < p.r.size(); ++i) p.r[i] = wave(i, 0.13) / static_cast<double>(batch);
  return p;
}

/// A LeNet-sized network (batch 32, 28x28, 6 and 16 channels of 5x5) and a wide layer (batch 64,
/// 32x32, 64 channels of 3x3, padding 1).
inline std::vector<conv_problem> const& conv_problems() {
  static std::vector<conv_problem> const p{
      make_conv_problem("conv_lenet", 32, 1, 28, {{6, 5, 0}, {16, 5, 0}}),
      make_conv_problem("conv_wide", 64, 64, 32, {{64, 3, 1}}),
  };
  return p;
}

/// One Adam step (torch's defaults, weight decay 0.01) over n parameters with a fixed gradient.
struct adam_problem {
  std::size_t n;
  std::vector<double> p0, g;
};
inline adam_problem const& adam_instance() {
  static adam_problem const a = [] {
    adam_problem q{1u << 20, {}, {}};
    q.p0.resize(q.n);
    q.g.resize(q.n);
    for (std::size_t i = 0; i < q.n; ++i) q.p0[i] = wave(i, 0.11), q.g[i] = wave(i, 0.29);
    return q;
  }();
  return a;
}

}  // namespace adx_bench::train
