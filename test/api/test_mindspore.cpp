// mindspore.grad, value_and_grad, GradOperation and get_grad: the result structures of the
// reference case api_mindspore_grad_structures, every MindSpore seed example, grad of grad, and
// the runtime errors (the compile-time ones are in test/compile_fail/).
#include <doctest/doctest.h>

#include <adx/adx.hpp>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::check_tensor;
using adx_test::check_values;
using adx_test::close;

namespace {

/// The reference net: w*x + b*y + z with parameters w = [6], b = [2].
struct linear_net {
  parameter<double> w{tensor<double>{6.0}, "w"};
  parameter<double> b{tensor<double>{2.0}, "b"};
  template <class X, class Y, class Z>
  auto operator()(X const& x, Y const& y, Z const& z) const {
    return eval(w * x + b * y + z);
  }
  parameter_list<double> trainable_params() { return {w, b}; }
};

/// The seeds' MatMul net: out = MatMul(x * z, y) with a shape-[1] parameter z = [1].
struct matmul_net {
  parameter<double> z{tensor<double>{1.0}, "z"};
  template <class X, class Y>
  auto operator()(X const& x, Y const& y) const {
    return matmul(x * z, y);
  }
  parameter_list<double> trainable_params() { return {z}; }
};

nlohmann::json const& expected_call(std::string const& call) {
  for (auto const& c : adx_test::reference_case("api_mindspore_grad_structures")["expected"]["calls"])
    if (c["call"] == call) return c["expect"];
  FAIL("no call " << call);
  static nlohmann::json const none;
  return none;
}
nlohmann::json const& tuple_at(nlohmann::json const& e, std::size_t i) { return e["tuple"][i]; }

nlohmann::json const& seed(std::string const& name) {
  for (auto const& e : adx_test::seeds()["examples"])
    if (e["name"] == name) return e;
  FAIL("no seed example " << name);
  static nlohmann::json const none;
  return none;
}
tensor<double> from_nested(nlohmann::json const& rows) {
  std::vector<double> v;
  std::size_t r = 0, c = 0;
  for (auto const& row : rows) {
    ++r;
    c = row.size();
    for (auto const& e : row) v.push_back(e.get<double>());
  }
  return tensor<double>(shape{r, c}, v);
}

}  // namespace

