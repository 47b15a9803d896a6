// The function transforms (adx::functional), mindspore.jvp / vjp, no_grad, custom_function and
// check_grad: MindSpore's documented numbers, Jacobians and Hessians against finite differences,
// the scalar adx::hessian and each other, nesting, the errors and their messages.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <thread>

#include "support/check.hpp"
#include "support/modes.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::check_values;
using adx_test::close;

namespace {

void check_same(tensor<double> const& a, tensor<double> const& b, double rtol = 1e-12, double atol = 1e-12) {
  REQUIRE(a.shape() == b.shape());
  check_values(a, std::vector<double>(b.begin(), b.end()), rtol, atol);
}

/// Central-difference Jacobian of f at x (both tensor<double>), shape out + in.
template <class F>
tensor<double> fd_jacobian(F const& f, tensor<double> const& x, double h = 1e-6) {
  tensor<double> const y0 = eval(f(x));
  std::vector<double> j(y0.size() * x.size());
  for (std::size_t c = 0; c < x.size(); ++c) {
    tensor<double> up = x, dn = x;
    up[c] += h;
    dn[c] -= h;
    tensor<double> const yu = eval(f(up)), yd = eval(f(dn));
    for (std::size_t k = 0; k < y0.size(); ++k) j[k * x.size() + c] = (yu[k] - yd[k]) / (2 * h);
  }
  shape sh = y0.shape();
  for (std::size_t d : x.shape()) sh.push_back(d);
  return tensor<double>(sh, j);
}

tensor<double> const mx{{1.0, 2.0}, {3.0, 4.0}};
tensor<double> const ones22{{1.0, 1.0}, {1.0, 1.0}};
auto const cube_plus = [](auto const& x, auto const& y) { return eval(x * x * x + y); };

}  // namespace

// ---- MindSpore ------------------------------------------------------------------------------

TEST_CASE("mindspore.jvp: the documented example x**3 + y") {
  auto const [out, jv] = jvp(cube_plus, std::make_tuple(mx, mx), std::make_tuple(ones22, ones22));
  check_values(out, {2, 10, 30, 68});
  check_values(jv, {4, 13, 28, 49});
  CHECK(jv.shape() == shape{2, 2});
}

TEST_CASE("mindspore.vjp: the documented example, one gradient per input") {
  auto const [out, vjp_fn] = vjp(cube_plus, mx, mx);
  check_values(out, {2, 10, 30, 68});
  auto const [gx, gy] = vjp_fn(ones22);
  check_values(gx, {3, 12, 27, 48});  // 3 x^2
  check_values(gy, {1, 1, 1, 1});
  // a second call with another v sweeps the same recording again
  auto const [gx2, gy2] = vjp_fn(tensor<double>{{1.0, 0.0}, {2.0, -1.0}});
  check_values(gx2, {3, 0, 54, -48});
  check_values(gy2, {1, 0, 2, -1});
  // one input: still a tuple (GradOperation get_all)
  auto const [o1, f1] = vjp([](auto const& x) { return eval(x * x); }, mx);
  auto const g1 = f1(ones22);
  static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(g1)>> == 1);
  check_values(std::get<0>(g1), {2, 4, 6, 8});
  check_values(o1, {1, 4, 9, 16});
}

