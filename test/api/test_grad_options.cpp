// The options forms of autograd::grad, autograd::backward and gradients (designated
// initialisers), against the positional forms on closed-form derivatives; which form a braced
// list picks; gradient_list's checked value(i) and its messages.
#include <adx/adx.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;

static_assert(std::is_aggregate_v<autograd::grad_options<double>>);
static_assert(std::is_aggregate_v<autograd::backward_options<tensor<double>>>);
static_assert(std::is_aggregate_v<gradients_options<double>>);
static_assert(std::is_base_of_v<std::vector<std::optional<double>>, gradient_list<double>>);

TEST_CASE("autograd::grad options: the positional form's numbers (y = x^3 at 2: 12, then 12)") {
  tape_scope<var<var<double>>> scope;
  var<var<double>> x = 2.0;
  var<var<double>> y = x * x * x;
  // create_graph, and retain_graph left unset: it follows create_graph, so the graph stays
  auto const first = autograd::grad(y, x, {.create_graph = true});
  REQUIRE(first.size() == 1);
  var<double> const g = first.value(0);
  CHECK(g.value() == 12.0);  // 3 x^2
  CHECK(g.index() != 0);     // differentiable
  var<double> const p = *autograd::grad(y, x, {}, std::nullopt, true)[0];
  CHECK(p.value() == g.value());
  CHECK(autograd::grad(g, x).value(0) == 12.0);  // 6 x
  CHECK(*autograd::grad(p, x)[0] == 12.0);
  // without create_graph the gradient is a constant, in both forms
  var<double> const c = autograd::grad(y, x, {.retain_graph = true}).value(0);
  var<double> const cp = *autograd::grad(y, x, {}, true)[0];
  CHECK(c.value() == 12.0);
  CHECK(c.index() == 0);
  CHECK(cp.index() == 0);
}

TEST_CASE("autograd::grad options: grad_outputs weights the outputs as the positional list does") {
  tape_scope<var<double>> scope;
  tensor<var<double>> x{1.0, 2.0, 3.0};
  tensor<var<double>> y = x * x;
  std::vector<tensor<double>> const w{tensor<double>{1.0, 0.5, -1.0}};
  auto const opt = autograd::grad(y, x, {.grad_outputs = w, .retain_graph = true});
  auto const pos = autograd::grad(y, x, w, true);
  CHECK(to_string(opt.value(0)) == "[2. 2. -6.]");
  CHECK(to_string(*pos[0]) == "[2. 2. -6.]");
  auto const braced = autograd::grad(y, x, {.grad_outputs = {tensor<double>{1.0, 1.0, 1.0}}, .retain_graph = true});
  CHECK(to_string(braced.value(0)) == "[2. 4. 6.]");
  // the options form checks grad_outputs as the positional one does
  CHECK_THROWS_WITH_AS(autograd::grad(y, x, {.grad_outputs = {tensor<double>{1.0}}, .retain_graph = true}),
                       "adx: autograd::grad: Mismatch in shape: grad_output[0] has a shape of [1] and output[0] has a "
                       "shape of [3].",
                       value_error);
}

TEST_CASE("a braced list without designators is still the positional weights") {
  tape_scope<var<double>> scope;
  var<double> x = 2.0;
  var<double> y1 = x * x, y2 = 5.0 * x;
  // {2.0, 3.0}: two weights, 2 * 2x + 3 * 5 = 23
  CHECK(autograd::grad(std::vector{y1, y2}, x, {2.0, 3.0}, true).value(0) == 23.0);
  CHECK(autograd::grad(std::vector{y1, y2}, x, {2.0, 3.0}).value(0) == 23.0);
  // {}: no weights and every default, in either form
  var<double> z = x * x * x;
  CHECK(autograd::grad(z, x, {}).value(0) == 12.0);

  // one 2x2 tensor written as a nested list: one weight for one output, not two
  tensor<var<double>> t{{1.0, 2.0}, {3.0, 4.0}};
  tensor<var<double>> s = t * t;
  auto const g = autograd::grad(s, t, {{{1.0, 0.0}, {0.0, 1.0}}});
  CHECK(to_string(g.value(0)) == "[[2. 0.]\n [0. 8.]]");

  // an options object made beforehand
  var<double> u = 3.0, unused = 1.0;
  var<double> v = u * u;
  autograd::grad_options<double> o;
  o.retain_graph = true;
  o.allow_unused = true;
  auto const h = autograd::grad(v, std::vector{u, unused}, o);
  CHECK(h.value(0) == 6.0);
  CHECK_FALSE(h[1].has_value());
}

