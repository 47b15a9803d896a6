// tf.gradients and torch.autograd.grad: the seed examples, the reference cases (grad_ys with
// several ys, stop_gradients, unconnected none/zero) and every argument error.
#include <adx/adx.hpp>
#include <optional>
#include <string>
#include <thread>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
using adx_test::reference_case;

TEST_CASE("gradients: seed 003 tests 6, 7, 8 (repeated calls, total vs partial derivatives)") {
  {  // test 6: pow(a, 2.) at 2, three gradients in a row -> 4, 2, 0
    tape_scope<var<var<var<double>>>> scope;
    var<var<var<double>>> a = 2.0;
    var<var<var<double>>> y = pow(a, 2.);
    auto g1 = gradients(y, a);
    REQUIRE(g1[0].has_value());
    CHECK(primal(*g1[0]) == 4.0);
    auto g2 = gradients(*g1[0], a);
    CHECK(primal(*g2[0]) == 2.0);
    auto g3 = gradients(*g2[0], a);
    REQUIRE(g3[0].has_value());
    CHECK(*g3[0] == 0.0);
  }
  {  // tests 7 and 8: a = 0, b = 2a
    tape_scope<var<double>> scope;
    var<double> a = 0.0;
    var<double> b = 2 * a;
    auto total = gradients(a + b, std::vector{a, b});
    CHECK(*total[0] == 3.0);
    CHECK(*total[1] == 1.0);
    auto partial = gradients(a + b, std::vector{a, b}, {}, {a, b});
    CHECK(*partial[0] == 1.0);
    CHECK(*partial[1] == 1.0);
  }
}

TEST_CASE("gradients: several ys with grad_ys (reference, seed 003 tests 1 and 2)") {
  auto const& c = reference_case("grad_ys_multi_ys_linear");
  auto const& in = c["inputs"];
  tape_scope<var<double>> scope;
  tensor<var<double>> w1(adx_test::tensor_of(in["w1"])), w2(adx_test::tensor_of(in["w2"])),
      w3(adx_test::tensor_of(in["w3"])), w4(adx_test::tensor_of(in["w4"]));
  tensor<var<double>> z1 = 3.0 * w1 + 2.0 * w2 + w3;
  tensor<var<double>> z2 = -w3 + w4;
  std::vector<tensor<double>> gys{adx_test::tensor_of(c["expected"]["grad_ys"][0]),
                                  adx_test::tensor_of(c["expected"]["grad_ys"][1])};
  auto g = gradients(std::vector{z1, z2}, std::vector{w1, w2, w3, w4}, gys);
  char const* names[] = {"w1", "w2", "w3", "w4"};
  for (std::size_t i = 0; i < 4; ++i) {
    REQUIRE(g[i].has_value());
    adx_test::check_tensor(*g[i], c["expected"]["grad"][names[i]]);
  }
  // without grad_ys: ones -> seed 003 test 1: [3,3,3] [2,2,2] [0,0,0] [1,1,1]
  auto ones = gradients(std::vector{z1, z2}, std::vector{w1, w2, w3, w4});
  CHECK(to_string(*ones[0]) == "[3. 3. 3.]");
  CHECK(to_string(*ones[2]) == "[0. 0. 0.]");
  CHECK(to_string(*ones[3]) == "[1. 1. 1.]");
}

TEST_CASE("gradients: unconnected inputs, none and zero (reference, seed 003 test 9)") {
  {
    auto const& c = reference_case("unconnected_none_vs_zero");
    tape_scope<var<double>> scope;
    tensor<var<double>> x(adx_test::tensor_of(c["inputs"]["x"])), y(adx_test::tensor_of(c["inputs"]["y"]));
    var<double> z = adx_test::data(c["inputs"]["z"])[0];
    var<double> f = sum(x * x) + 0.0 * z;
    auto none = gradients(f, std::vector{x, y});
    adx_test::check_tensor(*none[0], c["expected"]["grad_none_mode"]["x"]);
    CHECK_FALSE(none[1].has_value());
    auto gz = gradients(f, z);
    REQUIRE(gz[0].has_value());  // a path through a zero derivative is connected
    CHECK(*gz[0] == 0.0);
    auto zero = gradients(f, std::vector{x, y}, {}, {}, unconnected_gradients::zero);
    adx_test::check_tensor(*zero[1], c["expected"]["grad_zero_mode"]["y"]);
  }
  {
    auto const& c = reference_case("unconnected_through_stop_gradient");
    tape_scope<var<double>> scope;
    tensor<var<double>> w1(adx_test::tensor_of(c["inputs"]["w1"])), w2(adx_test::tensor_of(c["inputs"]["w2"])),
        w3(adx_test::tensor_of(c["inputs"]["w3"]));
    tensor<var<double>> y3 = stop_gradient(w1 + w2) + w3;
    auto g = gradients(y3, std::vector{w1, w2, w3}, {tensor<double>{1.0, 2.0}});
    CHECK_FALSE(g[0].has_value());
    CHECK_FALSE(g[1].has_value());
    adx_test::check_tensor(*g[2], c["expected"]["grad_none_mode"]["w3"]);
  }
}