TEST_CASE("mindspore.jvp / vjp with has_aux: aux is the 2nd output itself, or the tuple of outputs 2..n") {
  auto two = [](auto const& x, auto const& y) { return std::make_tuple(eval(x * x * x + y), eval(2.0 * x)); };
  auto const [o1, j1, aux] = jvp(two, std::make_tuple(mx, mx), std::make_tuple(ones22, ones22), has_aux);
  check_values(o1, {2, 10, 30, 68});
  check_values(j1, {4, 13, 28, 49});
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(aux)>, tensor<double>>);
  check_values(aux, {2, 4, 6, 8});

  auto three = [](auto const& x) { return std::make_tuple(eval(x * x), eval(x + 1.0), eval(x * 3.0)); };
  auto const [p1, pj, paux] = jvp(three, mx, ones22, has_aux);
  check_values(pj, {2, 4, 6, 8});
  check_values(std::get<0>(paux), {2, 3, 4, 5});
  check_values(std::get<1>(paux), {3, 6, 9, 12});

  auto const [v1, vfn, vaux] = vjp(two, mx, mx, has_aux);
  check_values(v1, {2, 10, 30, 68});
  check_values(vaux, {2, 4, 6, 8});
  auto const [gx, gy] = vfn(ones22);  // only the first output is differentiated
  check_values(gx, {3, 12, 27, 48});
  check_values(gy, {1, 1, 1, 1});

  // without has_aux, several outputs give tuples of values and tangents
  auto const [vals, tans] = jvp(two, std::make_tuple(mx, mx), std::make_tuple(ones22, ones22));
  check_values(std::get<1>(vals), {2, 4, 6, 8});
  check_values(std::get<1>(tans), {2, 2, 2, 2});
  auto const [vals2, vfn2] = vjp(two, mx, mx, no_aux);
  auto const [hx, hy] = vfn2(std::make_tuple(ones22, ones22));  // the sum of both outputs' VJPs
  check_values(hx, {5, 14, 29, 50});
  check_values(hy, {1, 1, 1, 1});
  check_values(std::get<0>(vals2), {2, 10, 30, 68});
}

TEST_CASE("mindspore.jvp / vjp: shapes of v are checked, naming the argument and both shapes") {
  tensor<double> const v3{1.0, 2.0, 3.0};
  CHECK_THROWS_WITH_AS(jvp(cube_plus, std::make_tuple(mx, mx), std::make_tuple(ones22, v3)),
                       doctest::Contains("v[1] has shape [3] but inputs[1] has shape [2, 2]"), shape_error);
  auto const [out, vjp_fn] = vjp(cube_plus, mx, mx);
  CHECK_THROWS_WITH_AS(vjp_fn(v3), doctest::Contains("v has shape [3] but the output has shape [2, 2]"), shape_error);
}

// ---- jacobian -------------------------------------------------------------------------------

TEST_CASE("functional::jacobian: out.shape + in.shape, forward = reverse = finite differences") {
  auto f = [](auto const& x) { return eval(sin(x) * x + exp(x * 0.5)); };
  tensor<double> const x{{0.5, -1.0, 2.0}, {0.1, 0.7, -0.3}};
  auto const jf = functional::jacfwd(f, x);
  auto const jr = functional::jacrev(f, x);
  auto const ja = functional::jacobian(f, x);
  CHECK(jf.shape() == shape{2, 3, 2, 3});
  check_same(jf, jr);
  check_same(ja, jr);
  check_same(jr, fd_jacobian(f, x), 1e-6, 1e-8);

  // a reduction to fewer outputs (reverse is chosen) and a broadcast to more (forward)
  tensor<double> const w{{1.0, 2.0, -1.0}, {0.5, 0.0, 3.0}};
  auto g = [&](auto const& v) { return matmul(w, tanh(v)); };  // [3] -> [2]
  tensor<double> const v{0.2, -0.4, 1.1};
  auto const jg = functional::jacobian(g, v);
  CHECK(jg.shape() == shape{2, 3});
  check_same(jg, functional::jacfwd(g, v));
  check_same(jg, fd_jacobian(g, v), 1e-6, 1e-8);
  auto h = [](auto const& s) { return eval(s * tensor<double>{1.0, 2.0, 3.0, 4.0}); };  // [1] -> [4]
  tensor<double> const s1{0.5};
  check_same(functional::jacobian(h, s1), functional::jacrev(h, s1));
  check_values(functional::jacobian(h, s1), {1, 2, 3, 4});
}

TEST_CASE("functional::jacobian: scalar and std::vector inputs and outputs, tuple inputs") {
  auto const j0 = functional::jacobian([](auto const& x) { return x * x * x; }, 2.0);
  CHECK(j0.shape() == shape{});
  CHECK(j0.item() == 12.0);
  auto vf = [](auto const& x) {
    using S = std::remove_cvref_t<decltype(x[0])>;
    return std::vector<S>{x[0] * x[1], sin(x[0]), x[1] * x[1] * x[1]};
  };
  std::vector<double> const xv{0.3, 2.0};
  auto const jv = functional::jacobian(vf, xv);
  CHECK(jv.shape() == shape{3, 2});
  check_values(jv, {2.0, 0.3, std::cos(0.3), 0.0, 0.0, 12.0});
  check_same(jv, functional::jacrev(vf, xv));

  auto two = [](auto const& a, auto const& b) { return eval(a * b + b); };
  tensor<double> const a{1.0, 2.0}, b{3.0, 4.0};
  auto const [ja, jb] = functional::jacobian(two, std::make_tuple(a, b));
  check_values(ja, {3, 0, 0, 4});
  check_values(jb, {2, 0, 0, 3});
  auto const [ra, rb] = functional::jacrev(two, std::make_tuple(a, b));
  check_same(ra, ja);
  check_same(rb, jb);
}

