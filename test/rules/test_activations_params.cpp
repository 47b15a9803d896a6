// The functions with constant parameters (leaky_relu, elu, hardtanh, softplus: rules/activation.hpp)
// at several parameter sets, and xlogy and xlog1py (rules/special.hpp) at a grid of points,
// against PyTorch 1.13 (test/reference/activations.json, "parameterised" and "binary", made by
// gen_activations.py): the value and the first two derivatives in every mode and nesting, over
// tensors of every element type, and the entry points' defaults and number types. The generic
// rule tests take them too (test_rules_unary.cpp, test_rules_binary.cpp, test_rules_tensor.cpp:
// the parameterised rules at torch's defaults, as at_defaults<Rule> in all_unary_rules).
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <array>
#include <boost/mp11/algorithm.hpp>
#include <cmath>
#include <iomanip>
#include <string>
#include <type_traits>
#include <vector>

#include "rules/generic_support.hpp"
#include "support/check.hpp"
#include "support/modes.hpp"

using namespace adx;
using adx_test::close;
using adx_test::number;

namespace {

nlohmann::json const& activations() {
  static nlohmann::json const j = adx_test::read_reference("activations.json");
  return j;
}

template <class Rule>
using params_t = std::array<double, Rule::defaults.size()>;

template <class Rule>
params_t<Rule> params_of(nlohmann::json const& c) {
  params_t<Rule> p{};
  REQUIRE(c["params"].size() == p.size());
  for (std::size_t k = 0; k < p.size(); ++k) p[k] = c["params"][k].get<double>();
  return p;
}

/// Rule over x at the parameters p, through the entry points' own path.
template <class Rule>
struct with_params {
  params_t<Rule> p;
  template <class X>
  auto operator()(X const& x) const {
    return call(x, std::make_index_sequence<Rule::defaults.size()>{});
  }
  template <class X, std::size_t... K>
  auto call(X const& x, std::index_sequence<K...>) const {
    return detail::make_with_parameters<Rule>(x, p[K]...);
  }
};

using L = long double;

/// The second derivative where adx's differs from torch's on purpose (docs/derivative_rules.md):
/// the branch the first derivative takes, at elu's x = 0 and at softplus's beta x == threshold,
/// where torch's is 0; softplus's where beta x > 15, in long double, where torch's formula
/// (sigmoid (1 - sigmoid)) cancels. NaN: torch's stands.
double documented_second(std::string const& name, std::vector<double> const& p, double x) {
  if (name == "elu" && x == 0) return p[0];
  if (name == "softplus") {
    L const bx = static_cast<L>(x) * p[0];
    if (bx <= p[1] && (bx > 15 || x * p[0] == p[1])) {
      L const s = 1 / (1 + std::exp(-bx));
      return static_cast<double>(p[0] * s * (1 - s));
    }
  }
  return std::nan("");
}

}  // namespace

TEST_CASE("parameterised activations: value, first and second derivative as PyTorch 1.13's, every mode") {
  int points = 0;
  boost::mp11::mp_for_each<activation_parameterised_rules>([&](auto rule) {
    using Rule = decltype(rule);
    for (auto const& c : activations()["parameterised"]) {
      if (c["function"] != Rule::name) continue;
      with_params<Rule> const f{params_of<Rule>(c)};
      std::vector<double> const p(f.p.begin(), f.p.end());
      double const x0 = number(c["x"]);
      double want[3] = {number(c["value"]), number(c["d1"]), number(c["d2"])};
      if (double const d2 = documented_second(Rule::name, p, x0); !std::isnan(d2)) want[2] = d2;
      for (auto const& m : adx_test::unary_all_modes(f, x0)) {
        std::string const mode(m.mode);
        for (int k = 0; k < 3; ++k) {
          bool const reaches = k == 0 || (mode != "double" && (k == 1 || (mode != "dual" && mode != "var")));
          if (!reaches) continue;
          INFO(Rule::name << "(x, " << p[0] << (p.size() > 1 ? ", " + std::to_string(p[1]) : "") << ") x = " << x0
                          << " d" << k << " mode " << mode << ": got " << std::setprecision(17) << m.d[k] << " want "
                          << want[k]);
          CHECK(close(m.d[k], want[k], k < 2 ? 1e-15 : 1e-12, k < 2 ? 1e-300 : 1e-15));
        }
      }
      ++points;
    }
  });
  CHECK(points == static_cast<int>(activations()["parameterised"].size()));
  CHECK(points >= 400);
}