TEST_CASE("gradients: floor, ceil, round and trunc are unconnected (TensorFlow's None), connected 0 elsewhere") {
  tape_scope<var<double>> scope;
  var<double> x = 1.7, y = 2.0;
  CHECK_FALSE(gradients(floor(x), x)[0].has_value());
  CHECK(gradients(ceil(x), x, {}, {}, unconnected_gradients::zero)[0] == 0.0);
  auto g = gradients(round(x * y) + x * y, std::vector{x, y});  // only the product's path counts
  CHECK(*g[0] == 2.0);
  CHECK(*g[1] == 1.7);
  var<double> f = trunc(x * y);  // the result itself is connected: it is in xs
  auto gf = gradients(3.0 * f, std::vector{x, f});
  CHECK_FALSE(gf[0].has_value());
  CHECK(*gf[1] == 3.0);
  // inside a larger expression, and with a stop list beside it (y's own gradient is collected)
  auto gs = gradients(exp(floor(x) * y) + y, std::vector{x, y}, {}, {y});
  CHECK_FALSE(gs[0].has_value());
  CHECK(*gs[1] == doctest::Approx(std::exp(2.0) + 1.0).epsilon(1e-15));
  // torch and MindSpore: a zero derivative, connected
  CHECK(*autograd::grad(floor(x), x)[0] == 0.0);
  tensor<var<double>> t{1.5, -2.5, 3.2};
  auto gt = gradients(sum(ceil(t) * t), t);  // d/dt = ceil(t) from the second factor only
  CHECK(to_string(*gt[0]) == "[2. -2. 4.]");
  CHECK_FALSE(gradients(sum(trunc(t)) + sum(round(2.0 * t)), t)[0].has_value());
  CHECK(to_string(*autograd::grad(sum(floor(t)), t)[0]) == "[0. 0. 0.]");
  {  // a recording that ended takes its marks along: a later statement at the same index is not one
    var<double> z = 1.5;
    {
      tape_scope<var<double>> inner;
      var<double> const f = floor(z * z);
      CHECK(f.index() != 0);
    }
    var<double> w = z * z;
    CHECK(*gradients(w, z)[0] == 3.0);
  }
  {  // one level down (forward over reverse): the rounded value is connected there too, for torch
    var<double> const v = 1.7;
    dual<var<double>> const d(v, var<double>(1.0));
    var<double> const r = floor(d * d).val();
    CHECK(*autograd::grad(r, v)[0] == 0.0);
    CHECK_FALSE(gradients(r, v)[0].has_value());
  }
  // one level up: the outer statement is unconnected; its value is floor's one level down
  tape_scope<var<var<double>>> outer;
  var<var<double>> a = 2.5;
  auto ga = gradients(floor(a) * a, a);
  CHECK(primal(*ga[0]) == 2.0);
  CHECK_FALSE(gradients(floor(a), a)[0].has_value());
}

TEST_CASE("gradients: argument errors") {
  tape_scope<var<double>> scope;
  var<double> a = 1.0;
  var<double> y = a * a;
  CHECK(adx_test::error_message([&] {
          gradients(std::vector{y, y}, a, {1.0});
        }) == "adx: gradients: Passed 1 grad_ys for 2 ys");
  CHECK(adx_test::error_message([&] { gradients(y, a, {}, {}, static_cast<unconnected_gradients>(7)); }) ==
        "adx: gradients: Unknown value for unconnected_gradients: 7");
  CHECK(adx_test::error_message([&] {
          gradients(y, a, {}, {}, unconnected_gradients::none, static_cast<aggregation_method>(9));
        }) == "adx: gradients: Invalid aggregation_method specified 9.");
  tensor<var<double>> t{1.0, 2.0};
  tensor<var<double>> u = t * t;
  CHECK(adx_test::error_message([&] {
          gradients(u, t, {tensor<double>{1.0, 2.0, 3.0}});
        }) == "adx: gradients: grad_ys[0] has shape [3], incompatible with ys[0] of shape [2]");
  for (auto m : {aggregation_method::add_n, aggregation_method::experimental_tree,
                 aggregation_method::experimental_accumulate_n})
    CHECK(*gradients(y, a, {}, {}, unconnected_gradients::none, m)[0] == 2.0);
}

