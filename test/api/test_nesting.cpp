// Transforms inside transforms through closures: the inner function captures the outer call's
// variables, and every combination gives the derivative of the mathematical composition (as
// jax.grad(lambda x: jax.grad(lambda y: x * y * y)(2.))(1.5) == 4 does). The matrix below is
// generated: every outer transform x every inner transform x what the inner function captures,
// each against the closed form and against one transform over the pair (no closure).
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;
namespace mp = boost::mp11;

namespace {

// ---- the inner transforms: d/dy f(y) at y, as the scalar they return ------------------------

struct in_grad {
  template <class F>
  static auto d(F const& f, double y) {
    return grad(f)(y);
  }
};
struct in_value_and_grad {
  template <class F>
  static auto d(F const& f, double y) {
    return std::get<1>(value_and_grad(f)(y));
  }
};
struct in_grad_operation {
  template <class F>
  static auto d(F const& f, double y) {
    return grad_operation<>(f)(y);
  }
};
struct in_derivative {
  template <class F>
  static auto d(F const& f, double y) {
    return derivative<1>(f, y)[1];
  }
};
struct in_gradient {
  template <class F>
  static auto d(F const& f, double y) {
    return gradient([&](auto const& v) { return f(v[0]); }, std::vector<double>{y})[0];
  }
};
struct in_jacfwd {
  template <class F>
  static auto d(F const& f, double y) {
    return functional::jacfwd(f, y).data()[0];
  }
};
struct in_jacrev {
  template <class F>
  static auto d(F const& f, double y) {
    return functional::jacrev(f, y).data()[0];
  }
};
struct in_jvp {
  template <class F>
  static auto d(F const& f, double y) {
    return functional::jvp(f, y, 1.0).second;
  }
};
struct in_vjp {
  template <class F>
  static auto d(F const& f, double y) {
    return functional::vjp(f, y).second(1.0);
  }
};
struct in_ms_jvp {
  template <class F>
  static auto d(F const& f, double y) {
    return std::get<1>(adx::jvp(f, y, 1.0));
  }
};
struct in_ms_vjp {
  template <class F>
  static auto d(F const& f, double y) {
    return std::get<0>(std::get<1>(adx::vjp(f, y))(1.0));
  }
};
using first_order_inner = mp::mp_list<in_grad, in_value_and_grad, in_grad_operation, in_derivative, in_gradient,
                                      in_jacfwd, in_jacrev, in_jvp, in_vjp, in_ms_jvp, in_ms_vjp>;

// second order: d^2/dy^2 f(y) at y
struct in_hessian {
  template <class F>
  static auto d(F const& f, double y) {
    return functional::hessian(f, y).data()[0];
  }
};
struct in_hvp {
  template <class F>
  static auto d(F const& f, double y) {
    return functional::hvp(f, y, 1.0).second;
  }
};
struct in_scalar_hessian {
  template <class F>
  static auto d(F const& f, double y) {
    return adx::hessian([&](auto const& v) { return f(v[0]); }, std::vector<double>{y})[0];
  }
};
struct in_derivative2 {
  template <class F>
  static auto d(F const& f, double y) {
    return derivative<2>(f, y)[2];
  }
};
using second_order_inner = mp::mp_list<in_hessian, in_hvp, in_scalar_hessian, in_derivative2>;

// ---- the outer transforms: d/dx h(x) at x, as a double --------------------------------------

struct out_grad {
  static constexpr char const* name = "grad";
  template <class H>
  static double d(H const& h, double x) {
    return primal(grad(h)(x));
  }
};
struct out_derivative {
  static constexpr char const* name = "derivative";
  template <class H>
  static double d(H const& h, double x) {
    return primal(derivative<1>(h, x)[1]);
  }
};
struct out_jacfwd {
  static constexpr char const* name = "jacfwd";
  template <class H>
  static double d(H const& h, double x) {
    return primal(functional::jacfwd(h, x).data()[0]);
  }
};
struct out_jacrev {
  static constexpr char const* name = "jacrev";
  template <class H>
  static double d(H const& h, double x) {
    return primal(functional::jacrev(h, x).data()[0]);
  }
};
struct out_vjp {
  static constexpr char const* name = "vjp";
  template <class H>
  static double d(H const& h, double x) {
    return primal(functional::vjp(h, x).second(1.0));
  }
};
struct out_gradient {
  static constexpr char const* name = "gradient";
  template <class H>
  static double d(H const& h, double x) {
    return primal(gradient([&](auto const& v) { return h(v[0]); }, std::vector<double>{x})[0]);
  }
};

// ---- what the inner function captures ---------------------------------------------------------

constexpr double at_x = 1.5, at_y = 2.0;

/// g(x, y) = x y^2 + sin(x) y, the inner function capturing the outer input x:
/// dg/dy = 2 x y + sin x; d/dx of that = 2 y + cos x; d2g/dy2 = 2 x, d/dx = 2.
struct captures_input {
  static constexpr char const* name = "captured input";
  template <class Inner, class X>
  static auto h(X const& x) {
    return Inner::d([&](auto y) { return x * y * y + sin(x) * y; }, at_y);
  }
  static double first() { return 2 * at_y + std::cos(at_x); }
  static double second() { return 2.0; }
};
/// The inner function capturing an intermediate u = x^2 of the outer call:
/// g = u y^2 + sin(x) y; dg/dy = 2 x^2 y + sin x, d/dx = 4 x y + cos x; d2g/dy2 = 2 x^2, d/dx = 4 x.
struct captures_intermediate {
  static constexpr char const* name = "captured intermediate";
  template <class Inner, class X>
  static auto h(X const& x) {
    auto const u = eval(x * x);
    return Inner::d([&](auto y) { return u * y * y + sin(x) * y; }, at_y);
  }
  static double first() { return 4 * at_x * at_y + std::cos(at_x); }
  static double second() { return 4 * at_x; }
};
using captures = mp::mp_list<captures_input, captures_intermediate>;

/// The same composition without closures: d/dx d/dy g(x, y) by one transform over the pair.
template <class C>
double mixed_partial() {
  auto g = [](auto const& x, auto const& y) {
    if constexpr (std::is_same_v<C, captures_input>)
      return eval(x * y * y + sin(x) * y);
    else
      return eval(x * x * y * y + sin(x) * y);
  };
  auto const h = functional::hessian(g, std::make_tuple(at_x, at_y));
  return std::get<1>(std::get<0>(h)).data()[0];
}

}  // namespace