TEST_CASE("parameterised activations: every nesting level gives the same first derivative, edges included") {
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  int checked = 0;
  boost::mp11::mp_for_each<activation_parameterised_rules>([&](auto rule) {
    using Rule = decltype(rule);
    std::vector<params_t<Rule>> sets;
    for (auto const& c : activations()["parameterised"])
      if (c["function"] == Rule::name && (sets.empty() || sets.back() != params_of<Rule>(c)))
        sets.push_back(params_of<Rule>(c));
    for (auto const& p : sets) {
      with_params<Rule> const f{p};
      auto const g = [&f](auto const& x, auto const&) { return f(x); };
      for (double x0 :
           {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 6.0, 5.0, 10.0, 20.0, -2.5, 1e-310, 1e300, -1e300, inf, -inf, nan}) {
        INFO(Rule::name << " at x = " << x0 << ", parameters " << p[0]);
        checked += adx_test::rules::check_levels_agree(g, x0, 0.0, "d/dx");
      }
    }
  });
  CHECK(checked > 500);
}

TEST_CASE("xlogy, xlog1py: value, partials and second derivatives as PyTorch 1.13's, every mode") {
  int points = 0;
  auto check = [&](std::string const& name, auto const& f) {
    for (auto const& c : activations()["binary"]) {
      if (c["function"] != name) continue;
      double const x0 = number(c["x"]), y0 = number(c["y"]);
      double const v = number(c["value"]), gx = number(c["dx"]), gy = number(c["dy"]);
      double const hxx = number(c["dxx"]), hxy = number(c["dxy"]), hyx = number(c["dyx"]), hyy = number(c["dyy"]);
      INFO(name << "(" << x0 << ", " << y0 << ")");
      CHECK(close(static_cast<double>(f(x0, y0)), v, 1e-15, 1e-300));
      bool const second_finite = std::isfinite(hxx) && std::isfinite(hxy) && std::isfinite(hyx) && std::isfinite(hyy);
      for (auto const& m : adx_test::binary_all_modes(f, x0, y0)) {
        std::string const mode(m.mode);
        INFO("mode " << mode << ": " << std::setprecision(17) << m.v << " " << m.gx << " " << m.gy << " " << m.hxx
                     << " " << m.hxy << " " << m.hyy);
        CHECK(close(m.v, v, 1e-15, 1e-300));
        CHECK(close(m.gx, gx, 1e-15, 1e-300));
        CHECK(close(m.gy, gy, 1e-15, 1e-300));
        if (mode == "var") continue;
        // reverse over reverse: each at every point. In the modes with a forward level a zero
        // tangent times an infinite or NaN derivative is NaN (a seed's constant part, or the
        // other operand's: docs/derivative_rules.md): compared where torch's are all finite
        bool const finite = second_finite && std::isfinite(gx) && std::isfinite(gy);
        if (mode != "var<var>" && !finite) continue;
        // d/dy of d/dx at x == 0, y <= 0 (y <= -1 for xlog1py): 0, where d/dx is the constant
        // 0 of torch's mask; torch's masked_fill backward gives 0 * inf = NaN at the pole
        double const pole = name == "xlogy" ? 0.0 : -1.0;
        double const want_xy = x0 == 0 && y0 <= pole ? 0.0 : hxy;
        CHECK(close(m.hxx, hxx, 1e-14, 1e-300));
        CHECK(close(m.hxy, mode == "var<var>" ? want_xy : hyx, 1e-14, 1e-300));
        CHECK(close(m.hyy, hyy, 1e-14, 1e-300));
      }
      ++points;
    }
  };
  check("xlogy", [](auto const& x, auto const& y) { return xlogy(x, y); });
  check("xlog1py", [](auto const& x, auto const& y) { return xlog1py(x, y); });
  CHECK(points == static_cast<int>(activations()["binary"].size()));
  CHECK(points >= 180);
}

