// Every rule of adx::all_binary_rules, in every mode and nesting combination, against each other
// and against finite differences up to the 2nd derivative. Adding a rule to the list is all it
// takes to have it tested here.
#include <doctest/doctest.h>

#include "rules/generic_support.hpp"

using namespace adx_test::rules;
using adx_test::close;

TEST_CASE("every binary rule agrees across modes and with finite differences to 2nd order") {
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_binary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    binary_fn<Rule> const f;
    for (auto const& point : {std::pair{0.7, 1.3}, {-0.4, 0.9}, {1.8, -0.7}, {2.2, 2.9}}) {
      double const x0 = point.first, y0 = point.second;  // (clang 14 cannot capture bindings)
      auto const modes = adx_test::binary_all_modes(f, x0, y0);
      auto const& r = modes[0];
      if (!std::isfinite(r.v) || !std::isfinite(r.gx) || !std::isfinite(r.gy) || !std::isfinite(r.hxx) ||
          !std::isfinite(r.hxy) || !std::isfinite(r.hyy))
        continue;
      INFO(std::string(Rule::name) << " at (" << x0 << ", " << y0 << ")");
      for (auto const& m : modes) {
        INFO("mode " << std::string(m.mode));
        for (auto [a, b] :
             {std::pair{m.v, r.v}, {m.gx, r.gx}, {m.gy, r.gy}, {m.hxx, r.hxx}, {m.hxy, r.hxy}, {m.hyy, r.hyy}})
          if (!std::isnan(a)) CHECK(close(a, b, 1e-11, 1e-12));
      }
      auto val = [&](double x, double y) { return static_cast<double>(f(x, y)); };
      auto gx = [&](double x, double y) {
        adx::dual<double> r1 = f(adx::dual<double>(x, 1.0), adx::dual<double>(y, 0.0));
        return r1.tangent();
      };
      auto gy = [&](double x, double y) {
        adx::dual<double> r1 = f(adx::dual<double>(x, 0.0), adx::dual<double>(y, 1.0));
        return r1.tangent();
      };
      CHECK(close(r.gx, fd([&](double x) { return val(x, y0); }, x0), 1e-6, 1e-7));
      CHECK(close(r.gy, fd([&](double y) { return val(x0, y); }, y0), 1e-6, 1e-7));
      CHECK(close(r.hxx, fd([&](double x) { return gx(x, y0); }, x0), 1e-6, 1e-7));
      CHECK(close(r.hxy, fd([&](double y) { return gx(x0, y); }, y0), 1e-6, 1e-7));
      CHECK(close(r.hyy, fd([&](double y) { return gy(x0, y); }, y0), 1e-6, 1e-7));
      ++checked;
    }
  });
  CHECK(checked >= 40);
}

// The edges docs/derivative_rules.md documents for two-argument rules, in every mode: the value
// and both partials (each mode's own; the Hessian slots where a mode computes them).
TEST_CASE("documented edges of binary rules hold in every mode: fmax/fmin, max/min with NaN, clamp's bounds") {
  double const nan = std::numeric_limits<double>::quiet_NaN();
  struct edge {
    char const* what;
    double x, y, v, gx, gy;  // v NaN: the value must be NaN
  };
  auto check_edges = [&](auto const& f, std::initializer_list<edge> edges) {
    for (edge const& e : edges) {
      INFO(e.what);
      for (auto const& m : adx_test::binary_all_modes(f, e.x, e.y)) {
        INFO("mode " << std::string(m.mode));
        if (std::isnan(e.v))
          CHECK(std::isnan(m.v));
        else
          CHECK(m.v == e.v);
        CHECK(m.gx == e.gx);
        CHECK(m.gy == e.gy);
      }
    }
  };
  check_edges([](auto const& x, auto const& y) { return fmax(x, y); }, {{"fmax tie: all to x", 1.5, 1.5, 1.5, 1, 0},
                                                                        {"fmax(x, NaN) = x", 1.5, nan, 1.5, 1, 0},
                                                                        {"fmax(NaN, y) = y", nan, -2.0, -2.0, 0, 1}});
  check_edges([](auto const& x, auto const& y) { return fmin(x, y); },
              {{"fmin tie: all to x", -0.5, -0.5, -0.5, 1, 0}, {"fmin(x, NaN) = x", -0.5, nan, -0.5, 1, 0}});
  check_edges([](auto const& x, auto const& y) { return max(x, y); },
              {{"max tie: 1/2 each", 2.0, 2.0, 2.0, 0.5, 0.5},
               {"max(x, NaN): NaN, partials 0", 2.0, nan, nan, 0, 0},
               {"max(NaN, y): NaN, partials 0", nan, 2.0, nan, 0, 0}});
  check_edges([](auto const& x, auto const& y) { return min(x, y); },
              {{"min tie: 1/2 each", 2.0, 2.0, 2.0, 0.5, 0.5}, {"min(x, NaN): NaN, partials 0", 2.0, nan, nan, 0, 0}});
  // clamp(x, lo, 3): the bound that is returned gets 1; at the bound, x does (inclusive)
  check_edges([](auto const& x, auto const& lo) { return clamp(x, lo, 3.0); },
              {{"x below lo: lo returned", 0.5, 1.0, 1.0, 0, 1},
               {"x at lo: x, inclusive", 1.0, 1.0, 1.0, 1, 0},
               {"x inside", 2.0, 1.0, 2.0, 1, 0},
               {"x above hi: the constant hi", 4.0, 1.0, 3.0, 0, 0}});
  check_edges([](auto const& x, auto const& hi) { return clamp(x, -1.0, hi); },
              {{"x above hi: hi returned", 4.0, 3.0, 3.0, 0, 1},
               {"lo > hi: hi returned", 0.0, -2.0, -2.0, 0, 1},
               {"NaN x: NaN, partials 0", nan, 3.0, nan, 0, 0}});
}