TEST_CASE_TEMPLATE("closure matrix: every inner transform inside the outer transform", Outer, out_grad, out_derivative,
                   out_jacfwd, out_jacrev, out_vjp, out_gradient) {
  mp::mp_for_each<captures>([](auto c) {
    using C = decltype(c);
    double const pair = mixed_partial<C>();
    CHECK(close(pair, C::first()));
    mp::mp_for_each<first_order_inner>([&](auto in) {
      using In = decltype(in);
      double const got = Outer::d([](auto const& x) { return C::template h<In>(x); }, at_x);
      INFO(Outer::name, " over ", C::name);
      CHECK(close(got, C::first()));
      CHECK(close(got, pair));
    });
    mp::mp_for_each<second_order_inner>([&](auto in) {
      using In = decltype(in);
      double const got = Outer::d([](auto const& x) { return C::template h<In>(x); }, at_x);
      INFO(Outer::name, " over a second-order inner transform, ", C::name);
      CHECK(close(got, C::second()));
    });
  });
}

TEST_CASE("the issue's examples: a gradient inside a gradient through a closure") {
  CHECK(primal(grad([](auto x) { return grad([&](auto y) { return x * y * y; })(2.0); })(1.5)) == 4.0);
  CHECK(primal(grad([](auto x) { return x * grad([&](auto y) { return x * y; })(1.0); })(1.5)) == 3.0);
  auto const a = derivative<1>([](auto l) { return derivative<1>([&](auto x) { return x * l; }, 2.0)[1]; }, 3.0);
  CHECK(a[0] == 3.0);
  CHECK(a[1] == 1.0);
  // Siskind and Pearlmutter's perturbation confusion: D(x -> x * D(y -> x + y)(1))(1) = 1
  auto const b = derivative<1>([](auto x) { return x * derivative<1>([&](auto y) { return x + y; }, 1.0)[1]; }, 1.0);
  CHECK(b[1] == 1.0);
  auto const c = derivative<1>(
      [](auto x) {
        auto [v, t] =
            functional::jvp([&](auto const& y) { return eval(x * y * y); }, tensor<double>{2.0}, tensor<double>{1.0});
        return t(0);
      },
      1.5);
  CHECK(c[0] == 6.0);
  CHECK(c[1] == 4.0);
}