// ---- hessian, hvp ---------------------------------------------------------------------------

TEST_CASE("functional::hessian of logsumexp: diag(p) - p p^T, finite differences, the scalar hessian") {
  tensor<double> const x{0.5, 1.0, -2.0, 0.25};
  auto lse = [](auto const& t) { return logsumexp(t); };
  auto const h = functional::hessian(lse, x);
  CHECK(h.shape() == shape{4, 4});
  double z = 0;
  for (double e : x) z += std::exp(e);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      double const pi = std::exp(x[i]) / z, pj = std::exp(x[j]) / z;
      CHECK(close(h(i, j), (i == j ? pi : 0.0) - pi * pj, 1e-12, 1e-14));
    }
  auto grad_of = [&](tensor<double> const& p) { return functional::jacrev(lse, p); };
  check_same(h, fd_jacobian(grad_of, x), 1e-6, 1e-8);

  auto f = [](auto const& v) { return v[0] * exp(v[1]) + v[1] * v[2] * v[2] + log(v[0] + v[2]); };
  std::vector<double> const xv{0.5, -0.3, 1.2};
  auto const hs = hessian(f, xv);  // the scalar entry point
  auto const hf = functional::hessian(f, xv);
  CHECK(hf.shape() == shape{3, 3});
  check_values(hf, hs);
}

TEST_CASE("functional::hessian of a small MLP's loss with respect to its weights") {
  tensor<double> const in{{0.5, -1.0, 0.3}, {1.5, 0.2, -0.7}};  // 2 samples, 3 features
  tensor<double> const target{{0.1, -0.2}, {0.4, 0.3}};
  auto loss = [&](auto const& w) {  // w: [3, 2]
    auto const hidden = tanh(matmul(in, w));
    auto const d = eval(hidden - target);
    return sum(d * d) * 0.5;
  };
  tensor<double> const w{{0.1, -0.3}, {0.8, 0.2}, {-0.5, 0.4}};
  auto const h = functional::hessian(loss, w);
  CHECK(h.shape() == shape{3, 2, 3, 2});
  auto grad_of = [&](tensor<double> const& p) { return functional::jacrev(loss, p); };
  check_same(h, fd_jacobian(grad_of, w), 1e-6, 1e-8);
  // symmetric, and the same by jacfwd(jacrev) and jacrev(jacrev)
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 6; ++j) CHECK(close(h[i * 6 + j], h[j * 6 + i], 1e-12, 1e-14));
  check_same(functional::jacfwd([&](auto const& p) { return functional::jacrev(loss, p); }, w), h, 1e-12, 1e-14);
  check_same(functional::jacrev([&](auto const& p) { return functional::jacrev(loss, p); }, w), h, 1e-12, 1e-14);
}

TEST_CASE("functional::hessian of a function of two inputs: blocks H[i][j]") {
  auto f = [](auto const& a, auto const& b) { return sum(a * b * b); };
  tensor<double> const a{1.0, 2.0}, b{3.0, -1.0};
  auto const h = functional::hessian(f, std::make_tuple(a, b));
  check_values(std::get<0>(std::get<0>(h)), {0, 0, 0, 0});
  check_values(std::get<1>(std::get<0>(h)), {6, 0, 0, -2});  // d/da_i d/db_j = 2 b_i [i == j]
  check_values(std::get<0>(std::get<1>(h)), {6, 0, 0, -2});
  check_values(std::get<1>(std::get<1>(h)), {2, 0, 0, 4});  // 2 a_i [i == j]
}

