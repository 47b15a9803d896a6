// Random scalar programs (test/support/programs.hpp): each is evaluated as double, dual,
// var, var<var>, var<dual>, dual<var> and dual<dual>; values, gradients and Hessians must agree
// across modes (1e-12 for values and gradients, 1e-11 for Hessians, relative to the largest
// entry) and with finite differences (1e-6, plus the differences' own error estimate).
//
//   ADX_RANDOM_PROGRAMS=n   how many programs (default 50000; 10000 under a sanitizer), in two
//                           test cases of the odd and the even seeds
//   ADX_RANDOM_SEED=s       only the program of seed s (printed with any failure)
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <utility>

#include "support/programs.hpp"
#include "support/random_runs.hpp"

namespace pg = adx_test::programs;

namespace {
/// Half of the programs: two test cases, which ctest runs on two cores (under the sanitizers
/// this test is most of the suite's run time).
void check_scalar_programs(adx_test::seed_part part) {
  adx_test::check_random_programs(
      "random scalar programs", adx_test::sanitized ? 10000 : 50000, pg::n_ops, 1000,
      [](std::uint64_t seed) {
        pg::rng_source src(seed);
        pg::program p = pg::generate(src);
        pg::report r = pg::check_program(p);
        return std::pair{std::move(p), std::move(r)};
      },
      part);
}
}  // namespace

TEST_CASE("random scalar programs (odd seeds): every mode and nesting agrees, and with finite differences") {
  check_scalar_programs({0, 2});
}
TEST_CASE("random scalar programs (even seeds): every mode and nesting agrees, and with finite differences") {
  check_scalar_programs({1, 2});
}

// What the fuzzer found (test/fuzz/fuzz_programs.cpp), kept as plain regression tests.

TEST_CASE("fuzzer finding: digamma's higher derivatives at NaN, -inf and huge negatives are NaN, not an exception") {
  // Boost's polygamma of order >= 2, which adx used then, threw boost::math::rounding_error at
  // these points (found through the second derivative of digamma at NaN, in var<var<double>>).
  using adx::dual, adx::var;
  for (double x : {std::nan(""), -std::numeric_limits<double>::infinity(), -1e20, -0x1p64}) {
    CAPTURE(x);
    CHECK(std::isnan(adx::polygamma<2>(x)));
    CHECK(std::isnan(adx::polygamma<3>(x)));
    auto const d = adx::derivative<3>([](auto t) { return adx::digamma(t); }, x);
    for (double v : d) CHECK(std::isnan(v));
    adx::tape_scope<var<var<double>>> scope;
    var<var<double>> a = x;
    var<var<double>> y = adx::digamma(a);
    adx::backward(y);
    var<double> g = a.adjoint();
    adx::backward(g);
    CHECK(std::isnan(adx::primal(g)));
    CHECK(std::isnan(a.value().adjoint()));
  }
  // orders 0 and 1 gave NaN there already; the finite points are unchanged
  CHECK(std::isnan(adx::digamma(-1e20)));
  CHECK(std::isnan(adx::trigamma(-std::numeric_limits<double>::infinity())));
  CHECK(adx::polygamma<2>(1.0) == doctest::Approx(-2.4041138063191885).epsilon(1e-14));
}