TEST_CASE("perturbation confusion three levels deep, forward over reverse and reverse over forward") {
  // D(x -> x * D(y -> x * y * D(z -> x + y + z)(1))(1))(1): the innermost is 1, the middle
  // d/dy (x y) = x, the outer d/dx (x * x) = 2 x = 2
  auto const three = derivative<1>(
      [](auto x) {
        return x *
               derivative<1>([&](auto y) { return x * y * derivative<1>([&](auto z) { return x + y + z; }, 1.0)[1]; },
                             1.0)[1];
      },
      1.0);
  CHECK(three[1] == 2.0);
  // the same with grad at every level, and mixed
  CHECK(primal(grad([](auto x) {
          return x * grad([&](auto y) { return x * y * grad([&](auto z) { return x + y + z; })(1.0); })(1.0);
        })(1.0)) == 2.0);
  CHECK(primal(grad([](auto x) {
          return x *
                 derivative<1>([&](auto y) { return x * y * grad([&](auto z) { return x * z + y; })(1.0); }, 1.0)[1];
        })(1.0)) == 3.0);  // x * (x * x) = x^3: 3 x^2
  CHECK(derivative<1>(
            [](auto x) {
              return x *
                     grad([&](auto y) { return x * y * derivative<1>([&](auto z) { return z * y; }, 1.0)[1]; })(1.0);
            },
            1.0)[1] == 4.0);  // d/dy (x y^2) = 2 x y = 2 x; x * 2 x = 2 x^2: 4 x
  // third order of one function by three nested grads through closures: d3/dx3 x^4 = 24 x
  auto third = grad([](auto x) {
    return grad([&](auto y) { return grad([&](auto z) { return z * z * z * z + 0.0 * (x + y); })(y); })(x);
  });
  CHECK(primal(third(2.0)) == 48.0);
}

TEST_CASE("the point of a transform may depend on the outer variables") {
  // derivative<1>(f, x * x) with x an outer dual: d/dx [f'(x^2)] = f''(x^2) 2 x, f = sin
  auto const d = derivative<1>([](auto x) { return derivative<1>([](auto t) { return sin(t); }, x * x)[1]; }, 0.7);
  CHECK(close(d[0], std::cos(0.49)));
  CHECK(close(d[1], -std::sin(0.49) * 1.4));
  // grad(f)(x + y) with an unevaluated expression of outer variables
  auto const g = grad([](auto x) { return grad([](auto t) { return t * t * t; })(x + x); })(0.5);
  CHECK(primal(g) == 6.0 * 1.0 * 2.0);  // d/dx 3 (2x)^2 = 24 x = 12
  // jacrev inside grad over a captured value
  auto const j = grad([](auto x) {
    return functional::jacrev([&](auto const& y) { return eval(x * y * y); }, tensor<double>{3.0}).data()[0];
  })(2.0);
  CHECK(primal(j) == 6.0);  // d/dx 2 x y = 2 y
}

TEST_CASE("a tensor inner transform over a captured scalar") {
  // inner: the gradient of sum(x * Y * Y + sin(x) * Y) in Y; element 0 is 2 x Y0 + sin x
  tensor<double> const Y{2.0, -1.0};
  auto h_grad = [&](auto const& x) { return grad([&](auto const& y) { return sum(x * y * y + sin(x) * y); })(Y)[0]; };
  auto h_jacrev = [&](auto const& x) {
    return functional::jacrev([&](auto const& y) { return sum(x * y * y + sin(x) * y); }, Y).data()[0];
  };
  auto h_jvp = [&](auto const& x) {
    return functional::jvp([&](auto const& y) { return sum(x * y * y + sin(x) * y); }, Y, tensor<double>{1.0, 0.0})
        .second;
  };
  double const want = 2 * 2.0 + std::cos(at_x);
  CHECK(close(primal(grad(h_grad)(at_x)), want));
  CHECK(close(primal(derivative<1>(h_grad, at_x)[1]), want));
  CHECK(close(primal(grad(h_jacrev)(at_x)), want));
  CHECK(close(primal(derivative<1>(h_jvp, at_x)[1]), want));
}