TEST_CASE("functional::hessian of a non-scalar output is an error, as in torch") {
  auto f = [](auto const& x) { return eval(x * x); };
  CHECK_THROWS_WITH_AS(functional::hessian(f, tensor<double>{1.0, 2.0}),
                       doctest::Contains("The Tensor returned by the function given to hessian should contain a "
                                         "single element (it has shape [2])"),
                       value_error);
  // a one-element tensor is fine
  auto g = [](auto const& x) { return sum(x * x * x, 0, true); };
  check_values(functional::hessian(g, tensor<double>{1.0, 2.0}), {6, 0, 0, 12});
}

TEST_CASE("functional::jvp, vjp, hvp agree with the Jacobian and Hessian") {
  auto f = [](auto const& x) { return eval(exp(x) * sum(x * x)); };
  tensor<double> const x{0.3, -0.5, 1.1};
  tensor<double> const v{1.0, -2.0, 0.5};
  auto const jac = functional::jacobian(f, x);
  auto const [y, jv] = functional::jvp(f, x, v);
  check_values(y, {std::exp(0.3) * 1.55, std::exp(-0.5) * 1.55, std::exp(1.1) * 1.55});
  for (std::size_t k = 0; k < 3; ++k) CHECK(close(jv[k], jac(k, 0) * v[0] + jac(k, 1) * v[1] + jac(k, 2) * v[2]));

  auto [y2, vjp_fn] = functional::vjp(f, x);
  check_same(y2, y);
  {  // vjp_fn survives other recordings and can be called again
    tape_scope<var<double>> other;
    var<double> a = 3.0;
    var<double> b = a * a;
    auto const ct = vjp_fn(v);
    for (std::size_t j = 0; j < 3; ++j) CHECK(close(ct[j], v[0] * jac(0, j) + v[1] * jac(1, j) + v[2] * jac(2, j)));
    backward(b);
    CHECK(a.adjoint() == 6.0);
  }
  auto const ct2 = vjp_fn(tensor<double>{0.0, 1.0, 0.0});
  check_values(ct2, {jac(1, 0), jac(1, 1), jac(1, 2)});
  CHECK_THROWS_WITH_AS(vjp_fn(tensor<double>{1.0}),
                       doctest::Contains("functional::vjp: v has shape [1] but the output has shape [3]"), shape_error);
  CHECK_THROWS_WITH_AS(functional::jvp(f, x, tensor<double>{1.0, 2.0}),
                       doctest::Contains("functional::jvp: v has shape [2] but x has shape [3]"), shape_error);

  auto lse = [](auto const& t) { return logsumexp(t * t); };
  auto const h = functional::hessian(lse, x);
  auto const [val, hv] = functional::hvp(lse, x, v);
  CHECK(close(val, std::log(std::exp(0.09) + std::exp(0.25) + std::exp(1.21))));
  for (std::size_t i = 0; i < 3; ++i) CHECK(close(hv[i], h(i, 0) * v[0] + h(i, 1) * v[1] + h(i, 2) * v[2]));
  CHECK_THROWS_WITH_AS(functional::hvp(lse, x, tensor<double>{{1.0, 2.0, 3.0}}),
                       doctest::Contains("functional::hvp: v has shape [1, 3] but x has shape [3]"), shape_error);
}

// ---- no_grad --------------------------------------------------------------------------------

TEST_CASE("no_grad: nothing is recorded, results are constants, nestable, per thread") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  var<double> x = 2.0;
  tensor<var<double>> t{1.0, 2.0, 3.0};
  index_type const n0 = tp.size();
  var<double> c;
  {
    no_grad outer;
    CHECK_FALSE(is_grad_enabled());
    var<double> y = x * x + sin(x);
    tensor<var<double>> u = t * t;
    var<double> s = sum(u) * x;
    auto m = matmul(t.reshape({1, 3}), t.reshape({3, 1}));
    {
      no_grad inner;
      c = exp(x);
    }
    CHECK_FALSE(is_grad_enabled());  // still inside the outer scope
    CHECK(tp.size() == n0);
    CHECK_FALSE(y.is_active());
    CHECK_FALSE(u[1].is_active());
    CHECK_FALSE(s.is_active());
    CHECK_FALSE(m[0].is_active());
    CHECK(y.value() == 4.0 + std::sin(2.0));
    CHECK(s.value() == 28.0);
    {
      enable_grad on;  // records again
      var<double> r = x * 3.0;
      CHECK(r.is_active());
    }
    bool other_thread_records = false;
    std::thread([&] {
      tape_scope<var<double>> s2;
      var<double> a = 1.0;
      var<double> b = a * a;
      other_thread_records = b.is_active() && is_grad_enabled();
    }).join();
    CHECK(other_thread_records);
  }
  CHECK(is_grad_enabled());
  // the gradient through a no_grad computation is zero (c is a constant), unconnected for tf
  var<double> z = c * x;
  backward(z);
  CHECK(x.adjoint() == c.value());  // only the direct path: dz/dx = c
  auto const g = gradients(c * 2.0 + x, std::vector{x});
  REQUIRE(g[0].has_value());
  CHECK(*g[0] == 1.0);
  var<double> w;
  {
    no_grad ng;
    w = x * x;
  }
  auto const g2 = gradients(w + c, std::vector{x});
  CHECK_FALSE(g2[0].has_value());
}

