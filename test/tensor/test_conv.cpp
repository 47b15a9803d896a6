// tensor/conv.hpp against PyTorch 1.13 (test/reference/conv.json, gen_conv.py): conv2d (groups,
// stride, padding, dilation, bias), conv1d, max_pool2d and avg_pool2d. For
// L = sum(w_out * tanh(op(x, weight, bias))): the output, the gradients in x, the weight and the
// bias (reverse), and the Hessian-vector products in x and in the weight (forward over
// reverse); then nn::conv2d, a small CNN's second derivative, and the errors.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
using adx_test::primals;
using adx_test::tensor_of;

namespace {

nlohmann::json const& cases() {
  static nlohmann::json const j = adx_test::read_reference("conv.json");
  return j;
}

size2 pair_of(nlohmann::json const& v) { return {v[0].get<std::size_t>(), v[1].get<std::size_t>()}; }

/// The case's operation on x, the weight w and the bias b (tensors of any element types).
template <class X, class W, class B>
auto apply(nlohmann::json const& c, X const& x, W const& w, B const& b) {
  std::string const op = c["op"];
  auto const& o = c["options"];
  bool const bias = c.contains("bias");
  using R = decltype(eval(conv2d(x, w) * 1.0));
  if (op == "conv2d") {
    conv2d_options const co{pair_of(o["stride"]), pair_of(o["padding"]), pair_of(o["dilation"]),
                            o["groups"].get<std::size_t>()};
    return bias ? R(conv2d(x, w, b, co)) : R(conv2d(x, w, co));
  }
  REQUIRE(op == "conv1d");
  conv1d_options const co{o["stride"].get<std::size_t>(), o["padding"].get<std::size_t>(),
                          o["dilation"].get<std::size_t>(), o["groups"].get<std::size_t>()};
  return bias ? R(conv1d(x, w, b, co)) : R(conv1d(x, w, co));
}

template <class X>
auto pool(nlohmann::json const& c, X const& x) {
  auto const& o = c["options"];
  size2 const k = pair_of(c["kernel"]);
  if (c["op"] == "max_pool2d")
    return max_pool2d(
        x, k, {.stride = pair_of(o["stride"]), .padding = pair_of(o["padding"]), .dilation = pair_of(o["dilation"])});
  return avg_pool2d(x, k,
                    {.stride = pair_of(o["stride"]),
                     .padding = pair_of(o["padding"]),
                     .count_include_pad = o["count_include_pad"].get<bool>()});
}

void check_close(tensor<double> const& got, nlohmann::json const& want, double tol = 1e-13) {
  adx_test::check_tensor(got, want, tol, tol);
}

}  // namespace

TEST_CASE("conv1d and conv2d: outputs, gradients in the input, weight and bias, and H v, against torch") {
  for (auto const& item : cases()["cases"].items()) {
    std::string const name = item.key();
    auto const& c = item.value();
    if (!c.contains("weight")) continue;
    CAPTURE(name);
    tensor<double> const x = tensor_of(c["x"]), w = tensor_of(c["weight"]), w_out = tensor_of(c["w_out"]);
    tensor<double> const b = c.contains("bias") ? tensor_of(c["bias"]) : tensor<double>(shape{w.shape()[0]}, 0.0);
    check_close(primals(apply(c, x, w, b)), c["out"]);
    auto const loss = [&](auto const& xx, auto const& ww, auto const& bb) {
      return sum(w_out * tanh(apply(c, xx, ww, bb)));
    };
    auto const [gx, gw, gb] = grad(loss, positions<0, 1, 2>)(x, w, b);
    check_close(primals(gx), c["grad_x"]);
    check_close(primals(gw), c["grad_weight"]);
    if (c.contains("bias")) check_close(primals(gb), c["grad_bias"]);
    // second order: in the input with the weight fixed, and in the weight with the input fixed
    check_close(primals(functional::hvp([&](auto const& xx) { return loss(xx, w, b); }, x, tensor_of(c["v"])).second),
                c["hvp_x"], 1e-12);
    check_close(primals(functional::hvp([&](auto const& ww) { return loss(x, ww, b); }, w, tensor_of(c["vw"])).second),
                c["hvp_weight"], 1e-12);
  }
}