TEST_CASE("mindspore.grad: the result structures of api_mindspore_grad_structures") {
  linear_net net;
  tensor<double> const x{10.0}, y{20.0}, z{30.0};

  check_tensor(grad(net)(x, y, z), expected_call("grad(net)(x, y, z)"));
  check_tensor(grad(net, position<0>)(x, y, z), expected_call("grad(net, grad_position=0)(x, y, z)"));
  check_tensor(grad(net, positions<0>)(x, y, z), expected_call("grad(net, grad_position=(0,))(x, y, z)"));
  {
    auto const [g1, g2] = grad(net, positions<1, 2>)(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=(1, 2))(x, y, z)");
    check_tensor(g1, tuple_at(e, 0));
    check_tensor(g2, tuple_at(e, 1));
  }
  check_tensor(grad(net, none, net.w)(x, y, z), expected_call("grad(net, grad_position=None, weights=w)(x, y, z)"));
  {
    std::vector<tensor<double>> const g = grad(net, none, parameter_list<double>{net.w})(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=None, weights=[w])(x, y, z)");
    REQUIRE(g.size() == 1);
    check_tensor(g[0], tuple_at(e, 0));
  }
  {
    auto const g = grad(net, none, net.trainable_params())(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=None, weights=[w, b])(x, y, z)");
    REQUIRE(g.size() == 2);
    check_tensor(g[0], tuple_at(e, 0));
    check_tensor(g[1], tuple_at(e, 1));
  }
  {
    auto const [gx, gw] = grad(net, position<0>, net.trainable_params())(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=0, weights=[w, b])(x, y, z)");
    check_tensor(gx, tuple_at(e, 0));
    check_tensor(gw[0], tuple_at(tuple_at(e, 1), 0));
    check_tensor(gw[1], tuple_at(tuple_at(e, 1), 1));
  }
  {
    auto const [gp, gw] = grad(net, positions<1, 2>, net.w)(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=(1, 2), weights=w)(x, y, z)");
    check_tensor(std::get<0>(gp), tuple_at(tuple_at(e, 0), 0));
    check_tensor(std::get<1>(gp), tuple_at(tuple_at(e, 0), 1));
    check_tensor(gw, tuple_at(e, 1));
  }
  {
    std::pair<int, tensor<double>> const g = grad(net, position<0>, none, no_aux, return_ids)(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=0, return_ids=True)(x, y, z)");
    CHECK(g.first == tuple_at(e, 0).get<int>());
    check_tensor(g.second, tuple_at(e, 1));
  }
  {
    auto const [g1, g2] = grad(net, positions<1, 2>, none, no_aux, return_ids)(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=(1, 2), return_ids=True)(x, y, z)");
    CHECK(g1.first == tuple_at(tuple_at(e, 0), 0).get<int>());
    CHECK(g2.first == tuple_at(tuple_at(e, 1), 0).get<int>());
    check_tensor(g1.second, tuple_at(tuple_at(e, 0), 1));
    check_tensor(g2.second, tuple_at(tuple_at(e, 1), 1));
  }
  {
    auto const g = grad(net, positions<1, 2>, net.trainable_params(), no_aux, return_ids)(x, y, z);
    auto const& e = expected_call("grad(net, grad_position=(1, 2), weights=[w, b], return_ids=True)(x, y, z)");
    auto const& [gp, gw] = g;
    CHECK(std::get<0>(gp).first == 1);
    CHECK(std::get<1>(gp).first == 2);
    check_tensor(std::get<0>(gp).second, tuple_at(tuple_at(tuple_at(e, 0), 0), 1));
    check_tensor(std::get<1>(gp).second, tuple_at(tuple_at(tuple_at(e, 0), 1), 1));
    REQUIRE(gw.size() == 2);
    CHECK(gw[0].first == tuple_at(tuple_at(tuple_at(e, 1), 0), 0).get<std::string>());
    CHECK(gw[1].first == tuple_at(tuple_at(tuple_at(e, 1), 1), 0).get<std::string>());
    check_tensor(gw[0].second, tuple_at(tuple_at(tuple_at(e, 1), 0), 1));
    check_tensor(gw[1].second, tuple_at(tuple_at(tuple_at(e, 1), 1), 1));
    // mindspore.get_grad looks gradients up by position or parameter
    check_tensor(get_grad(g, 2), tuple_at(tuple_at(tuple_at(e, 0), 1), 1));
    check_tensor(get_grad(g, net.b), tuple_at(tuple_at(tuple_at(e, 1), 1), 1));
    CHECK_THROWS_WITH_AS(get_grad(g, 0), doctest::Contains("position 0 is not in the gradients"), value_error);
    parameter<double> other(tensor<double>{1.0}, "other");
    CHECK_THROWS_WITH_AS(get_grad(g, other), doctest::Contains("'other' is not in the gradients"), value_error);
  }
}

TEST_CASE("GradOperation: the flags of api_mindspore_grad_structures") {
  linear_net net;
  tensor<double> const x{10.0}, y{20.0}, z{30.0};
  check_tensor(grad_operation<>(net)(x, y, z), expected_call("GradOperation()(net)(x, y, z)"));
  {
    auto const [gx, gy, gz] = grad_operation<grad_options{.get_all = true}>(net)(x, y, z);
    auto const& e = expected_call("GradOperation(get_all=True)(net)(x, y, z)");
    check_tensor(gx, tuple_at(e, 0));
    check_tensor(gy, tuple_at(e, 1));
    check_tensor(gz, tuple_at(e, 2));
  }
  {
    auto const g = grad_operation<grad_options{.get_by_list = true}>(net, net.trainable_params())(x, y, z);
    auto const& e = expected_call("GradOperation(get_by_list=True)(net, ParameterTuple([w, b]))(x, y, z)");
    REQUIRE(g.size() == 2);
    check_tensor(g[0], tuple_at(e, 0));
    check_tensor(g[1], tuple_at(e, 1));
  }
  {
    auto const [gi, gw] =
        grad_operation<grad_options{.get_all = true, .get_by_list = true}>(net, net.trainable_params())(x, y, z);
    auto const& e =
        expected_call("GradOperation(get_all=True, get_by_list=True)(net, ParameterTuple([w, b]))(x, y, z)");
    check_tensor(std::get<0>(gi), tuple_at(tuple_at(e, 0), 0));
    check_tensor(std::get<2>(gi), tuple_at(tuple_at(e, 0), 2));
    check_tensor(gw[1], tuple_at(tuple_at(e, 1), 1));
  }
  // one input, get_all: a 1-tuple; no inputs: ()
  auto const one = grad_operation<grad_options{.get_all = true}>([](auto const& a) { return eval(a * a); })(x);
  static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(one)>> == 1);
  check_values(std::get<0>(one), {20.0});
  auto const nothing = grad_operation<>([] { return 1.0; })();
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(nothing)>, std::tuple<>>);
  // get_by_list without weights (weights=None): ((input grads...), ()) and, alone, ()
  auto const [gi, gw] = grad_operation<grad_options{.get_all = true, .get_by_list = true}>(net)(x, y, z);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(gw)>, std::tuple<>>);
  auto const& e = expected_call("GradOperation(get_all=True)(net)(x, y, z)");
  check_tensor(std::get<0>(gi), tuple_at(e, 0));
  check_tensor(std::get<2>(gi), tuple_at(e, 2));
  auto const none_at_all = grad_operation<grad_options{.get_by_list = true}>(net)(x, y, z);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(none_at_all)>, std::tuple<>>);
}

