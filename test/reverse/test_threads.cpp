// Tapes are per thread: four threads record and sweep different gradients at the same time.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <atomic>
#include <thread>

#include "support/check.hpp"

using namespace adx;

TEST_CASE("threads: four threads, each its own tape, results checked") {
  std::atomic<int> failures{0}, done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([t, &failures, &done] {
      for (int rep = 0; rep < 200; ++rep) {
        double const a = 0.1 * (t + 1) + 0.001 * rep;
        tape_scope<var<var<double>>> scope;
        var<var<double>> x = a;
        var<var<double>> y = exp(x) * sin(x) * (t + 1);
        backward(y);
        var<double> g = x.adjoint();
        backward(g);
        double const h = x.value().adjoint();
        double const g_want = (t + 1) * std::exp(a) * (std::sin(a) + std::cos(a));
        double const h_want = (t + 1) * 2 * std::exp(a) * std::cos(a);
        if (!adx_test::close(primal(g), g_want, 1e-13, 1e-13) || !adx_test::close(h, h_want, 1e-13, 1e-13)) ++failures;
      }
      ++done;
    });
  }
  for (auto& th : pool) th.join();
  CHECK(done == 4);
  CHECK(failures == 0);
}

TEST_CASE("threads: a var recorded on one thread is refused by another thread's tape") {
  tape_scope<var<double>> scope;
  var<double> x = 1.0;
  bool threw = false;
  std::thread other([&] {
    try {
      var<double> y = x * 2.0;
      (void)y;
    } catch (stale_variable_error const&) {
      threw = true;
    }
  });
  other.join();
  CHECK(threw);
}
