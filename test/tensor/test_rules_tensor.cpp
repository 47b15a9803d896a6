// The generic rule harness over tensors: every rule of adx::all_unary_rules and
// adx::all_binary_rules applied elementwise to tensor<double>, tensor<dual<double>> and
// tensor<var<double>> gives, element for element, the scalar modes' value and derivative, at
// ordinary points and at the edges (zeros, infinities, NaN, subnormals, ties). Adding a rule to
// a list is all it takes to have it tested here. Where the tensor loop runs on lanes (SLEEF),
// its values may differ from <cmath>'s by SLEEF's accuracy (test_lanes.cpp says how); elsewhere
// the numbers are the scalar rules' own, bit for bit.
#include <doctest/doctest.h>

#include <boost/mp11/algorithm.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"

using adx::dual;
using adx::tensor;
using adx::var;

namespace {

double const inf = std::numeric_limits<double>::infinity();
double const nan = std::numeric_limits<double>::quiet_NaN();

/// The points every unary rule is taken at: ordinary values in and out of each function's
/// domain, and the edges.
std::vector<double> const unary_points{-2.7, -1.3, -0.6, -0.2, 0.15, 0.45, 0.9,    1.6,   2.4,    7.5, 0.0,  -0.0,
                                       1.0,  -1.0, 0.5,  -0.5, 2.0,  -3.0, 1e-310, 1e300, -1e300, inf, -inf, nan};
/// The pairs every binary rule is taken at (ties and zeros among them).
std::vector<std::pair<double, double>> const binary_points{
    {0.7, 1.3},  {-1.2, 0.4}, {2.5, -0.8}, {0.3, 0.3},  {-2.0, -2.0}, {0.0, 1.5}, {1.5, 0.0}, {0.0, 0.0},
    {-0.0, 2.0}, {4.0, 0.5},  {0.5, 3.0},  {-1.5, 2.0}, {inf, 1.0},   {1.0, inf}, {nan, 2.0}, {2.0, nan}};

using adx_test::ulps;

/// Whether a tensor loop may run Rule on lanes, where transcendental functions are SLEEF's.
template <class Rule>
constexpr bool on_lanes() {
  if constexpr (requires { Rule::lanes; })
    return ADX_LANES && Rule::lanes;
  else
    return false;
}

/// A tensor value against the scalar one: the same number, or within SLEEF's and glibc's 1 ulp
/// each on lanes.
bool same_value(double tensor_value, double scalar_value, bool lanes) {
  if (std::isnan(tensor_value) || std::isnan(scalar_value)) return std::isnan(tensor_value) && std::isnan(scalar_value);
  if (!lanes || std::isinf(tensor_value) || std::isinf(scalar_value)) return tensor_value == scalar_value;
  return ulps(tensor_value, scalar_value) <= 2;
}
/// A derivative against the scalar one: the same number, or on lanes what a value 1 ulp away
/// makes of it (a rule such as tanh' = 1 - r^2 cancels: relative to the operands).
bool same_derivative(double tensor_d, double scalar_d, bool lanes) {
  if (!lanes) return adx_test::close(tensor_d, scalar_d, 0, 0);
  return adx_test::close(tensor_d, scalar_d, 1e-12, 1e-15);
}

/// The scalar modes' value and derivatives of Rule at one point, from dual<double> (forward)
/// and var<double> (reverse, one sweep per point).
template <class Rule, std::size_t N>
struct scalar_reference {
  double value;
  std::array<double, N> forward, reverse;  // d/d operand k
};
template <class Rule>
scalar_reference<Rule, 1> scalar_unary(double x) {
  scalar_reference<Rule, 1> r{};
  dual<double> const d = adx::detail::make_expr<Rule>(dual<double>(x, 1.0));
  r.value = d.value();
  r.forward[0] = d.tangent();
  adx::tape_scope<var<double>> scope;
  var<double> const v = x;
  var<double> const y = adx::detail::make_expr<Rule>(v);
  adx::backward(y);
  r.reverse[0] = v.adjoint();
  return r;
}
template <class Rule>
scalar_reference<Rule, 2> scalar_binary(double x, double y) {
  scalar_reference<Rule, 2> r{};
  // both operands duals, as in a tensor<dual>: the other's zero tangent times an infinite
  // partial is NaN there, where a plain number gives no term (docs/derivative_rules.md)
  dual<double> const dx = adx::detail::make_expr<Rule>(dual<double>(x, 1.0), dual<double>(y, 0.0));
  dual<double> const dy = adx::detail::make_expr<Rule>(dual<double>(x, 0.0), dual<double>(y, 1.0));
  r.value = dx.value();
  r.forward = {dx.tangent(), dy.tangent()};
  adx::tape_scope<var<double>> scope;
  var<double> const vx = x, vy = y;
  var<double> const z = adx::detail::make_expr<Rule>(vx, vy);
  adx::backward(z);
  r.reverse = {vx.adjoint(), vy.adjoint()};
  return r;
}

tensor<double> tensor_of(std::vector<double> const& v) { return tensor<double>(adx::shape{v.size()}, v); }

}  // namespace