TEST_CASE("parameterised activations over tensors of numbers, duals and variables give torch's numbers") {
  int checked = 0;
  boost::mp11::mp_for_each<activation_parameterised_rules>([&](auto rule) {
    using Rule = decltype(rule);
    // one tensor per parameter set: its points, in order
    std::vector<std::pair<params_t<Rule>, std::vector<nlohmann::json const*>>> sets;
    for (auto const& c : activations()["parameterised"]) {
      if (c["function"] != Rule::name) continue;
      if (sets.empty() || sets.back().first != params_of<Rule>(c)) sets.push_back({params_of<Rule>(c), {}});
      sets.back().second.push_back(&c);
    }
    for (auto const& set : sets) {
      auto const& p = set.first;  // (clang 14 cannot capture bindings)
      auto const& cases = set.second;
      with_params<Rule> const f{p};
      std::size_t const n = cases.size();
      tensor<double> x0 = zeros<double>(shape{n});
      for (std::size_t i = 0; i < n; ++i) x0[i] = number((*cases[i])["x"]);
      tensor<double> const y = eval(f(x0));
      tensor<dual<double>> const xd =
          tensor<dual<double>>::generate(shape{n}, [&](std::size_t i) { return dual<double>(x0[i], 1.0); });
      tensor<dual<double>> const yd = eval(f(xd));
      tape_scope<var<double>> scope;
      tensor<var<double>> const xv(x0);
      tensor<var<double>> const yv = eval(f(xv));
      backward(sum(yv));
      tensor<double> const gv = adjoints(xv);
      for (std::size_t i = 0; i < n; ++i) {
        auto const& c = *cases[i];
        INFO(Rule::name << " at x = " << x0[i] << ", parameters " << p[0]);
        double const v = number(c["value"]), d1 = number(c["d1"]);
        CHECK(close(y[i], v, 1e-15, 1e-300));
        CHECK(close(yd[i].value(), v, 1e-15, 1e-300));
        CHECK(close(yd[i].tangent(), d1, 1e-15, 1e-300));
        CHECK(close(yv[i].value(), v, 1e-15, 1e-300));
        CHECK(close(gv[i], d1, 1e-15, 1e-300));
        ++checked;
      }
    }
  });
  CHECK(checked == static_cast<int>(activations()["parameterised"].size()));
}

TEST_CASE("xlogy, xlog1py over tensors, and against a broadcast number on either side") {
  auto check = [](std::string const& name, auto const& f) {
    std::vector<double> xs, ys, v, gx, gy;
    for (auto const& c : activations()["binary"]) {
      if (c["function"] != name) continue;
      xs.push_back(number(c["x"]));
      ys.push_back(number(c["y"]));
      v.push_back(number(c["value"]));
      gx.push_back(number(c["dx"]));
      gy.push_back(number(c["dy"]));
    }
    std::size_t const n = xs.size();
    tensor<double> const xt(shape{n}, xs), yt(shape{n}, ys);
    tensor<double> const r = eval(f(xt, yt));
    tape_scope<var<double>> scope;
    tensor<var<double>> const xv(xt), yv(yt);
    backward(sum(f(xv, yv)));
    tensor<double> const ax = adjoints(xv), ay = adjoints(yv);
    for (std::size_t i = 0; i < n; ++i) {
      INFO(name << "(" << xs[i] << ", " << ys[i] << ")");
      CHECK(close(r[i], v[i], 1e-15, 1e-300));
      CHECK(close(ax[i], gx[i], 1e-15, 1e-300));
      CHECK(close(ay[i], gy[i], 1e-15, 1e-300));
    }
    // a tensor of variables against a number, on either side
    tensor<var<double>> const t(tensor<double>{0.5, 2.0, 3.0});
    backward(var<double>(sum(f(t, 2.5)) + sum(f(1.5, t))));
    tensor<double> const at = adjoints(t);
    for (std::size_t i = 0; i < 3; ++i) {
      double const ti = t[i].value();
      dual<double> const a = f(dual<double>(ti, 1.0), 2.5), b = f(1.5, dual<double>(ti, 1.0));
      CHECK(close(at[i], a.tangent() + b.tangent(), 1e-15, 0));
    }
  };
  check("xlogy", [](auto const& x, auto const& y) { return xlogy(x, y); });
  check("xlog1py", [](auto const& x, auto const& y) { return xlog1py(x, y); });
}