TEST_CASE("no_grad: the transforms record their own graph inside it, as torch.func's do") {
  no_grad ng;
  auto const j = functional::jacobian([](auto const& x) { return eval(x * x); }, tensor<double>{1.0, 2.0});
  check_values(j, {2, 0, 0, 4});
  auto const g = gradient([](auto const& v) { return v[0] * v[1]; }, std::vector<double>{3.0, 4.0});
  CHECK(g == std::vector<double>{4.0, 3.0});
  check_values(grad([](auto const& x) { return eval(x * x); })(tensor<double>{3.0}), {6.0});
}

// ---- custom_function ------------------------------------------------------------------------

namespace {
// softplus as a custom_function (adx::softplus is the built-in rule) with a black-box value (doubles only) and generic
// derivative lambdas
auto const softplus_custom = custom_function([](double x) { return std::log1p(std::exp(x)); },
                                             [](auto const& x, auto const& dx) { return dx / (1.0 + exp(-x)); },
                                             [](auto const& x, auto const& ybar) { return ybar / (1.0 + exp(-x)); });
auto const softplus_builtin = [](auto const& x) { return log1p(exp(x)); };
}  // namespace

TEST_CASE("custom_function: every mode and nesting agrees with the same function built from the rules") {
  auto f = [](auto const& x) { return softplus_custom(x * x) * sin(x); };
  auto fb = [](auto const& x) { return softplus_builtin(x * x) * sin(x); };
  double const x0 = 0.7;
  auto const got = adx_test::unary_all_modes(f, x0);
  auto const want = adx_test::unary_all_modes(fb, x0);
  REQUIRE(got.size() == want.size());
  for (std::size_t m = 0; m < got.size(); ++m)
    for (std::size_t k = 0; k < 5; ++k) {
      INFO(got[m].mode << " derivative " << k);
      CHECK(close(got[m].d[k], want[m].d[k], 1e-12, 1e-13));
    }
  // finite differences of the first derivative
  double const h = 1e-6;
  CHECK(close(derivative<1>(f, x0)[1], (f(x0 + h) - f(x0 - h)) / (2 * h), 1e-7, 1e-9));
  // a black box in the first order of every mode: no generic lambda needed
  auto sq = custom_function([](double x) { return x * x; }, [](double x, double dx) { return 2 * x * dx; },
                            [](double x, double ybar) { return 2 * x * ybar; });
  CHECK(derivative<1>([&](auto x) { return sq(x); }, 3.0)[1] == 6.0);
  CHECK(gradient([&](auto const& v) { return sq(v[0]) * v[1]; }, std::vector<double>{3.0, 2.0}) ==
        std::vector<double>{12.0, 9.0});
}

TEST_CASE("custom_function: several arguments, plain numbers mixed in, one tape node") {
  auto mul = custom_function(
      [](double a, double b) { return a * b; },
      [](auto const& a, auto const& b, auto const& da, auto const& db) { return da * b + a * db; },
      [](auto const& a, auto const& b, auto const& ybar) { return std::make_tuple(ybar * b, ybar * a); });
  tape_scope<var<double>> scope;
  var<double> a = 3.0, b = 5.0;
  auto& tp = tape<double>::current();
  index_type const n0 = tp.size();
  var<double> y = mul(a, b);
  CHECK(tp.size() == n0 + 1);  // one node
  var<double> z = mul(a * a, 2.0) + y;
  backward(z);
  CHECK(a.adjoint() == 4 * 3.0 + 5.0);
  CHECK(b.adjoint() == 3.0);
  auto const h = hessian([&](auto const& v) { return mul(v[0], v[1] * v[1]); }, std::vector<double>{2.0, 3.0});
  CHECK(h == std::vector<double>{0, 6, 6, 4});
}

