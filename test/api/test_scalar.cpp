// The scalar entry points: derivative<N>, gradient, hessian, hvp.
#include <doctest/doctest.h>

#include <adx/adx.hpp>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

TEST_CASE("derivative<N>: all orders of exp(sin x)") {
  auto f = [](auto x) { return exp(sin(x)); };
  auto const d = derivative<3>(f, 0.4);
  double const s = std::sin(0.4), c = std::cos(0.4), e = std::exp(s);
  CHECK(close(d[0], e));
  CHECK(close(d[1], e * c));
  CHECK(close(d[2], e * (c * c - s)));
  CHECK(close(d[3], e * (c * c * c - 3 * s * c - c)));
}

TEST_CASE("gradient and hessian of a small function, hvp = H v") {
  auto f = [](auto const& x) { return x[0] * exp(x[1]) + x[1] * x[2] * x[2]; };
  std::vector<double> const x{0.5, -0.3, 1.2};
  auto const g = gradient(f, x);
  CHECK(close(g[0], std::exp(-0.3)));
  CHECK(close(g[1], 0.5 * std::exp(-0.3) + 1.44));
  CHECK(close(g[2], 2 * -0.3 * 1.2));
  auto const h = hessian(f, x);
  std::vector<double> const want{0, std::exp(-0.3), 0, std::exp(-0.3), 0.5 * std::exp(-0.3), 2.4, 0, 2.4, -0.6};
  for (int i = 0; i < 9; ++i) CHECK(close(h[i], want[i]));
  std::vector<double> const v{1.0, -2.0, 0.5};
  auto const hv = hvp(f, x, v);
  for (int i = 0; i < 3; ++i) CHECK(close(hv[i], want[3 * i] * v[0] + want[3 * i + 1] * v[1] + want[3 * i + 2] * v[2]));
  CHECK_THROWS_WITH_AS(hvp(f, x, std::vector<double>{1.0}),
                       doctest::Contains("adx: hvp: the direction has 1 entries but x has 3"), adx::value_error);
}

TEST_CASE("entry points called while the caller records leave its tape as it was") {
  tape_scope<var<double>> scope;
  var<double> a = 2.0;
  var<double> b = a * a;
  auto& t = tape<double>::current();
  index_type const n = t.size();
  auto const g = gradient([](auto const& x) { return x[0] * x[1]; }, std::vector<double>{3.0, 4.0});
  CHECK(g == std::vector<double>{4.0, 3.0});
  CHECK(t.size() == n);
  backward(b);
  CHECK(a.adjoint() == 4.0);
}