// A nested number carries first derivatives at two levels: the inner one inside the value, the
// outer one from the partials. At a tie of max/min both must give each side 1/2; when the value
// was one side whole, the inner level gave that side everything.
TEST_CASE("max and min ties: every nesting level gives each side 1/2") {
  using namespace adx;
  auto check_levels = [](char const* what, auto const& f, double x0, double y0, double gx, double gy) {
    INFO(what);
    {  // dual<dual>: x seeded at both levels, then y
      using D2 = dual<dual<double>>;
      D2 const rx = f(detail::seed_all_levels<2>(x0), D2(y0));
      CHECK(rx.value().tangent() == gx);
      CHECK(rx.tangent().value() == gx);
      CHECK(rx.tangent().tangent() == 0.0);
      D2 const ry = f(D2(x0), detail::seed_all_levels<2>(y0));
      CHECK(ry.value().tangent() == gy);
      CHECK(ry.tangent().value() == gy);
    }
    {  // var<dual>: the value's tangent along x against the adjoints
      tape_scope<var<dual<double>>> s;
      var<dual<double>> x = dual<double>(x0, 1.0), y = dual<double>(y0, 0.0);
      var<dual<double>> r = f(x, y);
      CHECK(r.value().tangent() == gx);
      backward(r);
      CHECK(x.adjoint().value() == gx);
      CHECK(y.adjoint().value() == gy);
      CHECK(x.adjoint().tangent() == 0.0);
    }
    {  // var<var>: the inner tape's gradient of the value against the outer gradient
      tape_scope<var<var<double>>> s;
      var<var<double>> x = x0, y = y0;
      var<var<double>> r = f(x, y);
      backward(r);
      CHECK(primal(x.adjoint()) == gx);
      CHECK(primal(y.adjoint()) == gy);
      backward(r.value());
      CHECK(x.value().adjoint() == gx);
      CHECK(y.value().adjoint() == gy);
    }
    {  // dual<var>: the tangent against the inner tape's gradient of the value
      tape_scope<dual<var<double>>> s;
      dual<var<double>> x(var<double>(x0), 1.0), y(var<double>(y0), 0.0);
      dual<var<double>> r = f(x, y);
      CHECK(primal(r.tangent()) == gx);
      var<double> v = r.value();
      backward(v);
      CHECK(x.value().adjoint() == gx);
      CHECK(y.value().adjoint() == gy);
    }
  };
  double const inf = std::numeric_limits<double>::infinity();
  auto mx = [](auto const& x, auto const& y) { return max(x, y); };
  auto mn = [](auto const& x, auto const& y) { return min(x, y); };
  check_levels("max tie", mx, 2.0, 2.0, 0.5, 0.5);
  check_levels("min tie", mn, -1.5, -1.5, 0.5, 0.5);
  check_levels("max tie at 0 (relu-like)", mx, 0.0, 0.0, 0.5, 0.5);
  check_levels("max tie at +inf", mx, inf, inf, 0.5, 0.5);
  check_levels("max without a tie", mx, 3.0, 2.0, 1.0, 0.0);
  check_levels("min without a tie", mn, 3.0, 2.0, 0.0, 1.0);
  // the value itself stays the plain max at every level, zero's sign included
  using D2 = dual<dual<double>>;
  CHECK(std::signbit(primal(max(D2(-0.0), D2(-0.0)))));
  CHECK(primal(max(detail::seed_all_levels<2>(1e-310), D2(1e-310))) == 1e-310);
  D2 const relu_like = max(detail::seed_all_levels<2>(0.0), 0.0);  // a plain number on one side
  CHECK(relu_like.value().tangent() == 0.5);
  CHECK(relu_like.tangent().value() == 0.5);
}