TEST_CASE("max_pool2d and avg_pool2d: outputs, gradients and H v against torch") {
  for (auto const& item : cases()["cases"].items()) {
    std::string const name = item.key();
    auto const& c = item.value();
    if (c.contains("weight")) continue;
    CAPTURE(name);
    tensor<double> const x = tensor_of(c["x"]), w_out = tensor_of(c["w_out"]);
    check_close(primals(pool(c, x)), c["out"]);
    auto const loss = [&](auto const& xx) { return sum(w_out * tanh(pool(c, xx))); };
    check_close(primals(grad(loss)(x)), c["grad_x"]);
    check_close(primals(functional::hvp(loss, x, tensor_of(c["v"])).second), c["hvp_x"], 1e-12);
    // reverse over reverse gives the same H v
    tensor<double> const v = tensor_of(c["v"]);
    check_close(primals(grad([&](auto const& xx) { return sum(grad(loss)(xx) * v); })(x)), c["hvp_x"], 1e-12);
  }
}

TEST_CASE("nn::conv2d: torch's shapes and initial bound, and a CNN's gradient penalty is differentiable") {
  nn::conv2d<double> layer(2, 4, {3, 3}, /*seed=*/3, {.padding = {1, 1}});
  CHECK(layer.weight.shape() == shape{4, 2, 3, 3});
  CHECK(layer.bias.shape() == shape{4});
  double const bound = 1 / std::sqrt(2.0 * 9);  // kaiming_uniform(a = sqrt 5): 1 / sqrt(fan_in)
  for (double v : layer.weight.value().flat()) CHECK(std::abs(v) <= bound);
  CHECK(layer.trainable_params().size() == 2);
  tensor<double> x(shape{1, 2, 4, 4});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(0.7 * static_cast<double>(i));
  nn::sequential net{layer, nn::act::tanh{}, [](auto const& t) { return avg_pool2d(t, {2, 2}); }};
  REQUIRE(primals(net(x)).shape() == shape{1, 4, 2, 2});
  // the gradient penalty ||d sum(net(x)) / dx||^2, differentiated in the parameters (reverse
  // over reverse), against central differences in one weight
  auto const penalty = [&](auto const& in) {
    auto const g = grad([&](auto const& t) { return sum(net(t)); })(in);
    return sum(g * g);
  };
  auto const gp = grad(penalty, none, layer.trainable_params())(x);
  double const h = 1e-6, w0 = layer.weight.value()(1, 0, 2, 1);
  auto const at = [&](double v) {
    tensor<double> wv = layer.weight.value();
    wv(1, 0, 2, 1) = v;
    layer.weight.assign(wv);
    return primal(var<double>(penalty(tensor<var<double>>(x))));
  };
  double const fd = (at(w0 + h) - at(w0 - h)) / (2 * h);
  at(w0);
  CHECK(close(gp[0](1, 0, 2, 1), fd, 1e-6, 1e-8));
}