TEST_CASE("seeds 000/001/004: MatMul(x * z, y) through grad and GradOperation") {
  matmul_net net;
  tensor<double> const x{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}};
  tensor<double> const y{{0.01, 0.3, 1.1}, {0.1, 0.2, 1.3}, {2.1, 1.2, 3.3}};
  auto const& want = seed("ms_matmul_grad_wrt_x")["torch_float64"];
  tensor<double> const g1 = grad(net)(x, y);
  tensor<double> const g2 = grad_operation<>(net)(x, y);
  tensor<double> const w = from_nested(want);
  check_values(g1, std::vector<double>(w.begin(), w.end()));
  CHECK(to_string(g1) == "[[1.41 1.6 6.6]\n [1.41 1.6 6.6]]");
  CHECK(to_string(g2) == to_string(g1));
}

TEST_CASE("seed 004: GradOperation get_all, sens_param, get_by_list and both, with the doc's inputs") {
  matmul_net net;
  auto vec = [](tensor<double> const& t) { return std::vector<double>(t.begin(), t.end()); };
  auto f64 = [&](std::string const& name, std::size_t k) {
    auto const& w = seed(name)["torch_float64"][k];
    if (w[0].is_array()) return vec(from_nested(w));
    std::vector<double> v;
    for (auto const& e : w) v.push_back(e.get<double>());
    return v;
  };
  tensor<double> const x{{0.8, 0.6, 0.2}, {1.8, 1.3, 1.1}};
  {
    tensor<double> const y{{0.1, 3.3, 1.1}, {1.1, 0.2, 1.4}, {1.1, 2.2, 0.3}};
    auto const [dx, dy] = grad_operation<grad_options{.get_all = true}>(net)(x, y);
    check_values(dx, f64("ms_gradop_get_all", 0));
    check_values(dy, f64("ms_gradop_get_all", 1));
  }
  tensor<double> const y{{0.11, 3.3, 1.1}, {1.1, 0.2, 1.4}, {1.1, 2.2, 0.3}};
  {
    tensor<double> const sens{{0.1, 0.6, 0.2}, {0.8, 1.3, 1.1}};
    auto const [dx, dy] = grad_operation<grad_options{.get_all = true, .sens_param = true}>(net)(x, y, sens);
    check_values(dx, f64("ms_gradop_get_all_sens", 0));
    check_values(dy, f64("ms_gradop_get_all_sens", 1));
    // a sens of the wrong shape is an error that names both shapes
    CHECK_THROWS_WITH_AS(grad_operation<grad_options{.sens_param = true}>(net)(x, y, tensor<double>{1.0, 2.0}),
                         doctest::Contains("sens for output 0 has shape [2] and the output has shape [2, 3]"),
                         value_error);
  }
  {
    auto const dz = grad_operation<grad_options{.get_by_list = true}>(net, net.trainable_params())(x, y);
    REQUIRE(dz.size() == 1);
    check_values(dz[0], f64("ms_gradop_get_by_list", 2));
    // a single parameter instead of a list gives the tensor itself
    check_values(grad_operation<grad_options{.get_by_list = true}>(net, net.z)(x, y), f64("ms_gradop_get_by_list", 2));
  }
  {
    tensor<double> const x2{{0.1, 0.6, 1.2}, {0.5, 1.3, 0.1}};
    tensor<double> const y2{{0.12, 2.3, 1.1}, {1.3, 0.2, 2.4}, {0.1, 2.2, 0.3}};
    auto const [inputs, dz] =
        grad_operation<grad_options{.get_all = true, .get_by_list = true}>(net, net.trainable_params())(x2, y2);
    check_values(std::get<0>(inputs), f64("ms_gradop_get_all_get_by_list", 0));
    check_values(std::get<1>(inputs), f64("ms_gradop_get_all_get_by_list", 1));
    check_values(dz[0], f64("ms_gradop_get_all_get_by_list", 2));
    // weights=None with get_by_list: the weights part is ()
    auto const [in2, w2] = grad_operation<grad_options{.get_all = true, .get_by_list = true}>(net, none)(x2, y2);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(w2)>, std::tuple<>>);
    check_values(std::get<0>(in2), f64("ms_gradop_get_all_get_by_list", 0));
  }
}