// The rules that pick an operand give the one not picked partial 0. Through an infinite partial
// below it that is 0 * inf = NaN in torch (its masks multiply the gradient), here in every mode,
// and at both levels of a nested number. (LibTorch 1.13, float64: the gradient and the second
// derivative of each program at x = 0 are NaN.)
TEST_CASE("rules that pick an operand: the one not picked stays connected at every nesting level") {
  using namespace adx;
  auto check_nan_levels = [](char const* what, auto const& f) {
    INFO(what);
    {
      tape_scope<var<double>> s;
      var<double> x = 0.0;
      backward(var<double>(f(x)));
      CHECK(std::isnan(x.adjoint()));
    }
    CHECK(std::isnan(dual<double>(f(dual<double>(0.0, 1.0))).tangent()));
    {  // dual<dual>: x seeded at both levels
      dual<dual<double>> const r = f(detail::seed_all_levels<2>(0.0));
      CHECK(std::isnan(r.value().tangent()));
      CHECK(std::isnan(r.tangent().value()));
    }
    {  // var<dual>: the value's tangent and the adjoint
      tape_scope<var<dual<double>>> s;
      var<dual<double>> x = dual<double>(0.0, 1.0);
      var<dual<double>> r = f(x);
      CHECK(std::isnan(r.value().tangent()));
      backward(r);
      CHECK(std::isnan(x.adjoint().value()));
    }
    {  // var<var>: the outer gradient, and the inner tape's gradient of the value
      tape_scope<var<var<double>>> s;
      var<var<double>> x = 0.0;
      var<var<double>> r = f(x);
      backward(r);
      CHECK(std::isnan(primal(x.adjoint())));
      backward(r.value());
      CHECK(std::isnan(x.value().adjoint()));
    }
    {  // dual<var>: the tangent, and the inner tape's gradient of the value
      tape_scope<dual<var<double>>> s;
      dual<var<double>> x(var<double>(0.0), 1.0);
      dual<var<double>> r = f(x);
      CHECK(std::isnan(primal(r.tangent())));
      var<double> v = r.value();
      backward(v);
      CHECK(std::isnan(x.value().adjoint()));
    }
  };
  check_nan_levels("max(1, sqrt(x))", [](auto const& x) { return max(1.0, sqrt(x)); });
  check_nan_levels("min(-1, -sqrt(x))", [](auto const& x) { return min(-1.0, -sqrt(x)); });
  check_nan_levels("fmax(1, sqrt(x))", [](auto const& x) { return fmax(1.0, sqrt(x)); });
  check_nan_levels("fmin(-1, -sqrt(x))", [](auto const& x) { return fmin(-1.0, -sqrt(x)); });
  check_nan_levels("clamp(sqrt(x), 5, 6)", [](auto const& x) { return clamp(sqrt(x), 5.0, 6.0); });
  check_nan_levels("where(x < 1, 1, sqrt(x))", [](auto const& x) { return where(primal(x) < 1, 1.0, sqrt(x)); });
  check_nan_levels("relu(-sqrt(x))", [](auto const& x) { return relu(-sqrt(x)); });
}

