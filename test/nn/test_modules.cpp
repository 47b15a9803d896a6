// nn/module.hpp and nn/init.hpp: sequential against the same layers composed by hand (values,
// parameters, gradients in the parameters and second derivatives in the input, against central
// differences), nesting and a user's own module; the activation modules; the initialisers'
// bounds, moments, fans, gains and seeds.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
using adx_test::primals;

namespace {

/// A module of the user's: y = x * scale, one parameter.
struct scaling {
  parameter<double> scale{tensor<double>{2.0}, "scale"};
  template <class X>
  auto operator()(X const& x) const {
    return eval(x * scale);
  }
  parameter_list<double> trainable_params() { return {scale}; }
};

}  // namespace

TEST_CASE("nn::sequential: dense, tanh, dense is the layers composed by hand, with their parameters in order") {
  nn::dense<double> first(3, 4, /*seed=*/1, true, "first"), second(4, 2, /*seed=*/2, true, "second");
  nn::sequential net{first, nn::act::tanh{}, second};
  static_assert(decltype(net)::size() == 3);
  tensor<double> const x{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.5}};
  tensor<double> const by_net = primals(net(x)), by_hand = primals(second(tanh(first(x))));
  REQUIRE(by_net.shape() == shape{2, 2});
  for (std::size_t i = 0; i < by_net.size(); ++i) CHECK(by_net.data()[i] == by_hand.data()[i]);

  parameter_list<double> const ps = net.trainable_params();
  REQUIRE(ps.size() == 4);
  std::vector<std::string> const names{"first.weight", "first.bias", "second.weight", "second.bias"};
  for (std::size_t k = 0; k < 4; ++k) CHECK(ps[k].get().name() == names[k]);
  CHECK(ps[0].get().same_leaf(first.weight));  // the sequential's layers share the layers' parameters
  CHECK(ps[3].get().same_leaf(second.bias));

  // the gradient in the parameters: the same numbers through the sequential and by hand, and
  // one element against central differences
  auto const loss = [&](auto const& in) { return sum(square(net(in))); };
  auto const loss_by_hand = [&](auto const& in) { return sum(square(second(tanh(first(in))))); };
  std::vector<tensor<double>> const g = grad(loss, none, net.trainable_params())(x);
  std::vector<tensor<double>> const h = grad(loss_by_hand, none, net.trainable_params())(x);
  REQUIRE(g.size() == 4);
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < g[k].size(); ++i) CHECK(g[k].data()[i] == h[k].data()[i]);
  double const step = 1e-6, w = first.weight.value()(1, 2);
  auto const loss_at = [&](double v) {
    tensor<double> wv = first.weight.value();
    wv(1, 2) = v;
    first.weight.assign(wv);
    return primal(var<double>(loss(x)));
  };
  double const fd = (loss_at(w + step) - loss_at(w - step)) / (2 * step);
  loss_at(w);
  CHECK(close(g[0](1, 2), fd, 1e-7, 1e-7));
}

TEST_CASE("nn::sequential: the Hessian in the input, forward over reverse, against central differences") {
  nn::sequential net{nn::dense<double>(2, 3, /*seed=*/4), nn::act::sigmoid{}, nn::dense<double>(3, 1, /*seed=*/5)};
  auto const f = [&](auto const& in) { return sum(net(in)); };
  tensor<double> const x{0.3, -0.8};
  tensor<double> const h = primals(functional::hessian(f, x));
  REQUIRE(h.shape() == shape{2, 2});
  double const step = 1e-5;
  for (std::size_t j = 0; j < 2; ++j) {  // column j: (grad(x + s e_j) - grad(x - s e_j)) / 2s
    tensor<double> up = x, down = x;
    up(j) += step;
    down(j) -= step;
    tensor<double> const gu = primals(grad(f)(up)), gd = primals(grad(f)(down));
    for (std::size_t i = 0; i < 2; ++i) CHECK(close(h(i, j), (gu(i) - gd(i)) / (2 * step), 1e-7, 1e-8));
  }
  CHECK(h(0, 1) == doctest::Approx(h(1, 0)).epsilon(1e-14));
}

TEST_CASE("nn::sequential: nested sequentials and a user's module list their parameters recursively") {
  scaling s;
  nn::sequential inner{nn::dense<double>(2, 2, 7, true, "a"), nn::act::relu{}};
  nn::sequential net{inner, s, [](auto const& t) { return eval(t + 1.0); }, nn::dense<double>(2, 1, 8, false, "b")};
  auto const ps = net.trainable_params();
  REQUIRE(ps.size() == 4);
  CHECK(ps[0].get().name() == "a.weight");
  CHECK(ps[1].get().name() == "a.bias");
  CHECK(ps[2].get().name() == "scale");
  CHECK(ps[3].get().name() == "b.weight");
  // d sum(net(x)) / d scale = sum over the b-weights times relu(a(x)), by hand
  tensor<double> const x{0.5, -0.25};
  auto const g = grad([&](auto const& in) { return sum(net(in)); }, none, ps)(x);
  tensor<double> const hidden = primals(tensor<var<double>>(relu(net.get<0>().get<0>()(x))));
  tensor<double> const wb = ps[3].get().value();
  CHECK(close(g[2](0), wb(0, 0) * hidden(0) + wb(0, 1) * hidden(1)));
  // a sequential without parameters has an empty list
  nn::sequential plain{nn::act::tanh{}, nn::act::softmax{0}};
  CHECK(plain.trainable_params().empty());
}