TEST_CASE("seed 002: grad_position (1, 2), return_ids and has_aux") {
  auto net = [](auto const& x, auto const& y, auto const& z) { return eval(x * y * z); };
  tensor<double> const x{1.0, 2.0}, y{-2.0, 3.0}, z{0.0, 3.0};
  {
    auto const [gy, gz] = grad(net, positions<1, 2>)(x, y, z);
    check_values(gy, {0.0, 6.0});
    check_values(gz, {-2.0, 6.0});
    CHECK(to_string(gy) == "[0. 6.]");
    CHECK(to_string(gz) == "[-2. 6.]");
  }
  {
    auto const [g1, g2] = grad(net, positions<1, 2>, none, no_aux, return_ids)(x, y, z);
    CHECK(g1.first == 1);
    CHECK(g2.first == 2);
    check_values(g1.second, {0.0, 6.0});
    check_values(g2.second, {-2.0, 6.0});
  }
  {
    auto fn = [](auto const& a, auto const& b, auto const& c) {
      return std::make_tuple(eval(a * exp(b) * pow(c, 2)), eval(c));
    };
    auto const [g, aux] = grad(fn, positions<1, 2>, none, has_aux)(tensor<double>{3.0, 3.0}, tensor<double>{0.0, 0.0},
                                                                   tensor<double>{5.0, 5.0});
    check_values(std::get<0>(g), {75.0, 75.0});
    check_values(std::get<1>(g), {30.0, 30.0});
    static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(aux)>> == 1);  // a 1-tuple, as the seed prints
    check_values(std::get<0>(aux), {5.0, 5.0});
  }
}

TEST_CASE("seed 002 cases 1-3: Dense(10, 1) with MSELoss, forward returning (loss, logits)") {
  nn::dense<double> dense(10, 1, 7);
  CHECK(dense.weight.shape() == shape{1, 10});
  CHECK(dense.bias.shape() == shape{1});
  CHECK(dense.weight.name() == "dense.weight");
  auto forward = [&](auto const& inputs, auto const& labels) {
    auto logits = dense(inputs);
    return std::make_tuple(nn::mse_loss(logits, labels), logits);
  };
  tensor<double> const inputs = random_normal<double>(shape{16, 10}, 1);
  tensor<double> const labels = random_normal<double>(shape{16, 1}, 2);

  // case 1: grad_position (0, 1), has_aux -> (two gradients, (logits,))
  auto const [g1, aux1] = grad(forward, positions<0, 1>, none, has_aux)(inputs, labels);
  CHECK(std::get<0>(g1).shape() == shape{16, 10});
  CHECK(std::get<0>(aux1).shape() == shape{16, 1});
  // case 2: weights only -> (gW, gb)
  auto const [g2, aux2] = grad(forward, none, dense.trainable_params(), has_aux)(inputs, labels);
  REQUIRE(g2.size() == 2);
  CHECK(g2[0].shape() == shape{1, 10});
  CHECK(g2[1].shape() == shape{1});
  // case 3: position 0 and weights -> (g_inputs, (gW, gb))
  auto const [g3, aux3] = grad(forward, position<0>, dense.trainable_params(), has_aux)(inputs, labels);
  CHECK(std::get<0>(g3).shape() == shape{16, 10});
  REQUIRE(std::get<1>(g3).size() == 2);

  // the values: loss = mean((x W^T + b - t)^2); dL/dW = 2/N sum_n r_n x_n, dL/db = 2/N sum_n r_n
  tensor<double> const W = dense.weight.value(), b = dense.bias.value();
  std::vector<double> gW(10, 0.0);
  double gb = 0;
  for (std::size_t n = 0; n < 16; ++n) {
    double r = b[0] - labels[n];
    for (std::size_t k = 0; k < 10; ++k) r += inputs(n, k) * W[k];
    for (std::size_t k = 0; k < 10; ++k) gW[k] += 2.0 / 16 * r * inputs(n, k);
    gb += 2.0 / 16 * r;
    // forward is a lambda that captures the module: its results are differentiable in the weights
    CHECK(close(primal(std::get<0>(aux1)[n]), r + labels[n], 1e-12, 1e-12));
    for (std::size_t k = 0; k < 10; ++k) CHECK(close(primal(std::get<0>(g1)(n, k)), 2.0 / 16 * r * W[k], 1e-12, 1e-14));
  }
  check_values(g2[0], gW);
  check_values(g2[1], {gb});
  check_values(std::get<1>(g3)[0], gW);
}