TEST_CASE("every unary rule over tensor<double>, tensor<dual> and tensor<var> gives the scalar modes' numbers") {
  std::size_t checked = 0;
  boost::mp11::mp_for_each<adx::all_unary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    constexpr bool lanes = on_lanes<Rule>();
    std::vector<double> const& x = unary_points;
    std::size_t const n = x.size();
    // numbers
    tensor<double> const y = eval(adx::detail::make_tensor_expr<Rule>(tensor_of(x)));
    // duals, each with tangent 1
    tensor<dual<double>> const xd =
        tensor<dual<double>>::generate(adx::shape{n}, [&](std::size_t i) { return dual<double>(x[i], 1.0); });
    tensor<dual<double>> const yd = eval(adx::detail::make_tensor_expr<Rule>(xd));
    // variables, one block; the gradient of the sum is each element's derivative
    adx::tape_scope<var<double>> scope;
    tensor<var<double>> const xv(tensor_of(x));
    tensor<var<double>> const yv = eval(adx::detail::make_tensor_expr<Rule>(xv));
    adx::backward(sum(yv));
    tensor<double> const gv = adx::adjoints(xv);
    for (std::size_t i = 0; i < n; ++i) {
      INFO(std::string(Rule::name) << " at x = " << x[i]);
      auto const want = scalar_unary<Rule>(x[i]);
      INFO("scalar value " << want.value << ", forward " << want.forward[0] << ", reverse " << want.reverse[0]);
      INFO("tensor value " << y[i] << ", dual " << yd[i].value() << " / " << yd[i].tangent() << ", var "
                           << yv[i].value() << " / " << gv[i]);
      CHECK(same_value(y[i], want.value, lanes));
      CHECK(adx_test::close(yd[i].value(), want.value, 0, 0));  // no lanes for duals: bit for bit
      CHECK(adx_test::close(yd[i].tangent(), want.forward[0], 0, 0));
      CHECK(same_value(yv[i].value(), want.value, lanes));
      CHECK(same_derivative(gv[i], want.reverse[0], lanes));
      ++checked;
    }
  });
  CHECK(checked >= 30 * unary_points.size());
}

TEST_CASE(
    "every binary rule over tensors, both operands tensors or one a broadcast number, gives the scalar modes' "
    "numbers") {
  std::size_t checked = 0;
  boost::mp11::mp_for_each<adx::all_binary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    constexpr bool lanes = on_lanes<Rule>();
    std::size_t const n = binary_points.size();
    std::vector<double> xs(n), ys(n);
    for (std::size_t i = 0; i < n; ++i) std::tie(xs[i], ys[i]) = binary_points[i];
    tensor<double> const y = eval(adx::detail::make_tensor_expr<Rule>(tensor_of(xs), tensor_of(ys)));
    auto const duals = [&](std::vector<double> const& v, double tangent) {
      return tensor<dual<double>>::generate(adx::shape{n}, [&](std::size_t i) { return dual<double>(v[i], tangent); });
    };
    tensor<dual<double>> const dx = eval(adx::detail::make_tensor_expr<Rule>(duals(xs, 1.0), duals(ys, 0.0)));
    tensor<dual<double>> const dy = eval(adx::detail::make_tensor_expr<Rule>(duals(xs, 0.0), duals(ys, 1.0)));
    adx::tape_scope<var<double>> scope;
    tensor<var<double>> const vx(tensor_of(xs)), vy(tensor_of(ys));
    adx::backward(sum(adx::detail::make_tensor_expr<Rule>(vx, vy)));
    tensor<double> const gx = adx::adjoints(vx), gy = adx::adjoints(vy);
    for (std::size_t i = 0; i < n; ++i) {
      INFO(std::string(Rule::name) << " at (" << xs[i] << ", " << ys[i] << ")");
      auto const want = scalar_binary<Rule>(xs[i], ys[i]);
      CHECK(same_value(y[i], want.value, lanes));
      CHECK(adx_test::close(dx[i].value(), want.value, 0, 0));
      CHECK(adx_test::close(dx[i].tangent(), want.forward[0], 0, 0));
      CHECK(adx_test::close(dy[i].tangent(), want.forward[1], 0, 0));
      CHECK(same_derivative(gx[i], want.reverse[0], lanes));
      CHECK(same_derivative(gy[i], want.reverse[1], lanes));
      // one operand a number, broadcast: a tensor of variables against it, either side
      adx::tape_scope<var<double>> inner;
      tensor<var<double>> const v(tensor_of({xs[i], xs[i]}));
      adx::backward(sum(adx::detail::make_tensor_expr<Rule>(v, ys[i])));
      tensor<double> const g_left = adx::adjoints(v);
      tensor<var<double>> const w(tensor_of({ys[i], ys[i]}));
      adx::backward(sum(adx::detail::make_tensor_expr<Rule>(xs[i], w)));
      tensor<double> const g_right = adx::adjoints(w);
      for (std::size_t k = 0; k < 2; ++k) {
        CHECK(same_derivative(g_left[k], want.reverse[0], lanes));
        CHECK(same_derivative(g_right[k], want.reverse[1], lanes));
      }
      ++checked;
    }
  });
  CHECK(checked >= 10 * binary_points.size());
}