TEST_CASE("nn::act: each activation module is its function") {
  tensor<double> const x{-2.0, -0.5, 0.0, 0.7, 3.0};
  auto same = [&](auto module, auto function) {
    tensor<double> const a = eval(module(x)), b = eval(function(x));
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(a.data()[i] == b.data()[i]);
  };
  same(nn::act::relu{}, [](auto const& t) { return relu(t); });
  same(nn::act::tanh{}, [](auto const& t) { return tanh(t); });
  same(nn::act::sigmoid{}, [](auto const& t) { return sigmoid(t); });
  same(nn::act::logsigmoid{}, [](auto const& t) { return logsigmoid(t); });
  same(nn::act::softplus{}, [](auto const& t) { return softplus(t); });
  same(nn::act::silu{}, [](auto const& t) { return silu(t); });
  same(nn::act::mish{}, [](auto const& t) { return mish(t); });
  same(nn::act::gelu{}, [](auto const& t) { return gelu(t); });
  same(nn::act::relu6{}, [](auto const& t) { return relu6(t); });
  same(nn::act::selu{}, [](auto const& t) { return selu(t); });
  same(nn::act::gelu_tanh{}, [](auto const& t) { return gelu_tanh(t); });
  same(nn::act::leaky_relu{0.2}, [](auto const& t) { return leaky_relu(t, 0.2); });
  same(nn::act::elu{}, [](auto const& t) { return elu(t, 1.0); });
  same(nn::act::hardtanh{-0.5, 2.0}, [](auto const& t) { return hardtanh(t, -0.5, 2.0); });
  CHECK(eval(nn::act::leaky_relu{0.2}(x))(0) == -0.4);  // not the default slope
  tensor<double> const m{{1.0, 2.0}, {0.5, -1.0}};
  tensor<double> const by_rows = eval(nn::act::softmax{0}(m)), want = eval(softmax(m, 0));
  for (std::size_t i = 0; i < 4; ++i) CHECK(by_rows.data()[i] == want.data()[i]);
  CHECK(close(by_rows(0, 0) + by_rows(1, 0), 1.0));
  tensor<double> const logs = eval(nn::act::log_softmax{}(m));
  CHECK(close(std::exp(logs(0, 0)) + std::exp(logs(0, 1)), 1.0));
}

namespace {
struct moments {
  double mean = 0, sd = 0, max_abs = 0;
};
moments moments_of(tensor<double> const& t) {
  moments m;
  for (double v : t.flat()) m.mean += v, m.max_abs = std::max(m.max_abs, std::abs(v));
  m.mean /= static_cast<double>(t.size());
  for (double v : t.flat()) m.sd += (v - m.mean) * (v - m.mean);
  m.sd = std::sqrt(m.sd / static_cast<double>(t.size()));
  return m;
}
}  // namespace

TEST_CASE("nn::init: bounds and moments of each initialiser, with torch's fans and gains") {
  shape const sh{200, 300};  // fan_in 300, fan_out 200, 60000 numbers
  // uniform in [a, b): mean (a + b) / 2, sd (b - a) / sqrt(12)
  moments const u = moments_of(nn::init::uniform<double>(sh, 1, -1.0, 3.0));
  CHECK(std::abs(u.mean - 1.0) < 0.02);
  CHECK(std::abs(u.sd - 4 / std::sqrt(12.0)) < 0.02);
  moments const n = moments_of(nn::init::normal<double>(sh, 2, 0.5, 2.0));
  CHECK(std::abs(n.mean - 0.5) < 0.03);
  CHECK(std::abs(n.sd - 2.0) < 0.03);
  // Xavier: bound gain sqrt(6 / (fan_in + fan_out)), sd gain sqrt(2 / (fan_in + fan_out))
  double const xb = (5.0 / 3) * std::sqrt(6.0 / 500);
  moments const xu =
      moments_of(nn::init::xavier_uniform<double>(sh, 3, nn::init::calculate_gain(nn::init::nonlinearity::tanh)));
  CHECK(xu.max_abs <= xb);
  CHECK(xu.max_abs > 0.99 * xb);
  CHECK(std::abs(moments_of(nn::init::xavier_normal<double>(sh, 4)).sd - std::sqrt(2.0 / 500)) <
        0.01 * std::sqrt(2.0 / 500) * 2);
  // Kaiming: leaky_relu with a = 0 has gain sqrt(2); a convolution's fans count its kernel
  shape const conv{16, 8, 5, 5};  // fan_in 8 * 25 = 200, fan_out 16 * 25 = 400
  CHECK(nn::init::fans_of(conv).in == 200);
  CHECK(nn::init::fans_of(conv).out == 400);
  double const kb = std::sqrt(2.0) * std::sqrt(3.0 / 200);
  moments const ku = moments_of(nn::init::kaiming_uniform<double>(conv, 5));
  CHECK(ku.max_abs <= kb);
  CHECK(ku.max_abs > 0.99 * kb);
  double const ksd = std::sqrt(2.0 / 400);  // fan_out mode, relu
  moments const kn = moments_of(
      nn::init::kaiming_normal<double>(shape{400, 300}, 6, {.fan_out = true, .f = nn::init::nonlinearity::relu}));
  CHECK(std::abs(kn.sd - ksd) < 0.02 * ksd);
  // nn.Linear's default, kaiming_uniform with a = sqrt(5): bound 1 / sqrt(fan_in)
  moments const lin = moments_of(nn::init::kaiming_uniform<double>(sh, 7, {.a = std::sqrt(5.0)}));
  CHECK(lin.max_abs <= 1 / std::sqrt(300.0) * (1 + 1e-15));
  CHECK(lin.max_abs > 0.99 / std::sqrt(300.0));
  CHECK(nn::init::calculate_gain(nn::init::nonlinearity::leaky_relu, 0.2) == std::sqrt(2.0 / 1.04));
  CHECK(nn::init::calculate_gain(nn::init::nonlinearity::selu) == 0.75);
  CHECK(nn::init::calculate_gain(nn::init::nonlinearity::sigmoid) == 1);
}