// A stop_gradients var is kept with its recording: one from a recording that ended used to stop
// whatever statement had its index by then, silently (here b = a * a: 0.41 instead of -15.99).
TEST_CASE("gradients: stop_gradients must be live variables of the same tape") {
  tape_scope<var<double>> scope;
  var<double> a = 3.0;
  var<double> stale;
  {
    tape_scope<var<double>> inner;
    stale = var<double>(1.0);
  }
  var<double> b = a * a;  // the index stale had
  var<double> c = sin(b) * a;
  CHECK_THROWS_AS(gradients(c, std::vector{a}, {}, stop_list{stale}), stale_variable_error);
  CHECK(*gradients(c, std::vector{a}, {}, stop_list{b})[0] == std::sin(9.0));  // a live stop: partial derivative
  CHECK(close(*gradients(c, std::vector{a})[0], 2 * 9.0 * std::cos(9.0) + std::sin(9.0)));
  // a var of another tape (here float's): named, not ignored
  tape_scope<var<float>> other_scope;
  var<float> other = 2.0f;
  CHECK(adx_test::error_message([&] { gradients(c, std::vector{a}, {}, stop_list{other}); }) ==
        "adx: gradients: a stop_gradients entry belongs to another tape (another scalar type, a lower nesting level "
        "than ys, or another thread's)");
  // another thread's var: stale here
  var<double> foreign;
  std::thread([&] {
    tape_scope<var<double>> s;
    foreign = var<double>(5.0);
  }).join();
  CHECK_THROWS_AS(gradients(c, std::vector{a}, {}, stop_list{foreign}), stale_variable_error);
}

TEST_CASE("gradients: a stop_gradients variable of a nested type is taken at the outputs' level, as xs are") {
  tape_scope<var<var<double>>> scope;
  var<var<double>> a = 2.0, b = 3.0;
  var<var<double>> c = a * a;
  auto const g1 = gradients(c * b, std::vector{a, b});  // [2ab, a^2] as var<double>
  REQUIRE(g1[1]);
  // d(a^2)/da through c, stopped at c: None for a, 1 for c (c lowered to its value, as xs are)
  auto const g2 = gradients(*g1[1], std::vector{a, c}, {}, stop_list{c});
  CHECK(!g2[0]);
  REQUIRE(g2[1]);
  CHECK(*g2[1] == 1.0);
  // and the same with the lowered variable given, and without the stop
  auto const g3 = gradients(*g1[1], std::vector{a, c}, {}, stop_list{c.value()});
  CHECK(!g3[0]);
  auto const g4 = gradients(*g1[1], std::vector{a});
  REQUIRE(g4[0]);
  CHECK(*g4[0] == 4.0);
}