TEST_CASE("custom_function on tensors: Jacobian, Hessian, against the built-in version and FD") {
  auto cube = custom_function([](tensor<double> const& x) { return eval(x * x * x); },
                              [](auto const& x, auto const& dx) { return eval(3.0 * x * x * dx); },
                              [](auto const& x, auto const& ybar) { return eval(3.0 * x * x * ybar); });
  auto f = [&](auto const& x) { return eval(cube(x) * 2.0 + x); };
  auto fb = [](auto const& x) { return eval(x * x * x * 2.0 + x); };
  tensor<double> const x{{1.0, -2.0}, {0.5, 3.0}};
  check_same(functional::jacrev(f, x), functional::jacrev(fb, x));
  check_same(functional::jacfwd(f, x), functional::jacrev(fb, x));
  check_same(functional::jacrev(f, x), fd_jacobian(fb, x), 1e-7, 1e-7);
  auto s = [&](auto const& t) { return sum(cube(t) * t); };
  auto sb = [](auto const& t) { return sum(t * t * t * t); };
  check_same(functional::hessian(s, x), functional::hessian(sb, x));
  // a cotangent of the wrong shape is reported
  auto bad = custom_function([](tensor<double> const& t) { return eval(t * 2.0); },
                             [](auto const&, auto const& dt) { return eval(dt * 2.0); },
                             [](auto const&, auto const&) {
                               return tensor<double>{1.0, 2.0, 3.0};
                             });
  CHECK_THROWS_WITH_AS(functional::jacrev([&](auto const& t) { return bad(t); }, x),
                       doctest::Contains("cotangent returned by vjp_fn for argument 0 has shape [3] but should have "
                                         "shape [2, 2]"),
                       value_error);
}

// ---- check_grad -----------------------------------------------------------------------------

// A vjp may compute its derivative with adx itself, in a recording of its own (adx::gradient,
// functional::jacrev and tape_scope open one), while the backward sweep of the same thread's tape
// is running. The inner gradient used to resize and zero the running sweep's adjoints: a
// use-after-free, or, with the adjoint vector already large, a silently wrong gradient (the 7a
// term below was lost). Backward on the recording being swept is an error.
TEST_CASE("custom_function: a vjp that computes a gradient with adx while the sweep runs") {
  auto cube = custom_function([](double x) { return x * x * x; }, [](auto x, auto dx) { return 3.0 * x * x * dx; },
                              [](double x, double ybar) {
                                auto const g = gradient(
                                    [](auto const& v) {
                                      std::remove_cvref_t<decltype(v[0])> acc = v[0] * v[0] * v[0];
                                      for (int i = 0; i < 2000; ++i) acc = acc + 0.0 * v[0];  // a long inner tape
                                      return acc;
                                    },
                                    std::vector{x});
                                return g[0] * ybar;
                              });
  for (int round = 0; round < 2; ++round) {  // the second round with the adjoint vector already large
    tape_scope<var<double>> scope;
    var<double> a = 2.0, b = 5.0;
    var<double> p = a * b;
    var<double> y = cube(p) + 7.0 * a;  // y = (ab)^3 + 7a
    backward(y);
    CHECK(a.adjoint() == 1507.0);  // 3 (ab)^2 b + 7
    CHECK(b.adjoint() == 600.0);   // 3 (ab)^2 a
  }
  // on tensors, through functional::jacrev inside the vjp
  auto square = custom_function([](tensor<double> const& t) { return eval(t * t); },
                                [](auto const& t, auto const& dt) { return eval(2.0 * t * dt); },
                                [](tensor<double> const& t, tensor<double> const& ybar) {
                                  auto const j = functional::jacrev([](auto const& u) { return eval(u * u); }, t);
                                  return eval(matmul(ybar.reshape(shape{1, t.size()}), j).reshape(t.shape()));
                                });
  {
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(tensor<double>{4.0, 8.5});
    var<double> s = sum(square(x) + x);
    backward(s);
    check_values(adjoints(x), {9.0, 18.0});
  }
  // backward on the recording whose sweep is running: a clear error, not a clobbered sweep
  tape_scope<var<double>> scope;
  var<double> a = 2.0;
  auto reenter = custom_function([](double x) { return 2.0 * x; }, [](auto, auto dx) { return 2.0 * dx; },
                                 [&a](double, double ybar) {
                                   backward(var<double>(a * 3.0));
                                   return 2.0 * ybar;
                                 });
  var<double> y = reenter(a);
  CHECK_THROWS_WITH_AS(backward(y),
                       doctest::Contains("backward was called on a recording whose backward sweep is running"),
                       gradient_error);
  var<double> z = a * a;  // the tape is usable afterwards
  backward(z);
  CHECK(a.adjoint() == 4.0);
}

