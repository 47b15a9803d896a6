// make_independent and adjoints on runs of vars: the vector paths of detail::var_runs (whole
// var<double>s stored and compared two at a time with AVX2, one at a time with SSE2) and the
// scalar rest. The suite runs this file as built for baseline x86-64 (SSE2), and the AVX2 test
// program runs it again (test/CMakeLists.txt).
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cstddef>
#include <utility>
#include <vector>

using namespace adx;

// make_independent and adjoints treat a run of vars with vector instructions (whole vars of
// var<double> stored and compared two at a time), with a scalar loop for the rest: every size
// around the vector width, and a var out of place at every position, in the vector part and
// the rest.
TEST_CASE("make_independent and adjoints: runs of every length, a var out of place anywhere") {
  for (std::size_t n = 1; n <= 11; ++n) {
    std::vector<double> x0(n);
    for (std::size_t i = 0; i < n; ++i) x0[i] = 0.25 * static_cast<double>(i) - 1.0;
    auto const weight = [](std::size_t i) { return 1.0 + static_cast<double>(i); };
    auto const loss = [&](std::vector<var<double>> const& x) {  // sum of (i + 1) x_i^2
      var<double> s = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) s += weight(i) * x[i] * x[i];
      return s;
    };
    std::vector<var<double>> ended(n);  // the same indices as the runs below, a recording that ended
    {
      tape_scope<var<double>> scope;
      make_independent(ended, x0);
    }
    for (std::size_t k = 0; k < n; ++k) {
      CAPTURE(n);
      CAPTURE(k);
      tape_scope<var<double>> scope;
      std::vector<var<double>> x(n);
      make_independent(x, x0);
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(x[i].value() == x0[i]);
        CHECK(x[i].index() == x[0].index() + i);
        CHECK(x[i].epoch() == tape<double>::current().epoch());
      }
      REQUIRE(x[k].index() == ended[k].index());
      var<double> const y = loss(x);
      backward(y);
      std::vector<double> g(n);
      adjoints(x, g);
      for (std::size_t i = 0; i < n; ++i) CHECK(g[i] == 2 * weight(i) * x0[i]);
      // x[k] and x[k + 1] swapped: not a run, each var is read as itself
      if (k + 1 < n) {
        std::vector<var<double>> swapped = x;
        std::swap(swapped[k], swapped[k + 1]);
        adjoints(swapped, g);
        for (std::size_t i = 0; i < n; ++i) {
          std::size_t const j = i == k ? k + 1 : i == k + 1 ? k : i;
          CHECK(g[i] == 2 * weight(j) * x0[j]);
        }
      }
      // x[k] a constant: reads zero there
      std::vector<var<double>> with_constant = x;
      with_constant[k] = var<double>::constant(x0[k]);
      adjoints(with_constant, g);
      for (std::size_t i = 0; i < n; ++i) CHECK(g[i] == (i == k ? 0.0 : 2 * weight(i) * x0[i]));
      // x[k] of the ended recording, with x[k]'s index: refused, not read as x[k]
      std::vector<var<double>> with_stale = x;
      with_stale[k] = ended[k];
      CHECK_THROWS_AS(adjoints(with_stale, g), stale_variable_error);
    }
  }
}

// The same vector paths at the ends of the ranges: epochs with the high bit set (the id word as a
// negative number) and indices up to 2^32 - 1, where a run must not carry into the epoch. The
// vars are made directly (a tape of 2^32 statements is out of reach).
TEST_CASE("make_independent and adjoints: runs at the top of the index and epoch ranges") {
  using detail::var_runs;
  for (epoch_type const e : {epoch_type{1}, epoch_type{0x7fffffff}, epoch_type{0x80000000}, epoch_type{0xffffffff}}) {
    for (index_type const first : {index_type{1}, index_type{0xfffffff0}}) {
      for (std::size_t n = 1; n <= 16; ++n) {
        CAPTURE(e);
        CAPTURE(first);
        CAPTURE(n);
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = 0.5 - static_cast<double>(i);
        std::vector<var<double>> x(n);
        var_runs::make(x.data(), v.data(), n, first, e);
        for (std::size_t i = 0; i < n; ++i) {
          CHECK(x[i].value() == v[i]);
          CHECK(x[i].index() == first + i);
          CHECK(x[i].epoch() == e);
        }
        CHECK(var_runs::is_run(x.data(), n, first, e));
        for (std::size_t k = 0; k < n; ++k) {  // one bit of one var's index or epoch changed
          auto const idx = static_cast<index_type>(first + k);
          for (auto const& [index, epoch] : {std::pair{idx ^ 1u, e}, std::pair{idx ^ 0x80000000u, e},
                                             std::pair{idx, e ^ 1u}, std::pair{idx, e ^ 0x80000000u}}) {
            std::vector<var<double>> y = x;
            y[k] = var<double>::recorded_active(v[k], index, epoch);
            CHECK_FALSE(var_runs::is_run(y.data(), n, first, e));
          }
        }
      }
    }
  }
  // indices that would pass 2^32 - 1 are not a run, whatever the vars hold
  std::vector<var<double>> const two{var<double>::recorded_active(1.0, 0xffffffff, 3),
                                     var<double>::recorded_active(2.0, 0, 4)};
  CHECK_FALSE(var_runs::is_run(two.data(), 2, 0xffffffff, 3));
  CHECK(var_runs::is_run(two.data(), 1, 0xffffffff, 3));
  // the last index of the epoch whose id word is the largest positive one (no overflow forming
  // the next word)
  var<double> const top = var<double>::recorded_active(1.0, 0xffffffff, 0x7fffffff);
  CHECK(var_runs::is_run(&top, 1, 0xffffffff, 0x7fffffff));
}