TEST_CASE("value_and_grad, grad of grad, and scalar arguments") {
  auto f = [](auto const& x, auto const& y, auto const& z) { return eval(x * x * y * z); };
  tensor<double> const x{2.0}, y{3.0}, z{4.0};
  {
    auto const [v, g] = value_and_grad(f, positions<0, 2>)(x, y, z);
    check_values(v, {48.0});
    check_values(std::get<0>(g), {48.0});  // 2xyz
    check_values(std::get<1>(g), {12.0});  // x^2 y
  }
  {  // grad(grad(f), (1, 2)): d/dy (2xyz) = 2xz, d/dz (2xyz) = 2xy  [MindSpore's nesting test]
    auto const [gy, gz] = grad(grad(f), positions<1, 2>)(x, y, z);
    check_values(gy, {16.0});
    check_values(gz, {12.0});
    // and the third order through the same nesting: d/dx (2xz) = 2z
    check_values(grad(grad(grad(f), position<1>))(x, y, z), {8.0});
  }
  {  // scalar arguments give scalar gradients; tuple outputs are summed
    auto h = [](auto const& a, auto const& b) { return std::make_tuple(a * a * a, 2.0 * a * b); };
    double const g = grad(h)(2.0, 5.0);
    CHECK(close(g, 3 * 4.0 + 2 * 5.0));
    auto const [v, g2] = value_and_grad(h, position<1>, none, has_aux)(2.0, 5.0);
    CHECK(close(std::get<0>(v), 8.0));
    CHECK(close(std::get<1>(v), 20.0));
    CHECK(close(g2, 0.0));  // only the first output is differentiated
  }
}

TEST_CASE("grad: a captured variable of a higher nesting level lifts the call above it") {
  // fn mixes its argument with a captured var<var<double>>: the call differentiates at
  // var<var<var<double>>>, and the gradient 2 x theta stays differentiable in theta
  tape_scope<var<var<double>>> scope;
  var<var<double>> theta = 3.0;
  auto captured = [&](auto const& x) { return x * theta * x; };
  auto passed = [](auto const& x, auto const& th) { return x * th * x; };
  auto const g = grad(captured)(2.0);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(g)>, var<var<double>>>);
  CHECK(primal(g) == 12.0);  // 2 x theta
  auto const [v, g2] = value_and_grad(captured)(2.0);
  CHECK(primal(v) == 12.0);
  CHECK(primal(g2) == 12.0);
  backward(g);  // d(2 x theta) / d theta = 2 x
  CHECK(primal(theta.adjoint()) == 4.0);
  CHECK(grad(passed)(2.0, theta).value().value() == 12.0);
  auto tcaptured = [&](auto const& x) { return eval(x * theta); };
  auto const tg = grad(tcaptured)(tensor<double>{1.0, 2.0});
  CHECK(primal(tg[0]) == 3.0);
  CHECK(primal(tg[1]) == 3.0);
}