TEST_CASE("autograd::grad options: retain_graph false releases the graph, as the positional form") {
  tape_scope<var<double>> scope;
  var<double> x = 2.0, y = 3.0;
  std::string const released = "Trying to backward through the graph a second time";
  {
    var<double> z = x * x * y;
    CHECK(autograd::grad(z, x, {.retain_graph = false}).value(0) == 12.0);
    CHECK_THROWS_WITH_AS(autograd::grad(z, x, {.retain_graph = false}), doctest::Contains(released.c_str()),
                         gradient_error);
  }
  {  // the positional form, for comparison
    var<double> z = x * x * y;
    CHECK(*autograd::grad(z, x, {}, false)[0] == 12.0);
    CHECK_THROWS_WITH_AS(autograd::grad(z, x, {}, false), doctest::Contains(released.c_str()), gradient_error);
  }
  {  // the message names the C++ spelling of retain_graph
    var<double> z = x * x * y;
    autograd::grad(z, x);
    CHECK_THROWS_WITH_AS(autograd::grad(z, x), doctest::Contains("Pass {.retain_graph = true}"), gradient_error);
  }
  {  // retain_graph true keeps it; so does create_graph with retain_graph unset
    var<double> z = x * x * y;
    CHECK(autograd::grad(z, x, {.retain_graph = true}).value(0) == 12.0);
    CHECK(autograd::grad(z, x, {.create_graph = true}).value(0) == 12.0);
    CHECK(autograd::grad(z, y, {.retain_graph = false, .create_graph = true}).value(0) == 4.0);
    CHECK_THROWS_AS(autograd::grad(z, y), gradient_error);
  }
}

TEST_CASE("allow_unused: an empty entry, and value(i) names the input") {
  tape_scope<var<double>> scope;
  var<double> x = 1.0, unused = 2.0;
  var<double> y = 3.0 * x;
  auto const g = autograd::grad(y, std::vector{x, unused}, {.retain_graph = true, .allow_unused = true});
  auto const p = autograd::grad(y, std::vector{x, unused}, {}, true, false, true);
  REQUIRE(g.size() == 2);
  CHECK(*g[0] == *p[0]);
  CHECK(g.value(0) == 3.0);
  CHECK_FALSE(g[1].has_value());
  CHECK_FALSE(p[1].has_value());
  CHECK_THROWS_WITH_AS(g.value(1), "adx: autograd::grad: input 1 received no gradient (allow_unused)", gradient_error);
  CHECK_THROWS_WITH_AS(g.value(2), "adx: autograd::grad: no input 2 (there are 2)", value_error);
  // still a std::vector of std::optional
  std::vector<std::optional<double>> const plain = g;
  CHECK(plain.size() == 2);
  // without allow_unused, the message names the C++ spelling
  CHECK_THROWS_WITH_AS(autograd::grad(y, std::vector{x, unused}, {.retain_graph = true}),
                       "adx: autograd::grad: One of the differentiated Tensors appears to not have been used in the "
                       "graph. Pass {.allow_unused = true} (positional form: true as the sixth argument) if this is "
                       "the desired behavior.",
                       value_error);

  // parameters are named in the message
  parameter<double> a(tensor<double>{1.5, 2.0}, "a"), b(tensor<double>{-1.0}, "b"), w(tensor<double>{4.0}, "w");
  var<double> l = sum(a * a) + 3.0 * sum(b);
  auto const named = autograd::grad(l, std::vector<parameter<double>>{a, b, w}, {.allow_unused = true});
  CHECK(to_string(named.value(0)) == "[3. 4.]");
  CHECK(to_string(named.value(1)) == "[3.]");
  CHECK_THROWS_WITH_AS(named.value(2), "adx: autograd::grad: input 2 ('w') received no gradient (allow_unused)",
                       gradient_error);
  var<double> l2 = sum(b * b);
  auto const listed = autograd::grad(l2, parameter_list<double>{w, b}, {.allow_unused = true});
  CHECK_THROWS_WITH_AS(listed.value(0), "adx: autograd::grad: input 0 ('w') received no gradient (allow_unused)",
                       gradient_error);
  CHECK(to_string(listed.value(1)) == "[-2.]");
  // moved out of a temporary list
  var<double> l3 = sum(w * w);
  tensor<double> const dw = autograd::grad(l3, w).value(0);
  CHECK(to_string(dw) == "[8.]");
}

