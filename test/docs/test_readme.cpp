// The C++ examples of the README and of docs/guide.md and docs/reliability.md, run. Each ```cpp
// block has a test case below that holds its lines as they are printed there, comments included,
// with what they need around them (a lambda the page only names, a recording) and checks of the
// values its comments state. The last test case keeps them in step: each block's lines (runs of
// blanks aside) must be, in their order, lines of one test case's verbatim regions (between
// `clang-format off` and `on`); the README's shorter examples are parts of the guide's. An
// example or a value in a comment that is changed there and not here fails the suite, as does
// an example that stops compiling.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

// clang-format off
#include <adx/adx.hpp>
using namespace adx;
// clang-format on

#include "support/check.hpp"
#include "support/tensors.hpp"

using adx_test::check_values;
using adx_test::close;

namespace {

/// A line without leading or trailing blanks, each run of blanks made one space.
std::string normalised(std::string_view line) {
  std::string out;
  bool blank = false;
  for (char const c : line) {
    if (c == ' ' || c == '\t') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

std::vector<std::string> lines_of(std::filesystem::path const& file) {
  std::ifstream in(file);
  REQUIRE_MESSAGE(in.good(), "cannot open " << file.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

// ---- ## Forward mode ------------------------------------------------------------------------

TEST_CASE("README: forward mode") {
  // clang-format off
dual<double> x(2.0, 1.0);                       // value 2, tangent 1
dual<double> y = x * x * sin(x);                // one pass: value and dy/dx
double v = y.value(), dv = y.tangent();         // 4 sin 2, 4 sin 2 + 4 cos 2

auto d = derivative<3>([](auto t) { return exp(sin(t)); }, 0.4);   // {f, f', f'', f'''}
  // clang-format on
  CHECK(close(v, 4 * std::sin(2.0)));
  CHECK(close(dv, 4 * std::sin(2.0) + 4 * std::cos(2.0)));
  double const s = std::sin(0.4), c = std::cos(0.4), e = std::exp(s);
  CHECK(close(d[0], e));
  CHECK(close(d[1], c * e));
  CHECK(close(d[2], (c * c - s) * e));
  CHECK(close(d[3], c * (c * c - 3 * s - 1) * e));
}

// ---- ## Reverse mode ------------------------------------------------------------------------

TEST_CASE("README: reverse mode") {
  // clang-format off
tape_scope<var<double>> scope;                  // a recording; dropped in O(1) when it ends
var<double> x = 2.0, y = 3.0;                   // independent variables
var<double> z = x * x * y;                      // one statement, three operand entries
backward(z);
double dx = x.adjoint();                        // 12
double dy = y.adjoint();                        // 4

// Gradients of gradients: the sweep of tape<var<double>> is itself recorded on tape<double>.
tape_scope<var<var<double>>> s2;
var<var<double>> a = 2.0;
var<var<double>> p = pow(a, 2.);
backward(p);
var<double> g = a.adjoint();                    // 4, differentiable
backward(g);
double d2 = a.value().adjoint();                // 2

// Many inputs at once: one tape entry for all of them, one tape lookup for all adjoints.
std::vector<double> x0(1000, 0.5);
std::vector<var<double>> xs(1000);
make_independent(xs, x0);                       // xs[i] = var<double>(x0[i]), in bulk
var<double> f = log(xs[0] * xs[1] + xs[999]);
backward(f);
std::vector<double> gs(1000);
adjoints(xs, gs);                               // gs[i] = xs[i].adjoint()

// Whole-function helpers (each opens its own nested recording):
auto grad = gradient([](auto const& v) { return v[0] * exp(v[1]); }, std::vector{0.5, -0.3});
auto hess = hessian([](auto const& v) { return v[0] * v[0] * v[1]; }, std::vector{1.0, 2.0});
auto hv   = hvp([](auto const& v) { return v[0] * v[0] * v[1]; },
                std::vector{1.0, 2.0}, std::vector{1.0, 0.0});   // H v, one sweep
  // clang-format on
  CHECK(dx == 12);
  CHECK(dy == 4);
  CHECK(g.value() == 4);
  CHECK(d2 == 2);
  CHECK(close(gs[0], 0.5 / 0.75));
  CHECK(close(gs[1], 0.5 / 0.75));
  CHECK(close(gs[999], 1 / 0.75));
  CHECK(gs[500] == 0);
  CHECK(close(grad[0], std::exp(-0.3)));
  CHECK(close(grad[1], 0.5 * std::exp(-0.3)));
  CHECK(hess == std::vector<double>{4, 2, 2, 0});
  CHECK(hv == std::vector<double>{4, 2});
}

// ---- ## Tensors -----------------------------------------------------------------------------

/// Sends std::cout to a string while it lives.
struct cout_capture {
  std::ostringstream text;
  std::streambuf* const old = std::cout.rdbuf(text.rdbuf());
  ~cout_capture() { std::cout.rdbuf(old); }
};

TEST_CASE("README: tensors") {
  cout_capture printed;
  // clang-format off
tape_scope<var<double>> scope;
tensor<var<double>> x(tensor<double>{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}});   // independent variables
tensor<var<double>> y(tensor<double>{{0.01, 0.3, 1.1}, {0.1, 0.2, 1.3}, {2.1, 1.2, 3.3}});
tensor<var<double>> z{1.0};                      // shape [1], broadcast like numpy
var<double> out = sum(matmul(x * z, y));        // a tensor reduces to a var on the same tape
backward(out);
double dx12 = x(1, 2).adjoint();                 // 6.6; z[0].adjoint() is the broadcast sum
std::cout << matmul(x * z, y).values();          // [[0.905 0.75 2.65]\n [2.452 1.94 6.64]]
  // clang-format on
  CHECK(close(dx12, 6.6));
  // the rows of y sum to 1.41, 1.6 and 6.6: dz = sum_ik x_ik * rowsum_k
  CHECK(close(z[0].adjoint(), 0.5 * 1.41 + 0.6 * 1.6 + 0.4 * 6.6 + 1.2 * 1.41 + 1.3 * 1.6 + 1.1 * 6.6));
  CHECK(printed.text.str() == "[[0.905 0.75 2.65]\n [2.452 1.94 6.64]]");
}

// ---- ## Linear algebra ----------------------------------------------------------------------

TEST_CASE("README: linear algebra") {
  // clang-format off
tape_scope<var<double>> scope;
tensor<var<double>> A(tensor<double>{{4.0, 1.0}, {1.0, 3.0}});
tensor<var<double>> b(tensor<double>{1.0, 2.0});
var<double> f = linalg::logdet(A).item() + sum(linalg::solve(A, b));   // two tape nodes
backward(f);                                     // dA = A^-T - A^-T 1 x^T, db = A^-T 1
double dA00 = A(0, 0).adjoint();                 // 31/121
  // clang-format on
  CHECK(close(dA00, 31.0 / 121));
  CHECK(close(b[0].adjoint(), 2.0 / 11));
  CHECK(close(b[1].adjoint(), 3.0 / 11));
  CHECK(close(A(1, 0).adjoint(), -1.0 / 11 - 3.0 / 121));  // (A^-T)_10 - (A^-T 1)_1 x_0
}

// ---- ## Gradient APIs -----------------------------------------------------------------------

TEST_CASE("README: tf.gradients and torch.autograd.grad") {
  // clang-format off
tape_scope<var<double>> scope;
var<double> a = 0.0;
var<double> b = 2 * a;
auto total   = gradients(a + b, std::vector{a, b});                              // [3, 1]  (tf.gradients)
auto partial = gradients(a + b, std::vector{a, b}, {.stop_gradients = {a, b}});  // [1, 1]
auto same    = gradients(a + b, std::vector{a, b}, {}, {a, b});                  // [1, 1], positionally

var<double> x = 2.0, y = 3.0;
var<double> z = x * x * y;
auto g = autograd::grad(z, std::vector{x, y});                  // {12, 4} (torch.autograd.grad)
double dx = g.value(0);                                         // 12; value(i) throws for an empty entry
var<double> c = x * x * x;
auto h = autograd::grad(c, std::vector{x, y}, {.retain_graph = true, .allow_unused = true});  // {12, empty}
  // clang-format on
  REQUIRE(total.size() == 2);
  REQUIRE(partial.size() == 2);
  REQUIRE(same.size() == 2);
  CHECK(*total[0] == 3);
  CHECK(*total[1] == 1);
  CHECK(*partial[0] == 1);
  CHECK(*partial[1] == 1);
  CHECK(*same[0] == 1);
  CHECK(*same[1] == 1);
  REQUIRE(g.size() == 2);
  CHECK(*g[0] == 12);
  CHECK(*g[1] == 4);
  CHECK(dx == 12);
  REQUIRE(h.size() == 2);
  CHECK(h.value(0) == 12);
  CHECK_FALSE(h[1].has_value());
  CHECK_THROWS_AS((void)h.value(1), gradient_error);
}

// ---- ### mindspore.grad, value_and_grad, GradOperation --------------------------------------

namespace readme_mindspore {
// clang-format off
struct net {                                    // any callable; parameters are named leaves
  parameter<double> z{tensor<double>{1.0}, "z"};
  template <class X, class Y>
  auto operator()(X const& x, Y const& y) const { return matmul(x * z, y); }
  parameter_list<double> trainable_params() { return {z}; }
};
// clang-format on
}  // namespace readme_mindspore

TEST_CASE("README: mindspore.grad, value_and_grad and GradOperation") {
  using readme_mindspore::net;
  tape_scope<var<double>> scope;  // the parameter's recording
  // What the README's block names without defining: a function returning (output, aux), three
  // arguments for it, a sensitivity of the output's shape, and f(x, y, z) for a grad of grad.
  auto fn = [](auto const& p, auto const& q, auto const& r) { return std::make_tuple(eval(p * q * r), eval(q)); };
  tensor<double> a{2.0, 3.0}, b{5.0, 7.0}, c{11.0, 13.0};
  tensor<double> sens{{1.0, 0.0, 2.0}, {0.5, 1.0, -1.0}};
  auto f = [](auto const& p, auto const& q, auto const& r) { return eval(p * p * sum(q) * sum(r)); };
  tensor<double> z{2.0, 4.0};
  // clang-format off
net n;
tensor<double> x{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}}, y = ones<double>(shape{3, 3});

tensor<double> dx = grad(n)(x, y);                                   // grad_position=0
auto [gx, gy]     = grad(n, positions<0, 1>)(x, y);                  // grad_position=(0, 1)
auto [gi, gw]     = grad(n, position<0>, n.trainable_params())(x, y);   // (g_x, [g_z])
auto [v, g]       = value_and_grad(n)(x, y);
auto [g2, aux]    = grad(fn, positions<1, 2>, none, has_aux)(a, b, c);  // fn returns a std::tuple
auto ids          = grad(n, positions<0, 1>, none, no_aux, return_ids)(x, y);  // ((0, g_x), (1, g_y))
auto all          = grad_operation<grad_options{.get_all = true, .sens_param = true}>(n)(x, y, sens);
auto hxy          = grad(grad(f), positions<1, 2>)(x, y, z);         // grad of grad
  // clang-format on
  // out = x z y with y all ones: d sum(out) / dx_ik = 3, dy_kj = sum_i x_ik, dz = sum(x) * 3
  check_values(dx, std::vector<double>(6, 3.0));
  check_values(gx, std::vector<double>(6, 3.0));
  check_values(gy, {1.7, 1.7, 1.7, 1.9, 1.9, 1.9, 1.5, 1.5, 1.5});
  check_values(gi, std::vector<double>(6, 3.0));
  REQUIRE(gw.size() == 1);
  check_values(gw[0], {3 * 5.1});
  check_values(v, {1.5, 1.5, 1.5, 3.6, 3.6, 3.6});
  check_values(g, std::vector<double>(6, 3.0));
  check_values(std::get<0>(g2), {2.0 * 11.0, 3.0 * 13.0});  // d(a b c)/db = a c
  check_values(std::get<1>(g2), {2.0 * 5.0, 3.0 * 7.0});    // d(a b c)/dc = a b
  check_values(std::get<0>(aux), {5.0, 7.0});
  CHECK(std::get<0>(ids).first == 0);
  CHECK(std::get<1>(ids).first == 1);
  check_values(std::get<1>(ids).second, {1.7, 1.7, 1.7, 1.9, 1.9, 1.9, 1.5, 1.5, 1.5});
  // sens weights the outputs: d/dx_ik = sum_j sens_ij (y is ones), d/dy_kj = sum_i x_ik sens_ij
  check_values(std::get<0>(all), {3.0, 3.0, 3.0, 0.5, 0.5, 0.5});
  check_values(std::get<1>(all),
               {0.5 + 0.6, 0.0 + 1.2, 1.0 - 1.2, 0.6 + 0.65, 0.0 + 1.3, 1.2 - 1.3, 0.4 + 0.55, 0.0 + 1.1, 0.8 - 1.1});
  // grad(f) = 2 x sum(y) sum(z), summed: 2 sum(x) sum(y) sum(z); sum(x) = 5.1, sum(y) = 9, sum(z) = 6
  check_values(std::get<0>(hxy), std::vector<double>(9, 2 * 5.1 * 6));
  check_values(std::get<1>(hxy), {2 * 5.1 * 9, 2 * 5.1 * 9});
}

// ---- ### Function transforms, mindspore.jvp / vjp, no_grad, custom rules, check_grad --------

TEST_CASE("README: function transforms, jvp / vjp, no_grad, custom_function, check_grad") {
  // What the README's block names without defining: two networks of two arguments (the second
  // returning (output, aux)) and a variable x0 on a recording.
  auto net = [](auto const& p, auto const& q) { return eval(p * q); };
  auto net2 = [](auto const& p, auto const& q) { return std::make_tuple(eval(p * q), eval(p + q)); };
  tape_scope<var<double>> scope;
  var<double> x0 = 3.0;
  // clang-format off
auto f   = [](auto const& x) { return eval(sin(x) * x); };     // written over a generic scalar
auto lse = [](auto const& x) { return logsumexp(x); };
tensor<double> x{0.5, 1.0, 2.0}, v{1.0, 0.0, 0.0};

tensor<double> J  = functional::jacobian(f, x);               // shape [3, 3] = out + in
tensor<double> H  = functional::hessian(lse, x);              // shape [3, 3] = in + in
auto [y, Jv]      = functional::jvp(f, x, v);                 // forward mode
auto [y2, vjp_fn] = functional::vjp(f, x);                    // vjp_fn(v) = v^T J, callable again
auto [l, Hv]      = functional::hvp(lse, x, v);
auto H2 = functional::jacfwd([&](auto const& p) { return functional::jacrev(lse, p); }, x);  // = H

auto [out, jvp_]       = jvp(net, std::make_tuple(x, y), std::make_tuple(v, v));    // mindspore.jvp
auto [out1, jvp1, aux] = jvp(net2, std::make_tuple(x, y), std::make_tuple(v, v), has_aux);
auto [out2, vjp_fn2]   = vjp(net, x, y);                      // vjp_fn2(v): std::tuple(g_x, g_y)

auto const statements = tape<double>::current().stats().statements;
var<double> c;
{ no_grad ng; c = x0 * x0; }                                  // records nothing: c is a constant
CHECK(tape<double>::current().stats().statements == statements);
CHECK(c.index() == 0);
CHECK(c.value() == 9);

auto my_softplus = custom_function([](double x) { return std::log1p(std::exp(x)); },  // value
                                   [](auto x, auto dx) { return dx / (1.0 + exp(-x)); },   // jvp
                                   [](auto x, auto ybar) { return ybar / (1.0 + exp(-x)); });  // vjp
grad_check_report r = check_grad(f, x, /*order=*/2);          // r.passed, r.blocks, r.message
gradcheck(f, x);                                               // or throws gradient_error
  // clang-format on
  // f(x) = x sin x elementwise: J is diagonal with sin x + x cos x
  std::vector<double> fx, dfx;
  for (double t : {0.5, 1.0, 2.0}) {
    fx.push_back(t * std::sin(t));
    dfx.push_back(std::sin(t) + t * std::cos(t));
  }
  CHECK(J.shape() == shape{3, 3});
  check_values(J, {dfx[0], 0, 0, 0, dfx[1], 0, 0, 0, dfx[2]});
  // lse: H = diag(s) - s s^T with s = softmax(x)
  double const den = std::exp(0.5) + std::exp(1.0) + std::exp(2.0);
  double const s[3] = {std::exp(0.5) / den, std::exp(1.0) / den, std::exp(2.0) / den};
  std::vector<double> hess;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) hess.push_back((i == j ? s[i] : 0.0) - s[i] * s[j]);
  check_values(H, hess);
  check_values(H2, hess);
  check_values(y, fx);
  check_values(Jv, {dfx[0], 0, 0});
  check_values(y2, fx);
  check_values(vjp_fn(v), {dfx[0], 0, 0});
  check_values(vjp_fn(tensor<double>{0.0, 1.0, 1.0}), {0, dfx[1], dfx[2]});  // callable again
  CHECK(close(l, std::log(den)));
  check_values(Hv, {hess[0], hess[3], hess[6]});
  // net(x, y) = x y elementwise, y = f(x): the jvp along (v, v) is v y + x v
  check_values(out, {0.5 * fx[0], fx[1], 2.0 * fx[2]});
  check_values(jvp_, {fx[0] + 0.5, 0, 0});
  check_values(out1, {0.5 * fx[0], fx[1], 2.0 * fx[2]});
  check_values(jvp1, {fx[0] + 0.5, 0, 0});
  check_values(aux, {0.5 + fx[0], 1.0 + fx[1], 2.0 + fx[2]});
  check_values(out2, {0.5 * fx[0], fx[1], 2.0 * fx[2]});
  auto const [gx, gy] = vjp_fn2(v);
  check_values(gx, {fx[0], 0, 0});
  check_values(gy, {0.5, 0, 0});
  // softplus' = the logistic function, in reverse mode as in forward mode
  var<double> t = 0.7;
  var<double> sp = my_softplus(t);
  backward(sp);
  CHECK(close(sp.value(), std::log1p(std::exp(0.7))));
  CHECK(close(t.adjoint(), 1 / (1 + std::exp(-0.7))));
  CHECK(my_softplus(dual<double>(0.7, 1.0)).tangent() == doctest::Approx(1 / (1 + std::exp(-0.7))).epsilon(1e-14));
  CHECK(r.passed);
  CHECK(r.message.empty());
  CHECK(r.blocks.size() == 1 + 3);  // the Jacobian, then each of the 3 outputs' Hessians
}

// ---- ## Reliability: anomaly detection ------------------------------------------------------

TEST_CASE("README: a meta-gradient through a nested grad") {
  // clang-format off
double x1 = 0.8, y1 = 1.1, x2 = -0.4, y2 = 0.3, alpha = 0.1;
auto outer = [&](auto const& w) {
  auto g  = grad([&](auto const& v) { return (v * x1 - y1) * (v * x1 - y1); })(w);
  auto w1 = eval(w - alpha * g);                               // one SGD step, differentiable in w
  return (w1 * x2 - y2) * (w1 * x2 - y2);
};
double meta = primal(grad(outer)(0.6));                        // 0.40438...
auto nested = grad([](auto x) { return grad([&](auto y) { return x * y * y; })(2.0); })(1.5);  // 4
  // clang-format on
  double const w1 = 0.6 - alpha * 2 * (0.6 * x1 - y1) * x1;
  CHECK(close(meta, 2 * (w1 * x2 - y2) * x2 * (1 - 2 * alpha * x1 * x1)));
  CHECK(close(meta, 0.404384768, 1e-9, 1e-9));
  CHECK(primal(nested) == 4.0);
}

TEST_CASE("README: anomaly detection names the statement and the line") {
  tape_scope<var<double>> scope;
  std::string what;
  index_type ix = 0, iy = 0;  // x's and y's statements (1 and 2 in the README, a thread's first)
  try {
    // clang-format off
adx::detect_anomaly on;                // this thread, until the scope ends (scopes nest)
var<double> x = 0.0;
var<double> y = sqrt(x) * 2;           // line 12
    ix = x.index(), iy = y.index();
backward(y);                           // throws adx::anomaly_error:
// adx: anomaly: the backward sweep produced inf in the adjoint of statement 1, an independent
// variable, recorded at f.cpp:11 in main, through statement 2, mul(sqrt(x), c), recorded at
// f.cpp:12 in main: its partial with respect to operand 1 is inf and its adjoint is 1

    // clang-format on
  } catch (anomaly_error const& e) {
    what = e.what();
  }
  // the README's message, with this file's lines and function for f.cpp's
  CHECK(iy == ix + 1);
  CHECK(what.starts_with("adx: anomaly: the backward sweep produced inf in the adjoint of statement " +
                         std::to_string(ix) + ", an independent variable, recorded at "));
  CHECK(what.find("test_readme.cpp:") != std::string::npos);
  CHECK(what.find(", through statement " + std::to_string(iy) + ", mul(sqrt(x), c), recorded at ") !=
        std::string::npos);
  CHECK(what.ends_with(": its partial with respect to operand 1 is inf and its adjoint is 1"));
}

// ---- the check that keeps README.md and this file in step -------------------------------------

// ---- ### Optimisers, learning-rate schedules, clipping (torch.optim) ---------------------------

TEST_CASE("guide: an optimiser, a schedule and clipping in a torch-style loop") {
  // What the guide's block names without defining: a model, its data and its loss.
  nn::dense<double> model(2, 1, /*seed=*/4);
  tensor<double> const x{{1.0, 2.0}, {-1.0, 0.5}, {0.25, -2.0}, {0.0, 1.0}};
  tensor<double> const y(shape{4, 1}, std::vector<double>{1.0, -0.5, 2.0, 0.0});
  auto const loss = [](auto const& m, auto const& in, auto const& target) { return nn::mse_loss(m(in), target); };
  double const before = primal(var<double>(loss(model, x, y)));
  // clang-format off
optim::adam<double> opt(model.trainable_params(), {.lr = 1e-3, .weight_decay = 1e-4});
optim::cosine_annealing_lr schedule(opt, /*t_max=*/100);
for (int epoch = 0; epoch < 100; ++epoch) {
  tape_scope<var<double>> step;                // this step's recording, dropped at its end
  opt.zero_grad();                             // empties every parameter's grad()
  autograd::backward(loss(model, x, y));       // accumulates into grad()
  optim::clip_grad_norm(opt.params(), 1.0);    // optional: total 2-norm at most 1
  opt.step();
  schedule.step();
}
  // clang-format on
  // Adam moves each weight by at most about lr per step; the loss falls, and after t_max steps
  // the cosine schedule is at its floor, eta_min = 0
  CHECK(primal(var<double>(loss(model, x, y))) < before);
  CHECK(std::abs(opt.lr()) < 1e-18);
  CHECK(schedule.last_epoch() == 100);
}

TEST_CASE("README and docs: each C++ example is in one test case above, verbatim") {
  // this file's verbatim regions (between clang-format off and on), per test case; a region at
  // namespace scope (unindented: the includes, a struct) belongs to the test case after it
  std::vector<std::vector<std::string>> cases;
  std::vector<std::string> pending;
  bool verbatim = false, outside = false;
  for (std::string const& raw : lines_of(std::filesystem::path(ADX_SOURCE_DIR) / "test/docs/test_readme.cpp")) {
    std::string const line = normalised(raw);
    if (line.starts_with("TEST_CASE(")) cases.push_back(std::exchange(pending, {}));
    if (line == "// clang-format off" || line == "// clang-format on") {
      verbatim = line.ends_with("off");
      outside = raw.starts_with("//");
      continue;
    }
    if (verbatim) (outside || cases.empty() ? pending : cases.back()).push_back(line);
  }
  // The pages' blocks: each line with its line number. A page's examples may be shorter forms
  // of an example in full (the README's of the guide's): each must be one test case's lines.
  std::size_t checked = 0, n_blocks = 0;
  std::ostringstream missing;
  for (char const* page : {"README.md", "docs/guide.md", "docs/reliability.md"}) {
    std::vector<std::vector<std::pair<std::size_t, std::string>>> blocks;
    std::vector<std::string> const lines = lines_of(std::filesystem::path(ADX_SOURCE_DIR) / page);
    bool in_block = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::string const line = normalised(lines[i]);
      if (!in_block) {
        in_block = line == "```cpp";
        if (in_block) blocks.emplace_back();
      } else if (line.starts_with("```")) {
        in_block = false;
      } else if (!line.empty()) {
        blocks.back().emplace_back(i + 1, line);
      }
    }
    CHECK_MESSAGE(!in_block, page << ": a block is not closed");
    // The lines of block b not found, in order, among the verbatim lines of case c.
    auto const unmatched = [&](std::size_t b, std::size_t c) {
      std::vector<std::pair<std::size_t, std::string>> out;
      auto at = cases[c].begin();
      for (auto const& [number, line] : blocks[b]) {
        auto const found = std::find(at, cases[c].end(), line);
        if (found == cases[c].end())
          out.emplace_back(number, line);
        else
          at = found + 1;
      }
      return out;
    };
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      checked += blocks[b].size();
      ++n_blocks;
      // the case that lacks the fewest of its lines, named if it lacks any
      std::size_t best = 0, fewest = blocks[b].size() + 1;
      for (std::size_t c = 0; c < cases.size(); ++c) {
        std::size_t const lacking = unmatched(b, c).size();
        if (lacking < fewest) best = c, fewest = lacking;
      }
      if (fewest == 0) continue;
      missing << "\n  the example at " << page << ":" << blocks[b].front().first
              << ": no test case has all its lines, in order, in a clang-format off region; number " << best + 1
              << " comes closest and lacks:";
      if (best < cases.size())
        for (auto const& [number, line] : unmatched(b, best))
          missing << "\n    " << page << ":" << number << ": " << line;
    }
  }
  CHECK(n_blocks >= 14);
  CHECK(checked >= 150);
  CHECK_MESSAGE(missing.str().empty(), "examples not in test/docs/test_readme.cpp:" << missing.str());
}