TEST_CASE("conv2d over variables that are not one block: the adjoints reach each element by its index") {
  tensor<double> const x0(shape{2, 2, 4, 3}, std::vector<double>(48, 0.0));
  tensor<double> xv = x0, wv(shape{3, 2, 2, 2});
  for (std::size_t i = 0; i < xv.size(); ++i) xv.data()[i] = std::cos(0.3 * static_cast<double>(i));
  for (std::size_t i = 0; i < wv.size(); ++i) wv.data()[i] = std::sin(0.5 * static_cast<double>(i));
  tensor<double> const r = primals(conv2d(xv, wv, {.stride = {1, 2}, .padding = {1, 0}}));
  // the reference: the same gradient through one block per operand (grad makes blocks)
  auto const loss = [&](auto const& x, auto const& w) {
    return sum(tensor<double>(r.shape(), 0.5) * square(conv2d(x, w, {.stride = {1, 2}, .padding = {1, 0}})));
  };
  auto const [gx, gw] = grad(loss, positions<0, 1>)(xv, wv);
  tape_scope<var<double>> scope;
  // variables made one at a time, last element first: neither operand is a block
  std::vector<var<double>> xs(xv.size()), ws(wv.size());
  for (std::size_t i = xs.size(); i-- > 0;) xs[i] = var<double>(xv.data()[i]);
  for (std::size_t i = ws.size(); i-- > 0;) ws[i] = var<double>(wv.data()[i]);
  tensor<var<double>> const xt(xv.shape(), xs), wt(wv.shape(), ws);
  var<double> const l = loss(xt, wt);
  backward(l);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(close(xs[i].adjoint(), primal(gx.data()[i]), 1e-14, 1e-14));
  for (std::size_t i = 0; i < ws.size(); ++i) CHECK(close(ws[i].adjoint(), primal(gw.data()[i]), 1e-14, 1e-14));
}

TEST_CASE("conv2d over more samples than one product takes: the chunks' values and gradients are the loops'") {
  // 9 taps over 139 x 139 positions: three samples per product (2^19 entries), so 7 samples
  // make chunks of 3, 3 and 1
  std::size_t const n = 7, c = 2, h = 141, oc = 4;
  tensor<double> x(shape{n, c, h, h}), w(shape{oc, 1, 3, 3}), b{0.5, -0.25, 0.125, 1.0};
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(0.001 * static_cast<double>(i * i % 9973));
  for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = std::cos(0.7 * static_cast<double>(i));
  std::size_t const o = h - 2;  // groups 2: output channels 0, 1 read input channel 0, 2 and 3 channel 1
  auto const y = primals(conv2d(x, w, b, {.groups = 2}));
  REQUIRE(y.shape() == shape{n, oc, o, o});
  tensor<double> dw(w.shape(), 0.0);  // d sum(y * y / 2) / dw by the loops: sum over positions y * x
  double worst = 0;
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t k = 0; k < oc; ++k)
      for (std::size_t r = 0; r < o; ++r)
        for (std::size_t q = 0; q < o; ++q) {
          double v = b(k);
          for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 3; ++j) v += w(k, 0, i, j) * x(s, k / 2, r + i, q + j);
          worst = std::max(worst, std::abs(v - y(s, k, r, q)));
          for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 3; ++j) dw(k, 0, i, j) += v * x(s, k / 2, r + i, q + j);
        }
  CHECK(worst < 1e-13);
  auto const g = primals(grad([&](auto const& ww) { return 0.5 * sum(square(conv2d(x, ww, b, {.groups = 2}))); })(w));
  for (std::size_t i = 0; i < w.size(); ++i) CHECK(close(g.data()[i], dw.data()[i], 1e-11, 1e-9));
  // and the input's gradient: d/dx of sum(y) is the sum of the weights whose taps read it
  auto const gx = primals(grad([&](auto const& xx) { return sum(conv2d(xx, w, b, {.groups = 2})); })(x));
  double tap_sum[4] = {0, 0, 0, 0};
  for (std::size_t k = 0; k < oc; ++k)
    for (std::size_t i = 0; i < 9; ++i) tap_sum[k] += w.data()[k * 9 + i];
  CHECK(close(gx(6, 0, 70, 70), tap_sum[0] + tap_sum[1]));      // an inner element of the last chunk
  CHECK(close(gx(4, 1, 0, 0), w(2, 0, 0, 0) + w(3, 0, 0, 0)));  // a corner: one tap each
}