TEST_CASE("a physics-informed loss: the weights' gradient of a loss on u_xx") {
  // u(x) = a sin(b x) with parameters a, b; u_xx = -a b^2 sin(b x) by derivative<2> or by a
  // nested grad inside the loss; L = sum_i (u_xx(x_i) - f_i)^2
  parameter<double> a{tensor<double>{1.3}, "a"}, b{tensor<double>{0.7}, "b"};
  std::vector<double> const xs{0.2, 0.9, 1.6}, fs{-0.1, 0.3, -0.5};
  auto u = [&](auto const& x) { return a[0] * sin(b[0] * x); };
  auto loss_derivative = [&] {
    var<double> l = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      auto const uxx = derivative<2>(u, xs[i])[2];
      l = l + (uxx - fs[i]) * (uxx - fs[i]);
    }
    return l;
  };
  auto loss_grad = [&] {
    var<double> l = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      auto const uxx = grad([&](auto x) { return grad(u)(x); })(xs[i]);
      l = l + (uxx - fs[i]) * (uxx - fs[i]);
    }
    return l;
  };
  double ga = 0, gb = 0;
  double const av = 1.3, bv = 0.7;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double const s = std::sin(bv * xs[i]), c = std::cos(bv * xs[i]);
    double const r = -av * bv * bv * s - fs[i];
    ga += 2 * r * (-bv * bv * s);
    gb += 2 * r * (-av) * (2 * bv * s + bv * bv * xs[i] * c);
  }
  parameter_list<double> const w{a, b};
  for (auto const& gw : {grad(loss_derivative, none, w)(), grad(loss_grad, none, w)()}) {
    CHECK(close(gw[0][0], ga));
    CHECK(close(gw[1][0], gb));
  }
}

TEST_CASE("MAML: the gradient of the loss after one inner SGD step, in the initial weight") {
  // inner loss (w x1 - y1)^2, one step w' = w - alpha dL/dw, outer loss (w' x2 - y2)^2
  double const x1 = 0.8, y1 = 1.1, x2 = -0.4, y2 = 0.3, alpha = 0.1, w0 = 0.6;
  auto outer = [&](auto const& w) {
    auto const g = grad([&](auto const& v) { return (v * x1 - y1) * (v * x1 - y1); })(w);
    auto const w1 = eval(w - alpha * g);
    return (w1 * x2 - y2) * (w1 * x2 - y2);
  };
  double const w1 = w0 - alpha * 2 * (w0 * x1 - y1) * x1;
  double const want = 2 * (w1 * x2 - y2) * x2 * (1 - 2 * alpha * x1 * x1);
  CHECK(close(primal(grad(outer)(w0)), want));
  CHECK(close(derivative<1>(outer, w0)[1], want));
  // the inner step by a captured weight instead of an argument
  auto outer_captured = [&](auto const& w) {
    auto const gw = derivative<1>([&](auto const& v) { return (v * x1 - y1) * (v * x1 - y1); }, w)[1];
    auto const w1c = eval(w - alpha * gw);
    return (w1c * x2 - y2) * (w1c * x2 - y2);
  };
  CHECK(close(primal(grad(outer_captured)(w0)), want));
}

// ---- a gradient call leaves the caller's adjoints as they were --------------------------------

TEST_CASE("every gradient entry point leaves the adjoints of the caller's backward as they were") {
  auto const square = [](auto const& t) { return t * t; };
  auto const vsquare = [](auto const& v) { return v[0] * v[0]; };
  auto const tsquare = [](auto const& t) { return sum(t * t); };
  tape_scope<var<double>> s;
  var<double> x = 3.0;
  var<double> z = x * x;
  backward(z);
  REQUIRE(x.adjoint() == 6.0);
  SUBCASE("grad") { CHECK(grad(square)(2.0) == 4.0); }
  SUBCASE("gradient") { CHECK(gradient(vsquare, std::vector{2.0})[0] == 4.0); }
  SUBCASE("hessian") { CHECK(adx::hessian(vsquare, std::vector{2.0})[0] == 2.0); }
  SUBCASE("jacrev") { CHECK(functional::jacrev(tsquare, tensor<double>{2.0}).data()[0] == 4.0); }
  SUBCASE("functional::hessian") { CHECK(functional::hessian(tsquare, tensor<double>{2.0}).data()[0] == 2.0); }
  SUBCASE("check_grad") { CHECK(check_grad(tsquare, tensor<double>{2.0}).passed); }
  SUBCASE("gradients on the same recording") {
    var<double> y = x * x * x;
    auto const g = gradients(y, x);
    CHECK(*g[0] == 27.0);
  }
  SUBCASE("autograd::grad on the same recording") {
    var<double> y = x * x * x;
    auto const g = autograd::grad(y, x);
    CHECK(*g[0] == 27.0);
  }
  SUBCASE("a sweep in a nested tape_scope") {
    tape_scope<var<double>> inner;
    var<double> t = 2.0;
    var<double> u = t * t * x;
    backward(u);
    CHECK(t.adjoint() == 12.0);
    CHECK(x.adjoint() == 4.0);  // this recording's own sweep
  }
  CHECK(x.adjoint() == 6.0);
}