TEST_CASE("GradOperation with sens_param inside grad: a sens of plain numbers is a constant of the nested call") {
  // d/dx sum(sens * 3 x^2) = 6 x sens
  tensor<double> const x{1.0, 2.0}, sens{1.0, 3.0};
  auto f = [](auto const& a) { return eval(a * a * a); };
  auto inner = [&](auto const& a) { return grad_operation<grad_options{.sens_param = true}>(f)(a, sens); };
  check_values(grad(inner)(x), {6.0, 36.0});
  auto fs = [](auto const& a) { return a * a * a; };
  auto inner_s = [&](auto const& a) {
    return grad_operation<grad_options{.sens_param = true}>(fs)(a, tensor<double>{2.0});
  };
  CHECK(close(grad(inner_s)(2.0), 24.0));  // d/dx (2 * 3 x^2) = 12 x
}

TEST_CASE("grad and value_and_grad: outputs in nested tuples and std::vectors all contribute, their values come back") {
  tensor<double> const x{1.0, 2.0}, y{3.0, 4.0};
  // a list of outputs: d/dx sum(x y + x^2) = y + 2x
  auto as_list = [](auto const& a, auto const& b) { return std::vector{eval(a * b), eval(a * a)}; };
  check_values(grad(as_list)(x, y), {5.0, 8.0});
  auto const [v, g] = value_and_grad(as_list)(x, y);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(v)>, std::vector<tensor<double>>>);
  REQUIRE(v.size() == 2);
  check_values(v[0], {3.0, 8.0});
  check_values(v[1], {1.0, 4.0});
  check_values(g, {5.0, 8.0});
  // nested: (a b, (a, 2 a)) gives y + 1 + 2, with an expression left unevaluated inside
  auto nested = [](auto const& a, auto const& b) { return std::make_tuple(eval(a * b), std::make_pair(a, 2.0 * a)); };
  check_values(grad(nested)(x, y), {6.0, 7.0});
  // sens for nested outputs: the same structure
  auto const gs = grad_operation<grad_options{.sens_param = true}>(nested)(
      x, y,
      std::make_tuple(tensor<double>{1.0, -1.0}, std::make_pair(tensor<double>{0.5, 0.5}, tensor<double>{2.0, 0.0})));
  check_values(gs, {3.0 + 0.5 + 4.0, -4.0 + 0.5 + 0.0});
  auto const gl = grad_operation<grad_options{.sens_param = true}>(as_list)(
      x, y, std::vector{tensor<double>{1.0, 0.0}, tensor<double>{0.0, 1.0}});
  check_values(gl, {3.0, 4.0});  // y_0 at element 0, 2 x_1 at element 1
  CHECK_THROWS_WITH_AS(
      grad_operation<grad_options{.sens_param = true}>(as_list)(x, y, std::vector{tensor<double>{1.0, 0.0}}),
      doctest::Contains("sens for output 0 is a list of 1 entries and the output a list of 2"), value_error);
  // has_aux: the aux outputs, nested, come back as values
  auto with_aux = [](auto const& a) {
    return std::make_tuple(sum(a * a), std::make_tuple(eval(2.0 * a), std::vector{eval(3.0 * a)}));
  };
  auto const [ga, aux] = grad(with_aux, position<0>, none, has_aux)(x);
  check_values(ga, {2.0, 4.0});
  auto const& inner = std::get<0>(aux);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::get<0>(inner))>, tensor<double>>);
  check_values(std::get<0>(inner), {2.0, 4.0});
  REQUIRE(std::get<1>(inner).size() == 1);
  check_values(std::get<1>(inner)[0], {3.0, 6.0});
}

TEST_CASE("parameters: aliases, assign, stale recordings refreshed, weights used in several layers") {
  parameter<double> w(tensor<double>{1.0, 2.0}, "w");
  parameter<double> alias = w;
  CHECK(alias.same_leaf(w));
  auto f = [&](auto const& x) { return sum(w * x + alias * x); };  // two uses of one leaf
  check_values(grad(f, none, w)(tensor<double>{3.0, 4.0}), {6.0, 8.0});
  w.assign(tensor<double>{5.0, 6.0});
  check_values(alias.value(), {5.0, 6.0});
  CHECK_THROWS_AS(w.assign(tensor<double>{1.0}), shape_error);
  {  // made inside a recording that ends: the next gradient call makes it live again
    std::optional<parameter<double>> p;
    {
      tape_scope<var<double>> scope;
      p.emplace(tensor<double>{2.0}, "p");
    }
    CHECK_FALSE(p->live());
    auto g = grad([&](auto const& x) { return eval(*p * x); }, none, *p)(tensor<double>{7.0});
    CHECK(p->live());
    check_values(g, {7.0});
    check_values(p->value(), {2.0});
  }
}