TEST_CASE("nn::init: a seed gives the same tensor and another seed another, float too, and the errors") {
  auto const a = nn::init::normal<double>(shape{5, 7}, 11), b = nn::init::normal<double>(shape{5, 7}, 11);
  auto const c = nn::init::normal<double>(shape{5, 7}, 12);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a.data()[i] == b.data()[i]);
    differs |= a.data()[i] != c.data()[i];
  }
  CHECK(differs);
  auto const f = nn::init::xavier_uniform<float>(shape{4, 6}, 3);
  auto const d = nn::init::xavier_uniform<double>(shape{4, 6}, 3);
  for (std::size_t i = 0; i < f.size(); ++i) CHECK(f.data()[i] == static_cast<float>(d.data()[i]));
  CHECK_THROWS_WITH_AS(nn::init::xavier_uniform<double>(shape{5}, 1),
                       "adx: nn::init: fan in and fan out cannot be computed for a tensor of fewer than 2 dimensions",
                       value_error);
  CHECK_THROWS_AS(nn::init::normal<double>(shape{2}, 1, 0, -1), value_error);
  CHECK_THROWS_AS(nn::init::uniform<double>(shape{2}, 1, 1, 0), value_error);
  // an initialiser's tensor becomes a parameter's values
  nn::dense<double> layer(6, 4, 0);
  layer.weight.assign(nn::init::kaiming_normal<double>(layer.weight.shape(), 9));
  CHECK(layer.weight.value()(0, 0) == nn::init::kaiming_normal<double>(shape{4, 6}, 9)(0, 0));
}

TEST_CASE("nn::sequential: trained with Adam, the loss of a small regression falls below a tenth") {
  nn::sequential net{nn::dense<double>(1, 8, 1), nn::act::tanh{}, nn::dense<double>(8, 1, 2)};
  optim::adam<double> opt(net.trainable_params(), {.lr = 0.05});
  tensor<double> x(shape{16, 1}), y(shape{16, 1});
  for (std::size_t i = 0; i < 16; ++i) {
    x(i, 0) = -1 + 2.0 * static_cast<double>(i) / 15;
    y(i, 0) = std::sin(2 * x(i, 0));
  }
  auto const loss = [&](auto const& in, auto const& target) { return nn::mse_loss(net(in), target); };
  double first = 0, last = 0;
  for (int k = 0; k < 300; ++k) {
    auto [value, g] = value_and_grad(loss, none, net.trainable_params())(x, y);
    (k == 0 ? first : last) = primal(value);
    opt.step(g);
  }
  CHECK(last < first / 10);
}

TEST_CASE("nn::act::flatten merges the trailing axes of a tensor or an expression, as torch's nn.Flatten") {
  tensor<double> x(shape{2, 3, 2, 2});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i);
  auto const f = nn::act::flatten{}(tanh(x));  // an expression, evaluated
  REQUIRE(f.shape() == shape{2, 12});
  CHECK(f(1, 5) == std::tanh(17.0));
  CHECK(nn::act::flatten{2}(x).shape() == shape{2, 3, 4});
  CHECK(nn::act::flatten{-1}(x).shape() == shape{2, 3, 2, 2});
  // in a sequential after an activation, before a dense layer
  nn::sequential net{nn::act::tanh{}, nn::act::flatten{}, nn::dense<double>(12, 1, 3)};
  CHECK(tensor<var<double>>(net(x)).shape() == shape{2, 1});
}