TEST_CASE("custom_function: each vjp the sweep reaches runs once, a zero cotangent included, as in torch") {
  int calls_a = 0, calls_b = 0;
  double seen_b = -1.0;
  auto twice_a = custom_function([](double x) { return 2.0 * x; }, [](auto, auto dx) { return 2.0 * dx; },
                                 [&calls_a](double, double ybar) {
                                   ++calls_a;
                                   return 2.0 * ybar;
                                 });
  auto thrice_b = custom_function([](double x) { return 3.0 * x; }, [](auto, auto dx) { return 3.0 * dx; },
                                  [&calls_b, &seen_b](double, double ybar) {
                                    ++calls_b;
                                    seen_b = ybar;
                                    return 3.0 * ybar;
                                  });
  tape_scope<var<double>> scope;
  var<double> a = 1.5, b = 4.0;
  var<double> yb = thrice_b(b);  // recorded first: the sweep reaches it after twice_a
  var<double> ya = twice_a(a);
  var<double> y = ya + 0.0 * yb;  // thrice_b is reached with a zero cotangent
  backward(y);
  CHECK(a.adjoint() == 2.0);
  CHECK(b.adjoint() == 0.0);
  CHECK(calls_a == 1);
  CHECK(calls_b == 1);
  CHECK(seen_b == 0.0);
  // an unreached custom node is not called (y2 does not depend on yb)
  var<double> y2 = twice_a(a) * 5.0;
  calls_a = calls_b = 0;
  backward(y2);
  CHECK(calls_a == 1);
  CHECK(calls_b == 0);
}

TEST_CASE("check_grad passes on correct functions, first and second order") {
  auto mlp = [](auto const& w) { return sum(tanh(matmul(tensor<double>{{0.5, -1.0}, {2.0, 0.1}}, w)) * w); };
  tensor<double> const w{{0.3, -0.2}, {0.1, 0.9}};
  auto const r = check_grad(mlp, w, 2);
  CHECK(r.passed);
  CHECK(r.message.empty());
  REQUIRE(r.blocks.size() == 2);
  CHECK(r.blocks[0].order == 1);
  CHECK(r.blocks[1].order == 2);
  CHECK(r.blocks[0].max_abs_error < 1e-8);
  CHECK(r.blocks[1].max_abs_error < 1e-6);
  CHECK(gradcheck([](auto const& v) { return softplus_custom(v[0]) * v[1]; }, std::vector<double>{0.3, 2.0}, 2));
  auto const r2 = check_grad([](auto const& a, auto const& b) { return sum(a * b * b); },
                             std::make_tuple(tensor<double>{1.0, 2.0}, tensor<double>{0.5, -1.0}), 2);
  CHECK(r2.passed);
  CHECK(r2.blocks.size() == 2 + 4);
  // several outputs: each output element's Hessian, one block per element and pair of inputs
  // (out_k = x_k sum_j x_j^2: d^2 out_k / dx_a dx_b = 2 (d_ab x_k + d_kb x_a + d_ka x_b))
  auto const r4 = check_grad([](auto const& x) { return eval(x * sum(x * x)); }, tensor<double>{0.5, -1.0, 2.0}, 2);
  CHECK(r4.passed);
  REQUIRE(r4.blocks.size() == 1 + 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(r4.blocks[1 + k].order == 2);
    CHECK(r4.blocks[1 + k].output == k);
    CHECK(r4.blocks[1 + k].max_abs_error < 1e-6);
  }
  // a [2, 3] output of two inputs of different sizes: every output element's four Hessian
  // blocks, per output element, then per pair of inputs (the passes are shared between the
  // elements, so each block's slice of them is checked here)
  auto const r5 = check_grad([](auto const& a, auto const& b) { return eval(outer(a * a, sin(b)) * sum(a * b[0])); },
                             std::make_tuple(tensor<double>{0.5, -1.5}, tensor<double>{0.3, 2.0, -0.7}), 2);
  CHECK(r5.passed);
  REQUIRE(r5.blocks.size() == 2 + 6 * 4);
  for (std::size_t k = 0; k < 6; ++k)
    for (std::size_t p = 0; p < 4; ++p) {
      auto const& b = r5.blocks[2 + 4 * k + p];
      CHECK(b.order == 2);
      CHECK(b.output == k);
      CHECK(b.input == p / 2);
      CHECK(b.input2 == p % 2);
      CHECK(b.max_abs_error < 1e-6);
    }
}

