// digamma and its derivatives (rules/gamma.hpp computes them itself) against Boost.Math's
// polygamma, which adx used before, against known constants, and at the poles.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <boost/math/special_functions/polygamma.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace {

using boost_quiet =
    boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::pole_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

template <class R>
R psi(int n, R x) {
  return adx::detail::polygamma_value<R>(n, x);
}

}  // namespace

TEST_CASE("polygamma: within 2 ulp of Boost.Math for orders 0-8 over 10^-8 .. 10^17 and negative non-integers") {
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<double> unit(0, 1);
  double const two_ulp = 2 * std::numeric_limits<double>::epsilon();
  for (int n = 0; n <= 8; ++n) {
    int checked = 0;
    for (int i = 0; i < 4000; ++i) {
      double const u = unit(rng);
      int const kind = i % 4;
      double const x = kind == 0   ? 3 * u                                 // where the recurrence runs
                       : kind == 1 ? std::exp(-18 + 58 * u)                // 1.5e-8 .. 1.5e17
                       : kind == 2 ? 1.4616321449683622 + 0.2 * (u - 0.5)  // around digamma's root
                                   : -30 * u;                              // the reflection
      double const want = boost::math::polygamma(n, x, boost_quiet{});
      double const got = psi(n, x);
      if (!std::isfinite(want)) continue;
      INFO("order " << n << " at x = " << x << ": adx " << got << ", Boost " << want);
      if (x < 0 && n == 0)  // near digamma's negative roots both lose digits to the reflection's cancellation
        CHECK(std::abs(got - want) <= two_ulp * std::abs(want) + 1e-18);
      else
        CHECK(std::abs(got - want) <= two_ulp * std::abs(want));
      ++checked;
    }
    CHECK(checked > 3900);
  }
}

TEST_CASE("polygamma: known values, float and long double, the root of digamma") {
  double const gamma = 0.57721566490153286061, pi = std::numbers::pi;
  CHECK(psi(0, 1.0) == doctest::Approx(-gamma).epsilon(1e-16));
  CHECK(psi(0, 0.5) == doctest::Approx(-gamma - 2 * std::log(2.0)).epsilon(1e-16));
  CHECK(psi(1, 1.0) == doctest::Approx(pi * pi / 6).epsilon(1e-16));
  CHECK(psi(1, 0.5) == doctest::Approx(pi * pi / 2).epsilon(1e-16));
  CHECK(psi(2, 1.0) == doctest::Approx(-2.4041138063191885).epsilon(1e-16));  // -2 zeta(3)
  CHECK(psi(3, 1.0) == doctest::Approx(6.4939394022668291).epsilon(1e-16));   // 6 zeta(4) = pi^4 / 15
  // at the double nearest digamma's root x0 = 1.46163214496836234126..., psi = psi'(x0) (x - x0)
  CHECK(psi(0, 1.4616321449683622) == doctest::Approx(0.9676722454476212 * -9.549995429965697e-17).epsilon(1e-15));
  // digamma at a half-integer below 0 is digamma(1 - x): cot(pi x) is exactly 0 there
  CHECK(psi(0, -0.5) == psi(0, 1.5));
  CHECK(psi(2, -4503599627370495.5) == doctest::Approx(-2 / std::pow(4503599627370496.5, 2)).epsilon(1e-12));
  // float is the long double result rounded once; long double within 1e-17 of Boost's (the
  // recurrence's and the reflection's cancellation near digamma's roots costs up to 6 of its 11
  // extra bits)
  for (float x : {0.25f, 1.5f, 7.0f, -2.5f, 1e6f})
    for (int n = 0; n <= 3; ++n)
      CHECK(psi(n, x) == static_cast<float>(boost::math::polygamma(n, static_cast<long double>(x), boost_quiet{})));
  for (long double x : {0.1L, 1.25L, 3.0L, 40.5L, -3.7L})
    for (int n = 0; n <= 3; ++n) {
      long double const want = boost::math::polygamma(n, x, boost_quiet{});
      CHECK(std::abs(psi(n, x) - want) <= 1e-17L * std::abs(want));
    }
  // integers are promoted to double
  CHECK(adx::digamma(3) == doctest::Approx(1.5 - gamma).epsilon(1e-16));
}

TEST_CASE("polygamma below -2^31 by the reflection, in every mode (Boost's converted x to int there)") {
  double const x = -3e9 - 0.5;  // a half-integer: cot(pi x) = 0 and pi^2 / sin^2(pi x) = pi^2
  long double const z = 1.0L - x, pi2 = std::numbers::pi_v<long double> * std::numbers::pi_v<long double>;
  // the asymptotic series at z = 3e9 + 1.5, to well below a double's precision
  long double const digamma_z = std::log(z) - 1 / (2 * z) - 1 / (12 * z * z);
  long double const trigamma_z = 1 / z + 1 / (2 * z * z) + 1 / (6 * z * z * z);
  double const want0 = static_cast<double>(digamma_z);
  double const want1 = static_cast<double>(pi2 - trigamma_z);  // + pi^2 / sin^2(pi x), = pi^2 here
  CHECK(psi(0, x) == doctest::Approx(want0).epsilon(1e-15));
  CHECK(psi(1, x) == doctest::Approx(want1).epsilon(1e-15));
  CHECK(psi(1, x) != doctest::Approx(static_cast<double>(pi2)).epsilon(1e-13));  // the 1/z term is there
  // through the rules: lgamma' = digamma, lgamma'' = trigamma, forward and reverse alike
  auto const d = adx::derivative<2>([](auto t) { return adx::lgamma(t); }, x);
  CHECK(d[1] == doctest::Approx(want0).epsilon(1e-15));
  CHECK(d[2] == doctest::Approx(want1).epsilon(1e-15));
  auto const h = adx::hessian([](auto const& v) { return adx::lgamma(v[0]); }, std::vector<double>{x});
  CHECK(h[0] == d[2]);
  auto const g = adx::gradient([](auto const& v) { return adx::digamma(v[0]); }, std::vector<double>{x});
  CHECK(g[0] == d[2]);
}

TEST_CASE("polygamma: NaN at the poles (0, -1, -2, ... and every double below -2^52), at NaN and -inf") {
  double const inf = std::numeric_limits<double>::infinity();
  for (int n = 0; n <= 5; ++n) {
    INFO("order " << n);
    for (double x : {0.0, -0.0, -1.0, -2.0, -17.0, -1e15, -0x1p52, -0x1p70, -inf, std::nan("")})
      CHECK(std::isnan(psi(n, x)));
    // beside a pole: huge, with the sign of the limit (n >= 1 overflows at 1e-300)
    if (n > 0) CHECK(psi(n, 1e-300) == (n % 2 == 0 ? -inf : inf));
    CHECK(psi(n, inf) == (n == 0 ? inf : 0.0));
    CHECK(std::isfinite(psi(n, -1 + 1e-9)));
  }
  CHECK(psi(0, 1e-300) == doctest::Approx(-1e300));  // n = 0 stays finite: -1/x - gamma
  CHECK(psi(0, 5e-324) == -inf);
  // through the rules: lgamma' = digamma, and the derivative of digamma at a pole is NaN too
  CHECK(std::isnan(adx::derivative<1>([](auto t) { return adx::lgamma(t); }, -3.0)[1]));
  CHECK(std::isnan(adx::derivative<2>([](auto t) { return adx::digamma(t); }, 0.0)[2]));
}