TEST_CASE("autograd::grad: seed 001, grad_outputs, create_graph, retain_graph, allow_unused") {
  {  // seed 001: z = x*x*y at (2, 3): grad(z, x)[0] = 12
    tape_scope<var<double>> scope;
    var<double> x = 2.0, y = 3.0;
    var<double> z = x * x * y;
    auto g = autograd::grad(z, std::vector{x, y});
    CHECK(*g[0] == 12.0);
    CHECK(*g[1] == 4.0);
    // the graph was released: a second sweep through it is an error
    CHECK(adx_test::error_message([&] {
            autograd::grad(z, x);
          }).find("Trying to backward through the graph a second time") != std::string::npos);
  }
  {  // retain_graph keeps it; grad_outputs weights a tensor output
    tape_scope<var<double>> scope;
    tensor<var<double>> x{1.0, 2.0, 3.0};
    tensor<var<double>> y = x * x;
    auto g1 = autograd::grad(y, x, {tensor<double>{1.0, 0.5, -1.0}}, true);
    CHECK(to_string(*g1[0]) == "[2. 2. -6.]");
    auto g2 = autograd::grad(y, x, {tensor<double>{1.0, 1.0, 1.0}});
    CHECK(to_string(*g2[0]) == "[2. 4. 6.]");
  }
  {  // create_graph: the gradient is differentiable (pow keeps the chain: 4, 2, 0)
    tape_scope<var<var<double>>> scope;
    var<var<double>> a = 2.0;
    var<var<double>> p = pow(a, 2.);
    auto g = autograd::grad(p, a, {}, std::nullopt, true);
    CHECK(primal(*g[0]) == 4.0);
    auto h = autograd::grad(*g[0], a, {}, std::nullopt, true);
    CHECK(*h[0] == 2.0);
  }
  {  // errors, with torch's wording
    tape_scope<var<double>> scope;
    var<double> x = 1.0, unused = 2.0;
    var<double> y = 3.0 * x;
    tensor<var<double>> t{1.0, 2.0};
    tensor<var<double>> v = 2.0 * t;
    CHECK(adx_test::error_message([&] { autograd::grad(y, unused, {}, true); }) ==
          "adx: autograd::grad: One of the differentiated Tensors appears to not have been used in the graph. Pass "
          "{.allow_unused = true} (positional form: true as the sixth argument) if this is the desired behavior.");
    CHECK_FALSE(autograd::grad(y, unused, {}, true, false, true)[0].has_value());
    CHECK(adx_test::error_message([&] { autograd::grad(v, t); }) ==
          "adx: autograd::grad: grad can be implicitly created only for scalar outputs");
    CHECK(adx_test::error_message([&] {
            autograd::grad(v, t, {tensor<double>{1.0, 2.0, 3.0}});
          }) ==
          "adx: autograd::grad: Mismatch in shape: grad_output[0] has a shape of [3] and output[0] has a shape of "
          "[2].");
    CHECK(adx_test::error_message([&] {
            autograd::grad(std::vector{y, y}, x, {1.0});
          }) == "adx: autograd::grad: got 2 tensors and 1 gradients");
    CHECK(adx_test::error_message([&] { autograd::grad(var<double>::constant(1.0), x); }) ==
          "adx: autograd::grad: element 0 of tensors does not require grad and does not have a grad_fn");
    CHECK(adx_test::error_message([&] { autograd::grad(y, var<double>::constant(1.0)); }) ==
          "adx: autograd::grad: One of the differentiated Tensors does not require grad");
    CHECK(adx_test::error_message([&] { autograd::grad(y, std::vector<var<double>>{}); }) ==
          "adx: autograd::grad: grad requires non-empty inputs.");
  }
}

TEST_CASE("autograd::grad with create_graph and gradients build a differentiable gradient inside no_grad") {
  // torch's engine records a create_graph backward whatever the caller's grad mode (checked with
  // LibTorch 1.13: x = 0.5, y = x^3, g = grad(y, x, create_graph) under NoGradGuard is 0.75 and
  // requires grad; grad(g, x) is 3). tf.gradients always returns differentiable gradients.
  tape_scope<var<var<double>>> scope;
  var<var<double>> x = 0.5;
  var<var<double>> y = x * x * x;
  var<var<double>> s = sin(x);
  var<double> g, plain, t;
  {
    no_grad off;
    g = *autograd::grad(y, x, {}, true, true)[0];
    plain = *autograd::grad(y, x, {}, true, false)[0];
    t = *gradients(s, x)[0];
  }
  CHECK(g.value() == 0.75);
  CHECK(g.index() != 0);
  CHECK(close(*autograd::grad(g, x)[0], 3.0));  // 6x
  CHECK(plain.value() == 0.75);
  CHECK(plain.index() == 0);  // without create_graph: a constant, as torch's
  CHECK(close(*gradients(t, x)[0], -std::sin(0.5)));
  // and without create_graph the sweep records nothing on the tape below, inside no_grad or not
  var<var<double>> y2 = x * x * x;
  auto const before = tape<double>::current().stats().statements;
  var<double> const g2 = *autograd::grad(y2, x, {}, true, false)[0];
  CHECK(tape<double>::current().stats().statements == before);
  CHECK(g2.value() == 0.75);
  CHECK(g2.index() == 0);
}

