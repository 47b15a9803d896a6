// The activation functions (rules/activation.hpp) and erfinv against PyTorch 1.13: the value and
// the first two derivatives at points from -1000 to 1000 and NaN, edges included (0, -0, the
// softplus threshold, relu6's 0 and 6, logit's 0 and 1, erfinv's -1 and 1), in every mode and nesting
// (test/reference/activations.json, made by gen_activations.py), and elementwise over tensors. The generic rule tests
// (test_rules_unary.cpp) take them too: every order against finite differences, and every
// nesting level's first derivative the same.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <iomanip>
#include <numbers>
#include <string>

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

using L = long double;
L sig(L x) { return 1 / (1 + std::exp(-x)); }

/// The second derivatives in closed form, in long double. torch's are less exact where a formula
/// cancels: 1 - sigmoid(x) above x = 15 (softplus, logsigmoid, silu: 1e-8 relative at x = 20, 0
/// at x = 40 where the second derivative is -4e-18), softplus's mask at exactly its threshold
/// (0 at x = 20, whose first derivative takes the other branch; likewise selu at 0), sinc near 0 (35 % off at
/// x = 1e-8, NaN at 0), and logit outside [0, 1], where its value and first derivative are NaN
/// and torch's second is 0 (adx: NaN). NaN: no closed form here (mish: torch's is compared).
double second_derivative(std::string const& name, double x0) {
  L const x = x0, s = sig(x);
  if (name == "sigmoid") return static_cast<double>(s * (1 - s) * (1 - 2 * s));
  if (name == "logsigmoid") return static_cast<double>(-s * (1 - s));
  if (name == "softplus") return x > 20 ? 0.0 : static_cast<double>(s * (1 - s));
  if (name == "silu") return static_cast<double>(s * (1 - s) * (2 + x * (1 - 2 * s)));
  if (name == "gelu")
    return static_cast<double>(std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi_v<L>) * (2 - x * x));
  if (name == "logit")
    return x < 0 || x > 1 ? std::nan("") : static_cast<double>(-(1 - 2 * x) / (x * (1 - x) * x * (1 - x)));
  if (name == "relu6") return 0.0;
  if (name == "selu")  // the branch of the first derivative at 0 (torch's second is 0 there)
    return x <= 0 ? static_cast<double>(1.6732632423543772848170429916717L * 1.0507009873554804934193349852946L *
                                        std::exp(x))
                  : 0.0;
  if (name == "sinc") {
    L const pi = std::numbers::pi_v<L>, u = pi * x;
    if (std::abs(u) < 0.1L)  // the series of (2 - u^2) sin u - 2u cos u) / u^3
      return static_cast<double>(pi * pi *
                                 (-1.0L / 3 + u * u / 10 - u * u * u * u / 168 + u * u * u * u * u * u / 6480));
    return static_cast<double>(pi * pi * ((2 - u * u) * std::sin(u) - 2 * u * std::cos(u)) / (u * u * u));
  }
  return std::nan("");
}