TEST_CASE("gradient calls in a nested recording that has not swept leave the outer adjoints as they were") {
  // the API's private sweep in a recording of its own must not make that recording take its own
  // sweep state: x.adjoint() (the outer backward's) reads the same before, inside and after
  var<double> x = 2.0;
  var<double> z = x * x;
  backward(z);
  REQUIRE(x.adjoint() == 4.0);
  {
    tape_scope<var<double>> s;
    var<double> y = x * 3.0;
    CHECK(*gradients(y, std::vector{x})[0] == 3.0);
    CHECK(x.adjoint() == 4.0);
    CHECK(*autograd::grad(y, std::vector{x}, {}, true)[0] == 3.0);
    CHECK(x.adjoint() == 4.0);
    parameter<double> p{tensor<double>{1.5}, "p"};
    autograd::backward(p(0) * y);
    CHECK(x.adjoint() == 4.0);
    backward(y);  // the recording's own sweep: its own adjoints from here on
    CHECK(x.adjoint() == 3.0);
  }
  CHECK(x.adjoint() == 4.0);
  // nested scalars too
  tape_scope<var<var<double>>> outer;
  var<var<double>> a = 2.0;
  var<var<double>> c = a * a * a;
  backward(c);
  REQUIRE(primal(a.adjoint()) == 12.0);
  {
    tape_scope<var<var<double>>> s;
    var<var<double>> b = a * 5.0;
    CHECK(primal(*gradients(b, std::vector{a})[0]) == 5.0);
    CHECK(primal(a.adjoint()) == 12.0);
  }
}

TEST_CASE("a custom_function vjp that takes a gradient with tape_scope and backward, under every API") {
  // the sweep of autograd::grad without create_graph runs under no_grad; the vjp's own recording
  // must still record (torch's users call enable_grad there; adx's vjp records as outside)
  auto const cube =
      custom_function([](double x) { return x * x * x; }, [](auto x, auto dx) { return 3.0 * x * x * dx; },
                      [](double x, double ybar) {  // 3 x^2 by adx, in a recording of its own
                        tape_scope<var<double>> s;
                        var<double> t = x;
                        var<double> c = t * t * t;
                        backward(c);
                        return t.adjoint() * ybar;
                      });
  tape_scope<var<double>> s;
  var<double> x = 2.0;
  var<double> z = cube(x);
  backward(z);
  CHECK(x.adjoint() == 12.0);
  CHECK(*gradients(z, std::vector{x})[0] == 12.0);
  CHECK(*autograd::grad(z, std::vector{x}, {}, true)[0] == 12.0);
  CHECK(*autograd::grad(z, std::vector{x}, {}, true, true)[0] == 12.0);
  parameter<double> p{tensor<double>{2.0}, "p"};
  autograd::backward(cube(p(0)));
  REQUIRE(p.grad().has_value());
  CHECK((*p.grad())(0) == 12.0);
}

TEST_CASE("integer arguments are taken as double by the scalar entry points") {
  auto f = [](auto const& v) { return v[0] * v[1] + 0.5 * v[0] * v[0]; };
  auto const g = gradient(f, std::vector{1, 2});
  CHECK(g[0] == 3.0);
  CHECK(g[1] == 1.0);
  auto const gs = gradient([](auto const& v) { return sin(v[0]) * v[1]; }, std::vector{1, 2});
  CHECK(close(gs[0], 2 * std::cos(1.0)));
  CHECK(close(gs[1], std::sin(1.0)));
  auto const h = adx::hessian(f, std::vector{1, 2});
  CHECK(h == std::vector<double>{1.0, 1.0, 1.0, 0.0});
  auto const hv = adx::hvp(f, std::vector{1, 2}, std::vector{1, 0});
  CHECK(hv == std::vector<double>{1.0, 1.0});
  auto const d = derivative<2>([](auto x) { return x * x * x; }, 2);
  CHECK(d[2] == 12.0);
}