TEST_CASE("the new functions fused in one tensor expression: the scalar derivatives, first and second order") {
  tensor<double> const x0{-3.0, -0.5, 0.0, 0.25, 0.75, 2.0, 25.0};
  tensor<double> const y0{0.5, 2.0, 1.5, 0.0, 3.0, 0.25, 4.0};
  auto const g = [](auto const& x, auto const& y) {
    return leaky_relu(x, 0.2) * elu(x, 0.5) + hardtanh(x, -0.5, 2.0) - softplus(x, 2.0, 10.0) +
           gelu_tanh(x) * xlogy(x, y) + xlog1py(y, x * x) + erfinv(x * 0.03) * y;
  };
  {
    tape_scope<var<double>> scope;
    tensor<var<double>> x(x0), y(y0);
    var<double> const s = sum(g(x, y));
    backward(s);
    for (std::size_t i = 0; i < x0.size(); ++i) {
      INFO("x = " << x0[i] << ", y = " << y0[i]);
      dual<double> const dx = g(dual<double>(x0[i], 1.0), y0[i]), dy = g(x0[i], dual<double>(y0[i], 1.0));
      CHECK(close(x[i].adjoint(), dx.tangent(), 1e-14, 1e-300));
      CHECK(close(y[i].adjoint(), dy.tangent(), 1e-14, 1e-300));
    }
  }
  {  // second order: the gradient's own gradient, a tensor of var<var> (reverse over reverse)
    using V2 = var<var<double>>;
    tape_scope<V2> scope;
    tensor<V2> const x(x0), y(y0);
    V2 const s = sum(g(x, y));
    backward(s);
    var<double> gsum = 0.0;
    for (std::size_t i = 0; i < x0.size(); ++i) gsum = gsum + x[i].adjoint();
    backward(gsum);
    for (std::size_t i = 0; i < x0.size(); ++i) {
      INFO("x = " << x0[i] << ", y = " << y0[i]);
      auto const d = derivative<2>([&](auto const& t) { return g(t, y0[i]); }, x0[i]);
      CHECK(close(primal(x[i].adjoint()), d[1], 1e-14, 1e-300));
      CHECK(close(x[i].value().adjoint(), d[2], 1e-12, 1e-14));
    }
  }
  {  // forward over reverse: var<dual>, every x tangent 1
    tape_scope<var<dual<double>>> scope;
    tensor<var<dual<double>>> const x = tensor<var<dual<double>>>::generate(
        shape{x0.size()}, [&](std::size_t i) { return var<dual<double>>(dual<double>(x0[i], 1.0)); });
    tensor<var<dual<double>>> const y = tensor<var<dual<double>>>::generate(
        shape{y0.size()}, [&](std::size_t i) { return var<dual<double>>(dual<double>(y0[i], 0.0)); });
    backward(sum(g(x, y)));
    for (std::size_t i = 0; i < x0.size(); ++i) {
      INFO("x = " << x0[i] << ", y = " << y0[i]);
      auto const d = derivative<2>([&](auto const& t) { return g(t, y0[i]); }, x0[i]);
      CHECK(close(x[i].adjoint().value(), d[1], 1e-14, 1e-300));
      CHECK(close(x[i].adjoint().tangent(), d[2], 1e-12, 1e-14));
    }
  }
}

TEST_CASE("entry points: torch's defaults, plain numbers, and the number type of x") {
  // the defaults are torch's: negative_slope 0.01, alpha 1, [-1, 1], beta 1 and threshold 20
  CHECK(leaky_relu(-2.0) == leaky_relu(-2.0, 0.01));
  CHECK(leaky_relu(-2.0) == -0.02);
  CHECK(elu(-1.0) == elu(-1.0, 1.0));
  CHECK(hardtanh(3.0) == 1.0);
  CHECK(hardtanh(-3.0) == -1.0);
  CHECK(softplus(25.0) == 25.0);
  CHECK(softplus(0.5) == softplus(0.5, 1.0, 20.0));
  CHECK(softplus(0.5, 2, 10) == softplus(0.5, 2.0, 10.0));  // int parameters
  CHECK(leaky_relu(-2) == -0.02);                           // an int x is a double
  // float stays float: x and the parameters (as torch converts them to the tensor's type)
  static_assert(std::is_same_v<decltype(leaky_relu(1.0f, 0.1)), float>);
  CHECK(leaky_relu(-1.0f, 0.1) == -0.1f);
  static_assert(std::is_same_v<decltype(eval(elu(tensor<float>{1.0f}, 0.5)))::value_type, float>);
  static_assert(std::is_same_v<decltype(eval(hardtanh(tensor<float>{1.0f} * 2.0f, -0.5, 0.5)))::value_type, float>);
  {
    tape_scope<var<float>> scope;
    var<float> x = -1.0f;
    var<float> const y = leaky_relu(x, 0.1);
    backward(y);
    CHECK(y.value() == -0.1f);
    CHECK(x.adjoint() == 0.1f);
  }
  // xlogy and xlog1py over plain numbers, and erfinv's inverse
  CHECK(xlogy(0.0, 0.0) == 0.0);
  CHECK(std::isnan(xlogy(0.0, std::nan(""))));
  CHECK(xlog1py(0, -1) == 0.0);
  CHECK(close(std::erf(erfinv(0.3)), 0.3, 1e-15, 0));
  CHECK(std::isinf(erfinv(-1.0)));
  // gelu_tanh's derivative where torch's overflows into NaN (x^2 = inf): 1 and 0
  CHECK(derivative<1>([](auto const& t) { return gelu_tanh(t); }, 1e200)[1] == 1.0);
  CHECK(derivative<1>([](auto const& t) { return gelu_tanh(t); }, -1e200)[1] == 0.0);
}