// d(x/y)/dy = -(x/y)/y, computed as (x/y) * -(1/y) to share 1/y with d/dx. Where 1/y overflows
// (a subnormal y) the product is -inf, but -(x/y)/y is finite: torch's -9.99989e299 here.
TEST_CASE("div: d/dy stays finite where 1/y overflows (a subnormal y)") {
  using namespace adx;
  double const x0 = 1e-320, y0 = 1e-310;
  double const want = -(x0 / y0) / y0;
  REQUIRE(std::isfinite(want));
  CHECK(close(want, -9.99989e299, 1e-5));
  {
    tape_scope<var<double>> s;
    var<double> x = x0, y = y0;
    backward(var<double>(x / y));
    CHECK(std::isinf(x.adjoint()));  // 1/y itself overflows
    CHECK(y.adjoint() == want);
  }
  CHECK(dual<double>(x0 / dual<double>(y0, 1.0)).tangent() == want);
  {
    tape_scope<var<var<double>>> s;
    var<var<double>> x = x0, y = y0;
    var<var<double>> r = x / y;
    backward(r);
    CHECK(primal(y.adjoint()) == want);
    backward(r.value());
    CHECK(y.value().adjoint() == want);
  }
  {  // tensors: a block (the lanes path where built with SLEEF) and one subnormal among normal y
    tape_scope<var<double>> s;
    tensor<var<double>> x(full<double>({9}, x0)), y(full<double>({9}, y0));
    backward(sum(x / y));
    tensor<double> const gy = adjoints(y);
    for (std::size_t i = 0; i < gy.size(); ++i) CHECK(gy[i] == want);
  }
  {
    tape_scope<var<double>> s;
    tensor<double> y0s = full<double>({9}, 2.0);
    y0s[4] = y0;
    tensor<var<double>> x(full<double>({9}, x0)), y(y0s);
    backward(sum(x / y));
    tensor<double> const gy = adjoints(y);
    CHECK(gy[4] == want);
    CHECK(gy[3] == -(x0 / 2.0) / 2.0);
  }
}

TEST_CASE("every binary rule: each nesting level gives the same first derivatives, edges included") {
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // ties, zeros, poles of / and pow, infinities, NaN, subnormals
  std::pair<double, double> const points[] = {{0.0, 0.0},      {-0.0, 0.0}, {2.0, 2.0},      {-1.5, -1.5}, {1.0, 0.0},
                                              {0.0, 1.0},      {0.0, -1.0}, {-2.0, 3.0},     {2.0, 0.5},   {0.5, 2.0},
                                              {-8.0, 1.0 / 3}, {inf, inf},  {-inf, -inf},    {inf, 1.0},   {1.0, inf},
                                              {1.0, nan},      {nan, 1.0},  {1e-310, 1e-310}};
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_binary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    binary_fn<Rule> const f;
    auto const swapped = [&f](auto const& y, auto const& x) { return f(x, y); };  // along y
    for (auto const& point : points) {
      INFO(std::string(Rule::name) << " at (" << point.first << ", " << point.second << ")");
      checked += check_levels_agree(f, point.first, point.second, "d/dx");
      checked += check_levels_agree(swapped, point.second, point.first, "d/dy");
    }
  });
  CHECK(checked > 500);
}

TEST_CASE("documented edges of unary rules: rounding has derivative 0, round is half away from 0") {
  auto check_zero = [](char const* what, auto const& f, double x0, double value) {
    INFO(what);
    for (auto const& m : adx_test::unary_all_modes(f, x0)) {
      INFO("mode " << std::string(m.mode));
      CHECK(m.d[0] == value);
      for (std::size_t k = 1; k < m.d.size(); ++k)
        if (!std::isnan(m.d[k])) CHECK(m.d[k] == 0.0);
    }
  };
  check_zero(
      "floor(2.5)", [](auto const& x) { return floor(x); }, 2.5, 2.0);
  check_zero(
      "ceil(2.5)", [](auto const& x) { return ceil(x); }, 2.5, 3.0);
  check_zero(
      "round(2.5)", [](auto const& x) { return round(x); }, 2.5, 3.0);
  check_zero(
      "round(-2.5)", [](auto const& x) { return round(x); }, -2.5, -3.0);
  check_zero(
      "trunc(-2.5)", [](auto const& x) { return trunc(x); }, -2.5, -2.0);
  // connected for torch (a zero); unconnected for tf.gradients (TensorFlow's None)
  adx::tape_scope<adx::var<double>> scope;
  adx::var<double> const x = 2.5;
  CHECK(*adx::autograd::grad(floor(x) * 3.0, x)[0] == 0.0);
  CHECK_FALSE(adx::gradients(floor(x) * 3.0, std::vector{x})[0].has_value());
  // tgamma' = tgamma * digamma is NaN at a pole, as lgamma' is
  CHECK(std::isnan(adx::derivative<1>([](auto t) { return tgamma(t); }, -2.0)[1]));
  adx::var<double> const p = -2.0;
  adx::var<double> const t = tgamma(p);
  adx::backward(t);
  CHECK(std::isnan(p.adjoint()));
}