TEST_CASE("autograd::grad and gradients take parameters as inputs: one, a std::vector, a parameter_list") {
  // torch.autograd.grad(loss, model.parameters()): d/dw sum(w * w * x) = 2 w x
  parameter<double> w(tensor<double>{1.5, 2.0}, "w"), u(tensor<double>{-1.0}, "u");
  tensor<double> const x{1.0, 2.0};
  tape_scope<var<double>> scope;
  var<double> y = sum(w * w * x) + 3.0 * sum(u);
  auto const one = autograd::grad(y, w, {}, true);
  CHECK(to_string(*one[0]) == "[3. 8.]");
  auto const listed = autograd::grad(y, parameter_list<double>{w, u}, {}, true);
  CHECK(to_string(*listed[0]) == "[3. 8.]");
  CHECK(to_string(*listed[1]) == "[3.]");
  auto const tf = gradients(y, std::vector<parameter<double>>{u, w});
  CHECK(to_string(*tf[0]) == "[3.]");
  CHECK(to_string(*tf[1]) == "[3. 8.]");
}

TEST_CASE("autograd::grad and gradients: a parameter whose recording ended is unused, not stale") {
  // as grad and backward do, the inputs' parameters get new variables first: torch's answer for
  // an input the outputs do not use is None (allow_unused), not an error
  std::optional<parameter<double>> u;
  parameter<double> w(tensor<double>{1.5, 2.0}, "w");
  {
    tape_scope<var<double>> ended;
    u.emplace(tensor<double>{-1.0}, "u");
  }
  tape_scope<var<double>> scope;
  var<double> y = sum(w * w);
  auto const torch = autograd::grad(y, parameter_list<double>{w, *u}, {}, true, false, true);
  CHECK(to_string(*torch[0]) == "[3. 4.]");
  CHECK_FALSE(torch[1].has_value());
  auto const tf = gradients(y, std::vector<parameter<double>>{w, *u});
  CHECK(to_string(*tf[0]) == "[3. 4.]");
  CHECK_FALSE(tf[1].has_value());
}

// Hessian-vector products, again and again from one forward pass: g = grad(y, x, create_graph),
// then grad(g, x) without retain_graph. torch builds the derivative's graph afresh in every
// create_graph backward (cos(x) for sin), so each round works; the partials adx recorded once
// at the forward pass (on the inner tape) are therefore never released. Checked against
// LibTorch 1.13 with the same programs.
TEST_CASE("autograd::grad: a Hessian-vector product repeated from one forward pass, as in torch") {
  using VV = var<var<double>>;
  tape_scope<VV> scope;
  VV x = 0.5;
  VV const ys[] = {sin(x), log(x), pow(x, 3.)};
  double const second[] = {-std::sin(0.5), -1 / (0.5 * 0.5), 6 * 0.5};
  for (std::size_t f = 0; f < 3; ++f)
    for (int round = 0; round < 3; ++round) {
      CAPTURE(f);
      CAPTURE(round);
      var<double> const g = *autograd::grad(ys[f], x, {}, std::nullopt, true)[0];
      CHECK(close(*autograd::grad(g, x)[0], second[f]));
    }
  // a tensor: H v for two vectors v of sum(sin(t))
  tensor<VV> t{0.5, 1.0};
  VV const s = sum(sin(t));
  auto const hv = [&](tensor<double> const& v) {
    tensor<var<double>> const g = *autograd::grad(s, t, {}, std::nullopt, true)[0];
    return *autograd::grad(g, t, {v})[0];
  };
  for (int round = 0; round < 2; ++round) {
    tensor<double> const h0 = hv(tensor<double>{1.0, 0.0}), h1 = hv(tensor<double>{0.0, 1.0});
    CHECK(close(h0.data()[0], -std::sin(0.5)));
    CHECK(h0.data()[1] == 0.0);
    CHECK(h1.data()[0] == 0.0);
    CHECK(close(h1.data()[1], -std::sin(1.0)));
  }
  // what torch refuses is still refused: the first-order graph swept twice without retain_graph
  VV const z = sin(x);
  CHECK(*autograd::grad(z, x)[0] == std::cos(0.5));
  CHECK(adx_test::error_message([&] {
          autograd::grad(z, x);
        }).find("Trying to backward through the graph a second time") != std::string::npos);
  tape_scope<var<double>> plain;
  var<double> u = 0.5;
  var<double> const w = sin(u);
  autograd::grad(w, u);
  CHECK(adx_test::error_message([&] {
          autograd::grad(w, u);
        }).find("Trying to backward through the graph a second time") != std::string::npos);
}

