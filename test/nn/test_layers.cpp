// nn/layers.hpp: the dense layer (its output, its gradients with respect to the input and the
// parameters in reverse, forward and nested modes, against the closed forms of a linear map), the
// losses against hand-written values, and the deterministic initialiser.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
// primals: a tensor's numbers. The layer's results are variables (its parameters are), and so
// are the gradients of a function that captures it (transforms lift above what it captures).
using adx_test::primals;

namespace {
/// y = x W^T + b by hand, for x of shape [n, in].
tensor<double> dense_by_hand(tensor<double> const& x, tensor<double> const& w, tensor<double> const& b) {
  std::size_t const n = x.shape()[0], in = x.shape()[1], out = w.shape()[0];
  tensor<double> y = zeros<double>(shape{n, out});
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t o = 0; o < out; ++o) {
      double s = b.size() ? b(o) : 0.0;
      for (std::size_t i = 0; i < in; ++i) s += x(r, i) * w(o, i);
      y(r, o) = s;
    }
  return y;
}
}  // namespace

TEST_CASE("nn::dense: x W^T + b, and the gradients of sum(y^2) in its parameters and its input") {
  nn::dense<double> layer(3, 2, /*seed=*/5);
  tensor<double> const x{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.5}};
  tensor<double> const w = layer.weight.values(), b = layer.bias.values();
  tensor<double> const y = dense_by_hand(x, w, b);
  tensor<double> const got = primals(layer(x));
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t o = 0; o < 2; ++o) CHECK(close(got(r, o), y(r, o)));

  auto const loss = [&](auto const& input) { return sum(square(layer(input))); };
  // the parameters (MindSpore's weights): dL/dW[o, i] = sum_r 2 y[r, o] x[r, i], dL/db[o] = sum_r 2 y[r, o]
  std::vector<tensor<double>> const g = grad(loss, none, layer.trainable_params())(x);
  REQUIRE(g.size() == 2);
  for (std::size_t o = 0; o < 2; ++o) {
    double db = 0;
    for (std::size_t r = 0; r < 2; ++r) db += 2 * y(r, o);
    CHECK(close(g[1](o), db));
    for (std::size_t i = 0; i < 3; ++i) {
      double dw = 0;
      for (std::size_t r = 0; r < 2; ++r) dw += 2 * y(r, o) * x(r, i);
      CHECK(close(g[0](o, i), dw));
    }
  }
  // the input, in reverse mode (grad) and forward mode (jvp along e_(r, i)): sum_o 2 y[r, o] W[o, i]
  tensor<double> const gx = primals(grad(loss)(x));
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t i = 0; i < 3; ++i) {
      double const want = 2 * (y(r, 0) * w(0, i) + y(r, 1) * w(1, i));
      CHECK(close(gx(r, i), want));
      tensor<double> e = zeros<double>(shape{2, 3});
      e(r, i) = 1;
      CHECK(close(primal(functional::jvp(loss, x, e).second), want));
    }
}

TEST_CASE("nn::dense: the Hessian of sum(y^2) in a rank-1 input is 2 W^T W, forward over reverse") {
  nn::dense<double> layer(3, 4, /*seed=*/9);
  tensor<double> const w = layer.weight.values();
  auto const loss = [&](auto const& input) { return sum(square(layer(input))); };
  tensor<double> const h = primals(functional::hessian(loss, tensor<double>{0.3, -0.7, 1.1}));
  REQUIRE(h.shape() == shape{3, 3});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      double want = 0;
      for (std::size_t o = 0; o < 4; ++o) want += 2 * w(o, i) * w(o, j);
      CHECK(close(h(i, j), want));
    }
  // and reverse over reverse: the gradient of a coordinate of the gradient
  tensor<double> const d0 =
      primals(grad([&](auto const& input) { return grad(loss)(input)(0); })(tensor<double>{0.3, -0.7, 1.1}));
  for (std::size_t j = 0; j < 3; ++j) CHECK(close(d0(j), h(0, j)));
}

TEST_CASE("nn::dense: without bias, and its argument errors") {
  nn::dense<double> layer(2, 2, /*seed=*/3, /*has_bias=*/false, "plain");
  CHECK(layer.bias.size() == 0);
  CHECK(layer.trainable_params().size() == 1);
  CHECK(layer.weight.name() == "plain.weight");
  tensor<double> const x{{1.0, 2.0}};
  tensor<double> const y = dense_by_hand(x, layer.weight.values(), tensor<double>(shape{0}));
  tensor<double> const got = primals(layer(x));
  CHECK(close(got(0, 0), y(0, 0)));
  CHECK(close(got(0, 1), y(0, 1)));
  CHECK_THROWS_AS(nn::dense<double>(0, 2), value_error);
  CHECK_THROWS_AS(layer(tensor<double>{{1.0, 2.0, 3.0}}), shape_error);  // three features for two
}

TEST_CASE("nn: softmax cross-entropy and mse against hand-written values") {
  tensor<double> const logits{{1.0, 2.0, 0.5}, {0.1, -1.0, 2.0}};
  tensor<double> const target{{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}};
  double want = 0;
  for (std::size_t n = 0; n < 2; ++n) {
    double lse = 0;
    for (std::size_t c = 0; c < 3; ++c) lse += std::exp(logits(n, c));
    lse = std::log(lse);
    for (std::size_t c = 0; c < 3; ++c) want -= target(n, c) * (logits(n, c) - lse) / 2;
  }
  CHECK(close(nn::softmax_cross_entropy(logits, target), want));
  auto const g = grad([&](auto const& l) { return nn::softmax_cross_entropy(l, target); })(logits);
  for (std::size_t n = 0; n < 2; ++n) {
    double s = 0;
    for (std::size_t c = 0; c < 3; ++c) s += std::exp(logits(n, c));
    for (std::size_t c = 0; c < 3; ++c) CHECK(close(g(n, c), (std::exp(logits(n, c)) / s - target(n, c)) / 2));
  }
  CHECK(close(nn::mse_loss(tensor<double>{1.0, 2.0}, tensor<double>{0.0, 4.0}), 2.5));
  // the deterministic initialiser: the same numbers on every platform, inside +-1/sqrt(in)
  nn::dense<double> d(4, 3, 11);
  for (double v : d.weight.value()) CHECK(std::abs(v) < 0.5);
  CHECK(d.weight.value()[0] == nn::dense<double>(4, 3, 11).weight.value()[0]);
  CHECK(d.weight.value()[0] != nn::dense<double>(4, 3, 12).weight.value()[0]);
}
