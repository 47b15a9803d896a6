// Random tensor programs (test/support/tensor_programs.hpp): broadcasting, fused elementwise
// expressions, reductions, softmax, matmul. The reverse gradient (tensor<var<double>>, one
// sweep) must equal the forward one (tensor<dual<double>>, one pass per input element) to
// 1e-12 and central finite differences to 1e-6 (relative to the largest entry), and the
// Hessian-vector product of tensor<var<dual<double>>> the differences of the reverse gradient.
//
//   ADX_RANDOM_PROGRAMS=n   how many programs (default 5000; 1000 under a sanitizer)
//   ADX_RANDOM_SEED=s       only the program of seed s (printed with any failure)
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdlib>

#include "support/random_runs.hpp"
#include "support/tensor_programs.hpp"

namespace tp = adx_test::tensor_programs;

TEST_CASE("random tensor programs: reverse = forward = finite differences, and H v") {
  auto const t0 = std::chrono::steady_clock::now();
  std::size_t programs = 0, nodes = 0, comparisons = 0, fd_loose = 0, failed = 0;
  std::array<std::size_t, static_cast<unsigned>(tp::top::count)> op_count{};
  for (std::uint64_t seed : adx_test::random_seeds(1, adx_test::sanitized ? 1000 : 5000)) {
    tp::rng_source src(seed);
    tp::tprogram const p = tp::generate(src);
    adx_test::programs::report const r = tp::check_tensor_program(p, seed ^ 0x9e3779b97f4a7c15ull);
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
  MESSAGE("random tensor programs: " << programs << " checked (" << nodes << " nodes, " << comparisons
                                     << " comparisons, " << fd_loose
                                     << " against finite differences within their error estimate only) in " << secs
                                     << " s; " << failed << " failed");
  if (programs >= 500)  // the generator reaches every operation
    for (unsigned o = 0; o < op_count.size(); ++o) {
      INFO("operation " << o);
      CHECK(op_count[o] > 0);
    }
}