// What a sweep without retain_graph releases, case by case as LibTorch 1.13 does (checked with a
// C++ program against libtorch-dev; the one difference is marked).
TEST_CASE("autograd::grad: operations without saved values run again, and only the inputs' paths are released") {
  tape_scope<var<double>> scope;
  auto again = [](auto&& f) { return adx_test::error_message(f) == "no error"; };
  {  // partials +1 and -1 keep nothing: x + 1, -(x - 3), a chain of sums
    var<double> x = 1.5;
    var<double> y = x + 1;
    var<double> z = -(x - 3);
    var<double> s = x;
    for (int i = 0; i < 3; ++i) s += x;
    for (var<double> const* v : {&y, &z, &s}) {
      double const once = *autograd::grad(*v, x)[0];
      CHECK(again([&] { CHECK(*autograd::grad(*v, x)[0] == once); }));
    }
    CHECK(*autograd::grad(s, x)[0] == 4.0);
  }
  {  // any other partial is a saved value: x * x, exp(x), and x * 2 (as Python's torch; C++'s
     // mul(Tensor, Scalar) keeps only the number and runs again)
    var<double> x = 1.5;
    var<double> a = x * x, b = exp(x), c = x * 2;
    for (var<double> const* v : {&a, &b, &c}) {
      autograd::grad(*v, x);
      CHECK_FALSE(again([&] { autograd::grad(*v, x); }));
    }
  }
  {  // tensors: sum, mean, slices and concatenation run again; 2 * t and a product do not
    tensor<var<double>> t{1.5, 2.0, 3.0};
    var<double> m = mean(t);
    tensor<var<double>> ma = mean(t, 0, true);
    var<double> c = sum(concat(std::vector{t.slice(0, 0, 2), t}));
    var<double> d = sum(2.0 * t);
    var<double> p = sum(t * t);
    for (auto const* v : {&m, &c}) {
      autograd::grad(*v, t);
      CHECK(again([&] { autograd::grad(*v, t); }));
    }
    autograd::grad(ma, t, {tensor<double>{1.0}});
    CHECK(again([&] { autograd::grad(ma, t, {tensor<double>{1.0}}); }));
    CHECK(to_string(*autograd::grad(c, t)[0]) == "[2. 2. 1.]");
    for (auto const* v : {&d, &p}) {
      autograd::grad(*v, t);
      CHECK_FALSE(again([&] { autograd::grad(*v, t); }));
    }
  }
  {  // grad(y, x) releases only what leads to x: u = w * w beside it can be swept
    var<double> x = 1.5, w = 2.5;
    var<double> u = w * w;
    var<double> y = u + x * x;
    CHECK(*autograd::grad(y, x)[0] == 3.0);
    CHECK(again([&] { CHECK(*autograd::grad(u, w)[0] == 5.0); }));
    CHECK_FALSE(again([&] { autograd::grad(y, x); }));  // x * x was released
  }
  {  // a sweep toward w does not use what leads only to x, even inside one statement
    var<double> x = 1.5, w = 2.5;
    var<double> u = w * w, v = x * x;
    var<double> y = u + v;
    var<double> y2 = x + w * w;  // one statement: x's partial is 1, w's is 2w
    CHECK(*autograd::grad(y, x)[0] == 3.0);
    CHECK(again([&] { CHECK(*autograd::grad(y, w)[0] == 5.0); }));
    CHECK(*autograd::grad(y2, x)[0] == 1.0);
    CHECK(again([&] { autograd::grad(y2, x); }));
    CHECK(*autograd::grad(y2, w)[0] == 5.0);
    CHECK_FALSE(again([&] { autograd::grad(y2, w); }));
    CHECK(again([&] { autograd::grad(y2, x); }));
  }
  {  // rounding keeps nothing (torch's floor backward is a zero), but what it rounds may; sum(t + s)
     // and mean keep nothing
    var<double> x = 1.5;
    var<double> f = floor(x), f2 = floor(x * 2.0), fe = floor(exp(x));
    tensor<var<double>> t{1.5, 2.0};
    var<double> s = 0.5;
    var<double> ft = sum(floor(t)), ftt = sum(floor(t * t)), ts = sum(t + s), tm = mean(t - s);
    autograd::grad(f, x);
    CHECK(again([&] { CHECK(*autograd::grad(f, x)[0] == 0.0); }));
    for (auto const* v : {&f2, &fe}) {
      autograd::grad(*v, x);
      CHECK_FALSE(again([&] { autograd::grad(*v, x); }));
    }
    for (auto const* v : {&ft, &ts, &tm}) {
      autograd::grad(*v, t);
      CHECK(again([&] { autograd::grad(*v, t); }));
    }
    autograd::grad(ftt, t);
    CHECK_FALSE(again([&] { autograd::grad(ftt, t); }));
  }
  {  // a tensor node is judged by the partials toward the operands the sweep uses, as a statement
    tensor<var<double>> t{1.5, 2.0};
    var<double> w = 0.5, c = 3.0;
    var<double> a = sum(t + w * w), b = sum(t + exp(w)), d = sum(t + w * c);
    tensor<var<double>> u = t + w * w;  // an elementwise node read by the sum
    var<double> e = sum(u);
    for (auto const* v : {&a, &b, &d, &e}) {
      CHECK(to_string(*autograd::grad(*v, t)[0]) == "[1. 1.]");
      CHECK(again([&] { autograd::grad(*v, t); }));
    }
    autograd::grad(a, w);  // w's partial 2w is kept, and t's path runs again
    CHECK_FALSE(again([&] { autograd::grad(a, w); }));
    CHECK(again([&] { autograd::grad(a, t); }));
    // a scalar folded into the sum is judged by its own path: s's partial is 1 in both
    var<double> s = 0.25;
    var<double> f = sum(2.0 * t + s), g = sum(t * c + s), h = sum(t * s);
    for (auto const* v : {&f, &g}) {
      CHECK(*autograd::grad(*v, s)[0] == 2.0);
      CHECK(again([&] { autograd::grad(*v, s); }));
    }
    autograd::grad(h, s);  // s's partial is t: kept
    CHECK_FALSE(again([&] { autograd::grad(h, s); }));
  }
  {  // a stale input is refused before the sweep (its index names w by then), so nothing is released
    var<double> x = 1.5;
    var<double> stale;
    {
      tape_scope<var<double>> inner;
      stale = x * 3.0;
    }
    var<double> w = 2.0;
    var<double> y = x * w;
    CHECK_THROWS_AS(autograd::grad(y, stale), stale_variable_error);
    CHECK(again([&] { CHECK(*autograd::grad(y, x)[0] == 2.0); }));
  }
  {  // over several of the tape's chunks (read in recording order chunk by chunk)
    var<double> x = 1.0, w = 2.0;
    var<double> u = w * w;  // recorded first, beside x's chain
    var<double> s = x;
    for (int i = 0; i < 20000; ++i) s = s * 0.5 + x;
    var<double> y = s + u;
    CHECK(*autograd::grad(y, x)[0] == doctest::Approx(2.0).epsilon(1e-12));  // 0.5^n + (1 + ... + 0.5^(n-1))
    CHECK(again([&] { CHECK(*autograd::grad(y, w)[0] == 4.0); }));
    CHECK_FALSE(again([&] { autograd::grad(y, x); }));
  }
  {  // u on x's path is released with it
    var<double> x = 1.5, w = 2.5;
    var<double> u = x * w;
    var<double> y = u * u;
    autograd::grad(y, x);
    CHECK_FALSE(again([&] { autograd::grad(u, w); }));
  }
  {  // an input's own operation is not run for it: grad(y, u) leaves u = x * w as it was
    var<double> x = 1.5, w = 2.5;
    var<double> u = x * w;
    var<double> y = u * u;
    CHECK(*autograd::grad(y, u)[0] == 2 * 3.75);
    CHECK(again([&] { CHECK(*autograd::grad(u, w)[0] == 1.5); }));
    CHECK_FALSE(again([&] { autograd::grad(y, u); }));
  }
  {  // tensor nodes: a product beside the inputs' path stays
    tensor<var<double>> x{1.5, 2.0, 3.0}, w{1.0, 2.0, 3.0};
    var<double> u = sum(w * w);
    var<double> y = u + sum(matmul(x.reshape({1, 3}), x.reshape({3, 1})));
    CHECK(to_string(*autograd::grad(y, x)[0]) == "[3. 4. 6.]");
    CHECK(again([&] { CHECK(to_string(*autograd::grad(u, w)[0]) == "[2. 4. 6.]"); }));
    CHECK_FALSE(again([&] { autograd::grad(y, x); }));
  }
  {  // backward with inputs releases toward them; without, everything reached
    parameter<double> x{tensor<double>{1.5}, "x"}, w{tensor<double>{2.5}, "w"};
    var<double> u = sum(w * w);
    var<double> y = u + sum(x * x);
    autograd::backward(y, {}, std::nullopt, false, parameter_list<double>{x});
    CHECK(to_string(*x.grad()) == "[3.]");
    CHECK(again([&] { autograd::backward(u, {}, std::nullopt, false, parameter_list<double>{w}); }));
    CHECK(to_string(*w.grad()) == "[5.]");
    var<double> v = sum(w * w) + sum(x * x);
    autograd::backward(v);
    CHECK_FALSE(again([&] { autograd::backward(v); }));
  }
}