TEST_CASE("pooling and convolution at their edges: -inf inputs, windows past the input, empty lines") {
  // all -inf: each window's gradient goes to its first element inside the input (torch's indices)
  tensor<double> const x(shape{1, 1, 2, 2}, -INFINITY);
  auto const g = primals(grad([](auto const& t) {
    return sum(max_pool2d(t, {2, 2}, {.stride = {1, 1}, .padding = {1, 1}}));
  })(x));
  CHECK(g(0, 0, 0, 0) == 4.0);
  CHECK(g(0, 0, 0, 1) == 2.0);
  CHECK(g(0, 0, 1, 0) == 2.0);
  CHECK(g(0, 0, 1, 1) == 1.0);
  // a dilated kernel whose taps mostly fall in the padding: one window, the centre tap inside
  tensor<double> const ones(shape{1, 1, 5, 5}, 1.0), w(shape{1, 1, 3, 3}, 1.0);
  auto const y = primals(conv2d(ones, w, {.padding = {2, 2}, .dilation = {4, 4}}));
  REQUIRE(y.shape() == shape{1, 1, 1, 1});
  CHECK(y(0, 0, 0, 0) == 1.0);
  // argmax over a non-empty axis of a tensor with no elements: an empty result, as torch
  CHECK(argmax(tensor<double>(shape{0, 3}), 1).shape() == shape{0});
  CHECK(argmin(tensor<double>(shape{2, 0}), 0, true).shape() == shape{1, 0});
  CHECK_THROWS_AS(argmax(tensor<double>(shape{2, 0}), 1), shape_error);
}

TEST_CASE("conv and pooling: one number for both axes, as torch's int arguments") {
  tensor<double> x(shape{1, 1, 6, 6});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i % 7);
  tensor<double> const w(shape{1, 1, 3, 3}, 1.0);
  CHECK(conv2d(x, w, {.padding = {1}}).shape() == shape{1, 1, 6, 6});  // torch: padding=1
  CHECK(conv2d(x, w, {.padding = 1, .dilation = 2}).shape() == shape{1, 1, 4, 4});
  auto const a = primals(conv2d(x, w, {.stride = 2, .padding = 1})),
             b = primals(conv2d(x, w, {.stride = {2, 2}, .padding = {1, 1}}));
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a.data()[i] == b.data()[i]);
  CHECK(max_pool2d(x, 3, {.stride = {1}}).shape() == shape{1, 1, 4, 4});  // torch: stride=1
  CHECK(avg_pool2d(x, 2).shape() == shape{1, 1, 3, 3});                   // stride: the kernel
  CHECK(nn::conv2d<double>(1, 2, 3).weight.shape() == shape{2, 1, 3, 3});
}

TEST_CASE("conv and pooling: errors name the operation and the shapes") {
  tensor<double> const x(shape{1, 4, 5, 5}, 1.0);
  CHECK_THROWS_WITH_AS(conv2d(tensor<double>(shape{4, 5, 5}), tensor<double>(shape{2, 4, 3, 3})),
                       "adx: conv2d: the input must be [batch, channels, height, width] (shape [4, 5, 5])",
                       shape_error);
  CHECK_THROWS_AS(conv2d(x, tensor<double>(shape{2, 3, 3, 3})), shape_error);                 // channels
  CHECK_THROWS_AS(conv2d(x, tensor<double>(shape{3, 2, 3, 3}), {.groups = 2}), shape_error);  // 3 out in 2 groups
  CHECK_THROWS_WITH_AS(conv2d(x, tensor<double>(shape{2, 4, 6, 6})),
                       "adx: conv2d: the (dilated) kernel, 6 x 6, is larger than the padded input (shape [1, 4, 5, 5])",
                       shape_error);
  CHECK_THROWS_AS(conv2d(x, tensor<double>(shape{2, 4, 3, 3}), tensor<double>(shape{3})), shape_error);  // bias
  CHECK_THROWS_AS(conv2d(x, tensor<double>(shape{2, 4, 3, 3}), {.stride = {0, 1}}), shape_error);
  CHECK_THROWS_AS(max_pool2d(x, {2, 2}, {.padding = {2, 0}}), shape_error);
  CHECK_THROWS_AS(avg_pool2d(x, {2, 2}, {.dilation = {2, 2}}), shape_error);
  CHECK_THROWS_AS(conv1d(x, tensor<double>(shape{2, 4, 3})), shape_error);
}
