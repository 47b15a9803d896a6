// Random tensor programs (test/support/tensor_programs.hpp): broadcasting, fused elementwise
// expressions, reductions, softmax, matmul. The reverse gradient (tensor<var<double>>, one
// sweep) must equal the forward one (tensor<dual<double>>, one pass per input element) to
// 1e-12 and central finite differences to 1e-6 (relative to the largest entry), and the
// Hessian-vector product of tensor<var<dual<double>>> the differences of the reverse gradient.
//
//   ADX_RANDOM_PROGRAMS=n   how many programs (default 5000; 1000 under a sanitizer), in two test
//                           cases of the odd and the even seeds
//   ADX_RANDOM_SEED=s       only the program of seed s (printed with any failure)
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>

#include "support/random_runs.hpp"
#include "support/tensor_programs.hpp"

namespace tp = adx_test::tensor_programs;

namespace {
/// Half of the programs: two test cases, which ctest runs on two cores.
void check_tensor_programs(adx_test::seed_part part) {
  adx_test::check_random_programs(
      "random tensor programs", adx_test::sanitized ? 1000 : 5000, static_cast<std::size_t>(tp::top::count), 500,
      [](std::uint64_t seed) {
        tp::rng_source src(seed);
        tp::tprogram p = tp::generate(src);
        adx_test::programs::report r = tp::check_tensor_program(p, seed ^ 0x9e3779b97f4a7c15ull);
        return std::pair{std::move(p), std::move(r)};
      },
      part);
}
}  // namespace

TEST_CASE("random tensor programs (odd seeds): reverse = forward = finite differences, and H v") {
  check_tensor_programs({0, 2});
}
TEST_CASE("random tensor programs (even seeds): reverse = forward = finite differences, and H v") {
  check_tensor_programs({1, 2});
}