TEST_CASE("check_grad fails on a wrong custom rule and names the first disagreeing element") {
  auto wrong_vjp =
      custom_function([](double x) { return std::sin(x); }, [](auto const& x, auto const& dx) { return cos(x) * dx; },
                      [](auto const& x, auto const& ybar) { return 1.1 * cos(x) * ybar; });
  auto f = [&](auto const& v) { return wrong_vjp(v[1]) * v[0]; };
  std::vector<double> const x{2.0, 0.3};
  auto const r = check_grad(f, x);
  CHECK_FALSE(r.passed);
  CHECK_FALSE(r.blocks[0].passed);
  CHECK(r.blocks[0].max_abs_error > 0.1);
  CHECK(r.message.find("d out / d x[1]: reverse mode gives") != std::string::npos);
  CHECK_THROWS_WITH_AS(gradcheck(f, x), doctest::Contains("d out / d x[1]: reverse mode gives"), gradient_error);

  auto wrong_jvp = custom_function([](double x) { return std::sin(x); }, [](auto const&, auto const& dx) { return dx; },
                                   [](auto const& x, auto const& ybar) { return cos(x) * ybar; });
  auto const r2 = check_grad([&](auto const& t) { return eval(wrong_jvp(t[0]) * t); }, tensor<double>{0.4, 1.0});
  CHECK_FALSE(r2.passed);
  CHECK(r2.message.find("d out[0] / d x[0]: forward mode gives") != std::string::npos);

  // right at first order, wrong at second: the derivative of the rule is cut
  auto flat_second = custom_function([](double x) { return std::sin(x); },
                                     [](auto const& x, auto const& dx) { return cos(stop_gradient(x)) * dx; },
                                     [](auto const& x, auto const& ybar) { return cos(stop_gradient(x)) * ybar; });
  auto g = [&](auto const& v) { return flat_second(v[0]) + v[0] * v[1]; };
  std::vector<double> const p{0.8, 1.5};
  CHECK(check_grad(g, p, 1).passed);
  auto const r3 = check_grad(g, p, 2);
  CHECK_FALSE(r3.passed);
  CHECK(r3.message.find("d^2 out / d x[0] d x[0]: forward over reverse gives 0") != std::string::npos);
  // the same rule in the second of two outputs: the report names that output
  auto h = [&](auto const& v) {
    using S = std::remove_cvref_t<decltype(v[0])>;
    return std::vector<S>{v[0] * v[1], flat_second(v[1]) + v[0]};
  };
  CHECK(check_grad(h, p, 1).passed);
  auto const r4 = check_grad(h, p, 2);
  CHECK_FALSE(r4.passed);
  REQUIRE(r4.blocks.size() == 1 + 2);
  CHECK(r4.blocks[1].passed);
  CHECK_FALSE(r4.blocks[2].passed);
  CHECK(r4.blocks[2].output == 1);
  CHECK(r4.message.find("d^2 out[1] / d x[1] d x[1]: forward over reverse gives 0") != std::string::npos);
}
