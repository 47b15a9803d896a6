// Forward mode: tangents, mixed operands, compound assignment and nested duals.
#include <doctest/doctest.h>

#include <adx/adx.hpp>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

TEST_CASE("dual: value and tangent of an expression, with int and double constants") {
  dual<double> x(2.0, 1.0);
  dual<double> y = 3 * x * x + 2.5 / x - 1;  // 3x^2 + 2.5/x - 1
  CHECK(y.value() == doctest::Approx(12.0 + 1.25 - 1));
  CHECK(close(y.tangent(), 6 * 2.0 - 2.5 / 4.0));
  y += x;
  CHECK(close(y.tangent(), 6 * 2.0 - 2.5 / 4.0 + 1));
  y *= y;  // alias-safe: uses the old y on the right
  CHECK(close(y.value(), std::pow(12.25 + 2, 2)));
}

TEST_CASE("dual: a constant dual has zero tangent and comparisons look at values") {
  dual<double> c = 4.0;
  CHECK(c.tangent() == 0.0);
  dual<double> x(1.0, 1.0);
  CHECK(x < c);
  CHECK(c >= 4);
  CHECK(x == 1.0);
  CHECK(primal(dual<dual<double>>(dual<double>(3.0, 1.0))) == 3.0);
}

TEST_CASE("dual: float scalars work too") {
  dual<float> x(2.0f, 1.0f);
  dual<float> y = sin(x) * x;
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(y.value())>, float>);
  CHECK(close(y.tangent(), std::cos(2.0f) * 2.0f + std::sin(2.0f), 1e-6, 1e-6));
}

TEST_CASE("adx's own functions take plain numbers, max/fmax treat NaN as documented") {
  CHECK(adx::clamp(5.0, 0.0, 1.0) == 1.0);
  CHECK(adx::relu(-2.0) == 0.0);
  CHECK(adx_test::close(adx::digamma(1.0), -0.5772156649015329));
  CHECK(adx::where(true, 1.0, 2) == 1.0);
  dual<double> n(std::nan(""), 1.0), one(1.0, 1.0);
  dual<double> m = max(n, one), fm = fmax(n, one);
  CHECK(std::isnan(m.value()));
  CHECK(fm.value() == 1.0);
  CHECK(fm.tangent() == 1.0);
  // relu passes a NaN on (torch's relu(NaN) is NaN, not 0), with derivative 1 as torch's
  dual<double> const r = relu(n);
  CHECK(std::isnan(r.value()));
  CHECK(r.tangent() == 1.0);
  CHECK(std::isnan(adx::relu(std::nan(""))));
  adx::tape_scope<adx::var<double>> scope;
  adx::var<double> const v = std::nan("");
  adx::var<double> const rv = relu(v) * 2.0;
  adx::backward(rv);
  CHECK(std::isnan(rv.value()));
  CHECK(v.adjoint() == 2.0);
}