TEST_CASE("gradient of AD arguments: differentiable, not stale") {
  // gradient(f, std::vector<var<double>>) lifts to var<var<double>>: the gradient is a var<double>
  // that the caller can differentiate again
  tape_scope<var<double>> s;
  std::vector<var<double>> x{var<double>(1.5), var<double>(2.0)};
  auto const g = gradient([](auto const& v) { return v[0] * v[0] * v[1]; }, x);  // {2 at_x x1, at_x^2}
  CHECK(g[0].value() == 6.0);
  CHECK(g[1].value() == 2.25);
  backward(g[0]);  // d(2 at_x x1) = {2 x1, 2 at_x}
  CHECK(x[0].adjoint() == 4.0);
  CHECK(x[1].adjoint() == 3.0);
}

TEST_CASE("tape_scope: ending out of order throws and pops nothing") {
  using S = tape_scope<var<double>>;
  alignas(S) unsigned char a[sizeof(S)], b[sizeof(S)];
  auto& t = tape<double>::current();
  std::size_t const depth = t.depth();
  S* sa = ::new (a) S;
  S* sb = ::new (b) S;
  CHECK(t.depth() == depth + 2);
  CHECK_THROWS_AS(sa->~S(), error);
  CHECK(t.depth() == depth + 2);
  sb->~S();
  CHECK(t.depth() == depth + 1);
  sa->~S();
  CHECK(t.depth() == depth);
}

// ---- the other columns: captured parameters, custom functions, the tape-level APIs ----------

TEST_CASE("every inner transform over a captured parameter, inside grad over the weights") {
  // loss(p) = d/dy [p y^2 + sin(p) y] at at_y = 2 p at_y + sin p; d loss / dp = 2 at_y + cos p
  parameter<double> p{tensor<double>{at_x}, "p"};
  parameter_list<double> const w{p};
  mp::mp_for_each<first_order_inner>([&](auto in) {
    using In = decltype(in);
    auto const g = grad([&] { return In::d([&](auto y) { return p[0] * y * y + sin(p[0]) * y; }, at_y); }, none, w)();
    CHECK(close(g[0][0], captures_input::first()));
  });
  mp::mp_for_each<second_order_inner>([&](auto in) {
    using In = decltype(in);
    auto const g = grad([&] { return In::d([&](auto y) { return p[0] * y * y + sin(p[0]) * y; }, at_y); }, none, w)();
    CHECK(close(g[0][0], captures_input::second()));
  });
}

TEST_CASE("a custom function inside and outside nested transforms") {
  // cube(t) = t^3 with its own (generic) jvp and vjp; inner d/dy [x cube(y)] = 3 x y^2, d/dx = 3 y^2
  auto cube = custom_function([](auto t) { return t * t * t; }, [](auto t, auto dt) { return 3.0 * t * t * dt; },
                              [](auto t, auto ybar) { return 3.0 * t * t * ybar; });
  auto h = [&](auto const& x) { return grad([&](auto y) { return x * cube(y); })(at_y); };
  CHECK(close(primal(grad(h)(at_x)), 3 * at_y * at_y));
  CHECK(close(derivative<1>(h, at_x)[1], 3 * at_y * at_y));
  // the custom function of the outer variable inside the inner one: d/dy [cube(x) y^2] = 2 x^3 y,
  // d/dx = 6 x^2 y
  auto k = [&](auto const& x) { return derivative<1>([&](auto y) { return cube(x) * y * y; }, at_y)[1]; };
  CHECK(close(primal(grad(k)(at_x)), 6 * at_x * at_x * at_y));
  CHECK(close(primal(functional::jacrev(k, at_x).data()[0]), 6 * at_x * at_x * at_y));
}

TEST_CASE("autograd::grad and gradients with create_graph inside a transform's function") {
  // the function records its own inner variable one level above its argument and asks the
  // tape-level APIs for d/dy (x y^2) = 2 x y, which stays differentiable in x: d/dx = 2 y
  auto with_autograd = [](auto const& x) {
    using S = std::remove_cvref_t<decltype(x)>;
    var<S> const y(2.0);
    var<S> const z = x * y * y;
    return *autograd::grad(z, y, {}, std::nullopt, true)[0];
  };
  auto with_gradients = [](auto const& x) {
    using S = std::remove_cvref_t<decltype(x)>;
    var<S> const y(2.0);
    var<S> const z = x * y * y;
    return *gradients(z, y)[0];
  };
  CHECK(primal(grad(with_autograd)(at_x)) == 4.0);
  CHECK(primal(grad(with_gradients)(at_x)) == 4.0);
  CHECK(derivative<1>(with_autograd, at_x)[1] == 4.0);
  CHECK(primal(functional::jacrev(with_gradients, at_x).data()[0]) == 4.0);
}