TEST_CASE("autograd::backward options accumulate into parameters as the positional form") {
  tape_scope<var<double>> scope;
  parameter<double> w(tensor<double>{1.0, 2.0}, "w");
  autograd::backward(sum(w * w), {.retain_graph = false});  // 2w
  REQUIRE(w.grad().has_value());
  CHECK(to_string(*w.grad()) == "[2. 4.]");
  autograd::backward(sum(3.0 * w), {});  // + 3
  CHECK(to_string(*w.grad()) == "[5. 7.]");
  autograd::backward(eval(w * w), {.grad_tensors = {tensor<double>{1.0, 0.5}}});  // + 2w [1, 0.5]
  CHECK(to_string(*w.grad()) == "[7. 9.]");
  w.zero_grad();

  // inputs: only those parameters, as the positional form's last argument
  parameter<double> a(1.0, "a"), b(2.0, "b");
  autograd::backward(eval(a * b), {.inputs = parameter_list<double>{a}});
  REQUIRE(a.grad().has_value());
  CHECK(to_string(*a.grad()) == "2.");
  CHECK_FALSE(b.grad().has_value());
  autograd::backward(eval(a * b), {}, std::nullopt, false, parameter_list<double>{a});
  CHECK(to_string(*a.grad()) == "4.");
  CHECK_FALSE(b.grad().has_value());
  CHECK_THROWS_WITH_AS(autograd::backward(eval(a * b), {.inputs = parameter_list<double>{}}),
                       "adx: autograd::backward: 'inputs' argument to backward() cannot be empty.", value_error);
  // a braced list of parameters, and a std::vector of them (copies: the same leaves)
  autograd::backward(eval(a * b), {.inputs = {b}});  // d(ab)/db = a
  CHECK(to_string(*b.grad()) == "1.");
  autograd::backward(eval(a * b), {.inputs = std::vector{a, b}});
  CHECK(to_string(*a.grad()) == "6.");
  CHECK(to_string(*b.grad()) == "2.");
  autograd::backward_options<tensor<double>> kept{.inputs = std::vector{a}};  // they outlive that vector
  autograd::backward(eval(a * b), kept);
  CHECK(to_string(*a.grad()) == "8.");
  a.zero_grad();
  b.zero_grad();

  // retain_graph: a second sweep through a released graph throws, one through a kept graph adds
  auto const once = eval(sin(w) * w);
  autograd::backward(once, {.grad_tensors = {tensor<double>{1.0, 1.0}}, .retain_graph = true});
  autograd::backward(once, {.grad_tensors = {tensor<double>{1.0, 1.0}}});
  CHECK_THROWS_WITH_AS(autograd::backward(once, {.grad_tensors = {tensor<double>{1.0, 1.0}}}),
                       doctest::Contains("Trying to backward through the graph a second time"), gradient_error);
  // d/dw sin(w) w = cos(w) w + sin(w), twice
  REQUIRE(w.grad().has_value());
  CHECK(adx_test::close((*w.grad())[0], 2 * (std::cos(1.0) + std::sin(1.0))));
  CHECK(adx_test::close((*w.grad())[1], 2 * (2 * std::cos(2.0) + std::sin(2.0))));
}

TEST_CASE("gradients options: tf.gradients' keywords give the positional numbers") {
  tape_scope<var<double>> scope;
  var<double> a = 0.0;
  var<double> b = 2 * a;
  auto const total = gradients(a + b, std::vector{a, b}, {});
  auto const partial = gradients(a + b, std::vector{a, b}, {.stop_gradients = {a, b}});
  auto const partial_pos = gradients(a + b, std::vector{a, b}, {}, {a, b});
  CHECK(total.value(0) == 3.0);
  CHECK(total.value(1) == 1.0);
  CHECK(partial.value(0) == 1.0);
  CHECK(partial.value(1) == 1.0);
  CHECK(*partial_pos[0] == 1.0);
  CHECK(*partial_pos[1] == 1.0);

  // grad_ys and aggregation_method: 2 d(x^2)/dx + 3 d(5x)/dx at 2 = 23
  var<double> x = 2.0, unused = 1.0;
  var<double> y1 = x * x, y2 = 5.0 * x;
  auto const weighted =
      gradients(std::vector{y1, y2}, x,
                {.grad_ys = {2.0, 3.0}, .aggregation_method = aggregation_method::experimental_accumulate_n});
  CHECK(weighted.value(0) == 23.0);
  CHECK(*gradients(std::vector{y1, y2}, x, {2.0, 3.0})[0] == 23.0);

  // unconnected_gradients: an empty entry (value(i) says which), or zeros
  auto const none = gradients(y1, std::vector{x, unused});
  CHECK(none.value(0) == 4.0);
  CHECK_FALSE(none[1].has_value());
  CHECK_THROWS_WITH_AS(none.value(1), "adx: gradients: input 1 received no gradient (unconnected_gradients::none)",
                       gradient_error);
  auto const zero = gradients(y1, std::vector{x, unused}, {.unconnected_gradients = unconnected_gradients::zero});
  CHECK(zero.value(1) == 0.0);
  CHECK_THROWS_WITH_AS(gradients(y1, x, {.unconnected_gradients = static_cast<unconnected_gradients>(7)}),
                       "adx: gradients: Unknown value for unconnected_gradients: 7", value_error);
}

TEST_CASE("gradients: stop_gradients takes parameters and a parameter_list's entries") {
  nn::dense<double> d(2, 1, 5);
  tensor<double> const x{{1.0, 2.0}};
  tape_scope<var<double>> scope;
  tensor<var<double>> const y = d(x);
  var<double> const l = sum(y * y);
  // stopping the weight changes nothing for the weight's own gradient (it is an input here)
  auto const g = gradients(l, d.trainable_params(), {.stop_gradients = {d.weight}});
  auto const h = gradients(l, d.trainable_params(), {.stop_gradients = stop_list{d.trainable_params()}});
  REQUIRE(g.size() == 2);
  CHECK(g.value(0)(0, 1) == h.value(0)(0, 1));
  CHECK(g.value(1)(0) == 2 * primal(y(0, 0)));
}