// A function whose output depends on nothing selected has zero gradients. With no active output
// no sweep ran, and the weights' gradients were read from the tape's previous sweep.
TEST_CASE("grad and value_and_grad of an output that reaches no weight give zeros, not the last sweep's") {
  parameter<double> w(tensor<double>{6.0, 5.0}, "w");
  auto uses_w = [&](auto const& a) { return eval(a * w); };
  auto ignores_w = [&](auto const& a) { return eval(a * 2.0); };
  tensor<double> const x{1.0, 2.0};
  check_values(grad(uses_w, none, w)(x), {1.0, 2.0});
  check_values(grad(ignores_w, none, w)(x), {0.0, 0.0});
  check_values(grad(uses_w, none, w)(x), {1.0, 2.0});
  check_values(std::get<1>(value_and_grad(ignores_w, none, w)(x)), {0.0, 0.0});
  check_values(grad(uses_w, none, w)(x), {1.0, 2.0});
  check_values(grad_operation<grad_options{.get_by_list = true}>(ignores_w, parameter_list<double>{w})(x)[0],
               {0.0, 0.0});
}

// GradOperation(get_by_list=True) without get_all returns the weights' gradients only and, as in
// MindSpore, does not differentiate the first input (which may then be an int; it did not compile)
TEST_CASE("GradOperation get_by_list alone leaves the inputs alone") {
  parameter<double> w(tensor<double>{6.0, 5.0}, "w");
  auto f = [&](int n, auto const& a) { return eval(a * w * static_cast<double>(n)); };
  auto const g =
      grad_operation<grad_options{.get_by_list = true}>(f, parameter_list<double>{w})(3, tensor<double>{1.0, 2.0});
  REQUIRE(g.size() == 1);
  check_values(g[0], {3.0, 6.0});
}

TEST_CASE("autograd::backward accumulates into .grad (reference api_torch_backward_accumulation)") {
  auto const& ref = adx_test::reference_case("api_torch_backward_accumulation")["expected"];
  tape_scope<var<double>> scope;
  parameter<double> w(tensor<double>{1.0, 2.0}, "w");
  CHECK_FALSE(w.grad().has_value());
  autograd::backward(sum(w * w));
  check_tensor(*w.grad(), ref["grad_after_first"]);
  autograd::backward(sum(3.0 * w));
  check_tensor(*w.grad(), ref["grad_after_second"]);
  w.zero_grad();
  CHECK_FALSE(w.grad().has_value());

  parameter<double> a(1.0, "a"), b(2.0, "b");
  autograd::backward(eval(a * b), {}, std::nullopt, false, parameter_list<double>{a});
  REQUIRE(a.grad().has_value());
  check_tensor(*a.grad(), ref["backward_inputs_a_grad"]);
  CHECK(ref["backward_inputs_b_grad"].is_null());
  CHECK_FALSE(b.grad().has_value());

  // seed 001: z = x*x*y; z.backward(); x.grad = 12, y.grad = 4, printed as torch prints them
  parameter<double> x(2.0), y(3.0);
  autograd::backward(eval(x * x * y));
  CHECK(to_string(*x.grad()) == "12.");
  CHECK(to_string(*y.grad()) == "4.");

  // errors
  CHECK_THROWS_WITH_AS(autograd::backward(eval(a * b), {}, std::nullopt, false, parameter_list<double>{}),
                       "adx: autograd::backward: 'inputs' argument to backward() cannot be empty.", value_error);
  CHECK_THROWS_WITH_AS(autograd::backward(eval(w * w)),
                       doctest::Contains("grad can be implicitly created only for scalar outputs"), value_error);
  auto const once = eval(sin(w) * w);
  autograd::backward(once, {tensor<double>{1.0, 1.0}});
  CHECK_THROWS_WITH_AS(autograd::backward(once, {tensor<double>{1.0, 1.0}}),
                       doctest::Contains("Trying to backward through the graph a second time"), gradient_error);
}