// Reference entries that the tests above check with literal values read here from the file, so
// that every expected value of reference_public.json is read by some test.
TEST_CASE("reference: stop_gradient (seed tests 4, 5), stop_gradients partial vs total, default grad_ys") {
  using adx_test::data;
  auto scalar = [](nlohmann::json const& t) { return data(t).at(0); };
  {
    auto const& c = reference_case("stop_gradient_seed_tests_4_5");
    auto const& e = c["expected"];
    tape_scope<var<double>> scope;
    var<double> a = scalar(c["inputs"]["a"]), b = scalar(c["inputs"]["b"]);
    var<double> const cc = a + b, c_sg = stop_gradient(cc), d = a + b;
    var<double> const e4 = c_sg + d, e5 = cc + d;
    CHECK(e4.value() == scalar(e["value_test4"]));
    CHECK(e5.value() == scalar(e["value_test5"]));
    auto const g4 = gradients(e4, std::vector{a, b});
    CHECK(*g4[0] == scalar(e["test4_grad"]["a"]));
    CHECK(*g4[1] == scalar(e["test4_grad"]["b"]));
    auto const g5 = gradients(e5, std::vector{a, b});
    CHECK(*g5[0] == scalar(e["test5_grad"]["a"]));
    CHECK(*g5[1] == scalar(e["test5_grad"]["b"]));
  }
  {
    auto const& c = reference_case("stop_gradients_argument_partial_vs_total");
    auto const& e = c["expected"];
    tape_scope<var<double>> scope;
    var<double> a = scalar(c["inputs"]["a"]);
    var<double> b = 2 * a;
    auto const total = gradients(a + b, std::vector{a, b});
    auto const partial = gradients(a + b, std::vector{a, b}, {}, {a, b});
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(*total[i] == scalar(e["total"][i]));
      CHECK(*partial[i] == scalar(e["partial"][i]));
    }
  }
  {
    auto const& c = reference_case("grad_ys_multi_ys_nonlinear");
    auto const x = data(c["inputs"]["x"]), y = data(c["inputs"]["y"]);
    auto const& want = c["expected"]["grad_default_ones"];
    for (std::size_t i = 0; i < x.size(); ++i) {
      tape_scope<var<double>> scope;
      var<double> a = x[i], b = y[i];
      auto const g = gradients(std::vector<var<double>>{a * b, sin(a)}, std::vector{a, b});  // grad_ys: ones
      CHECK(close(*g[0], data(want["x"])[i]));
      CHECK(close(*g[1], data(want["y"])[i]));
    }
  }
  {
    auto const& c = reference_case("nondiff_norm_like_at_zero");
    auto const& e = c["expected"];
    tape_scope<var<double>> scope;
    var<double> x = scalar(c["inputs"]["x"]);
    var<double> const s = sqrt(x * x);
    CHECK(std::isnan(scalar(e["sqrt_x_times_x_grad"])));
    CHECK(std::isnan(*gradients(s, x)[0]));
    var<double> p = 0.0, q = 0.0;
    auto const ga = gradients(atan2(p, q), std::vector{p, q});
    auto const gh = gradients(hypot(p, q), std::vector{p, q});
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(std::isnan(scalar(e["atan2_grad"][i])));
      CHECK(std::isnan(*ga[i]));
      CHECK(std::isnan(scalar(e["hypot_grad"][i])));
      CHECK(std::isnan(*gh[i]));
    }
  }
}