/// Each point of `name`: value and d1 as torch's, d2 as second_derivative's (torch's for mish,
/// gelu_tanh and erfinv),
/// in every mode that reaches the order. sinc's d1 for |pi x| < 0.1 is its series -pi u/3 + ...
/// (torch's cancels there).
template <class F>
int check_function(std::string const& name, F const& f) {
  int points = 0;
  for (auto const& c : activations()["cases"]) {
    if (c["function"] != name) continue;
    double const x0 = number(c["x"]);
    double want[3] = {number(c["value"]), number(c["d1"]), number(c["d2"])};
    // gelu_tanh beyond |x| = 1.3e154, where torch's derivative is 0 * inf = NaN: 1 or 0
    // (docs/derivative_rules.md)
    if (name == "gelu_tanh" && std::abs(x0) > 1.3e154 && std::isfinite(x0)) want[1] = x0 > 0 ? 1 : 0, want[2] = 0;
    if (name != "mish" && name != "gelu_tanh" && name != "erfinv") want[2] = second_derivative(name, x0);
    bool const d2_overflows = std::isinf(want[2]);  // logit at 0, 1, 1e-300: NaN as torch's, or inf
    if (name == "sinc" && std::abs(x0) < 0.01) {
      L const pi = std::numbers::pi_v<L>, u = pi * x0;
      want[1] = static_cast<double>(pi * (-u / 3 + u * u * u / 30));
    }
    for (auto const& m : adx_test::unary_all_modes(f, x0)) {
      std::string const mode(m.mode);
      for (int k = 0; k < 3; ++k) {
        bool const reaches = k == 0 || (mode != "double" && (k == 1 || (mode != "dual" && mode != "var")));
        if (!reaches) continue;
        // where f' is infinite a nested forward mode's f'' is NaN (a constant seed's zero
        // tangent times the infinite partial), as for every rule (test_reference.cpp)
        bool const nested_forward = mode == "dual^4" || mode == "var<dual>" || mode == "var<dual<dual>>";
        if (k == 2 && nested_forward && std::isinf(want[1])) continue;
        if (k == 2 && d2_overflows) {
          CHECK_FALSE(std::isfinite(m.d[k]));
          continue;
        }
        INFO(name << " x = " << x0 << " d" << k << " mode " << mode << ": got " << std::setprecision(17) << m.d[k]
                  << " want " << want[k]);
        // d2: its formulas cancel where the function flattens (1 - 2 sigmoid near 0, 1 - sigmoid
        // above 15), in adx and torch alike: a few units of 1e-16 absolute; gelu_tanh'' takes
        // tanh's derivative 1 - tanh^2, which cancels as tanh nears 1 (x = 6: 2e-15)
        double const d2_atol = name == "gelu_tanh" ? 1e-14 : 1e-15;
        CHECK(close(m.d[k], want[k], k < 2 ? 1e-13 : 1e-10, k < 2 ? 1e-300 : d2_atol));
      }
    }
    ++points;
  }
  return points;
}

}  // namespace

TEST_CASE("activations: value, first and second derivative as PyTorch 1.13's, edges included, every mode") {
  int points = 0;
  points += check_function("sigmoid", [](auto const& x) { return sigmoid(x); });
  points += check_function("logsigmoid", [](auto const& x) { return logsigmoid(x); });
  points += check_function("softplus", [](auto const& x) { return softplus(x); });
  points += check_function("silu", [](auto const& x) { return silu(x); });
  points += check_function("mish", [](auto const& x) { return mish(x); });
  points += check_function("gelu", [](auto const& x) { return gelu(x); });
  points += check_function("logit", [](auto const& x) { return logit(x); });
  points += check_function("sinc", [](auto const& x) { return sinc(x); });
  points += check_function("relu6", [](auto const& x) { return relu6(x); });
  points += check_function("selu", [](auto const& x) { return selu(x); });
  points += check_function("gelu_tanh", [](auto const& x) { return gelu_tanh(x); });
  points += check_function("erfinv", [](auto const& x) { return erfinv(x); });
  CHECK(points == static_cast<int>(activations()["cases"].size()));
}

TEST_CASE("activations: over tensors, elementwise and fused, the scalar numbers") {
  tensor<double> const x0{-3.0, -0.5, 0.0, 0.25, 0.75, 2.0, 25.0};
  tape_scope<var<double>> scope;
  tensor<var<double>> x(x0);
  var<double> const y = sum(sigmoid(x) + logsigmoid(x) * silu(x) - softplus(x) + mish(x) * gelu(x) + sinc(x));
  backward(y);
  for (std::size_t i = 0; i < x0.size(); ++i) {
    double const xi = x0.data()[i];
    auto const g = [](auto const& t) {
      return sigmoid(t) + logsigmoid(t) * silu(t) - softplus(t) + mish(t) * gelu(t) + sinc(t);
    };
    auto const d = derivative<1>(g, xi);
    INFO("x = " << xi);
    CHECK(close(x.data()[i].adjoint(), d[1], 1e-14, 1e-300));
  }
  // logit over a tensor of probabilities, and plain numbers: an int is taken as a double
  tensor<double> const p{0.1, 0.5, 0.9};
  tensor<double> const l = eval(logit(p));
  CHECK(close(l.data()[0], std::log(0.1 / 0.9), 1e-15, 0));
  CHECK(sigmoid(0) == 0.5);
  CHECK(gelu(1) == gelu(1.0));
  CHECK(sinc(0) == 1.0);
}
