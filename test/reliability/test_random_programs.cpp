// Random scalar programs (test/support/programs.hpp): each is evaluated as double, dual,
// var, var<var>, var<dual>, dual<var> and dual<dual>; values, gradients and Hessians must agree
// across modes (1e-12 for values and gradients, 1e-11 for Hessians, relative to the largest
// entry) and with finite differences (1e-6, plus the differences' own error estimate).
//
//   ADX_RANDOM_PROGRAMS=n   how many programs (default 50000; 10000 under a sanitizer)
//   ADX_RANDOM_SEED=s       only the program of seed s (printed with any failure)
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "support/programs.hpp"
#include "support/random_runs.hpp"

namespace pg = adx_test::programs;

TEST_CASE("random scalar programs: every mode and nesting agrees, and with finite differences") {
  auto const t0 = std::chrono::steady_clock::now();
  std::size_t programs = 0, nodes = 0, comparisons = 0, fd_loose = 0, failed = 0;
  std::array<std::size_t, pg::n_ops> op_count{};
  for (std::uint64_t seed : adx_test::random_seeds(1, adx_test::sanitized ? 10000 : 50000)) {
    pg::rng_source src(seed);
    pg::program const p = pg::generate(src);
    pg::report const r = pg::check_program(p);
    ++programs;
    nodes += p.nodes.size();
    comparisons += r.comparisons;
    fd_loose += r.fd_loose;
    for (auto const& n : p.nodes) ++op_count[static_cast<unsigned>(n.o)];
    if (!r.ok()) {
      ++failed;
      INFO("seed " << seed << " (rerun: ADX_RANDOM_SEED=" << seed << ")\nprogram:\n"
                   << p << "disagreements:\n"
                   << r.failures);
      CHECK(r.ok());
    }
  }
  double const secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("random scalar programs: " << programs << " checked (" << nodes << " nodes, " << comparisons
                                     << " comparisons, " << fd_loose
                                     << " against finite differences within their error estimate only) in " << secs
                                     << " s; " << failed << " failed");
  if (programs >= 1000)  // the generator reaches every operation
    for (unsigned o = 0; o < pg::n_ops; ++o) {
      INFO("operation " << o);
      CHECK(op_count[o] > 0);
    }
}

// What the fuzzer found (test/fuzz/fuzz_programs.cpp), kept as plain regression tests.

TEST_CASE("fuzzer finding: digamma's higher derivatives at NaN, -inf and huge negatives are NaN, not an exception") {
  // Boost's polygamma of order >= 2 threw boost::math::rounding_error at these points (found
  // through the second derivative of digamma at NaN, in var<var<double>>).
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
