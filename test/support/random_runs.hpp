// Test support: which seeds a randomized test runs, from the environment, and the driver that
// checks one generated program per seed.
//   ADX_RANDOM_PROGRAMS=n   how many programs (each test has its default)
//   ADX_RANDOM_SEED=s       only the program of seed s (the tests print it with any failure)
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace adx_test {

/// True in an AddressSanitizer or ThreadSanitizer build (the randomized tests then check fewer
/// programs).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

/// One of `of` interleaved parts of a randomized test's seeds (seed s is in part (s - 1) % of),
/// so that ctest runs the parts of a long test on different cores.
struct seed_part {
  std::uint64_t index = 0, of = 1;
};

/// The seeds to check: the one ADX_RANDOM_SEED names, or first .. first + count - 1 with count
/// from ADX_RANDOM_PROGRAMS or default_count; of either, those in `part`.
inline std::vector<std::uint64_t> random_seeds(std::uint64_t first, std::uint64_t default_count, seed_part part = {}) {
  auto const in_part = [&](std::uint64_t s) { return s >= first && (s - first) % part.of == part.index; };
  if (char const* s = std::getenv("ADX_RANDOM_SEED")) {
    std::uint64_t const seed = std::strtoull(s, nullptr, 0);
    return in_part(seed) ? std::vector<std::uint64_t>{seed} : std::vector<std::uint64_t>{};
  }
  std::uint64_t count = default_count;
  if (char const* n = std::getenv("ADX_RANDOM_PROGRAMS")) count = std::strtoull(n, nullptr, 0);
  std::vector<std::uint64_t> out;
  for (std::uint64_t k = 0; k < count; ++k)
    if (in_part(first + k)) out.push_back(first + k);
  return out;
}

/// Checks the programs of random_seeds(1, default_count, part): generate_and_check(seed) returns a
/// (program, report) pair, a program having nodes whose `o` is their operation (below n_ops).
/// A failure prints the seed, the program and the disagreements; a summary is printed at the
/// end, and from coverage_from programs on every operation must have been generated.
template <class F>
void check_random_programs(char const* what, std::uint64_t default_count, std::size_t n_ops, std::size_t coverage_from,
                           F&& generate_and_check, seed_part part = {}) {
  auto const t0 = std::chrono::steady_clock::now();
  std::size_t programs = 0, nodes = 0, comparisons = 0, fd_loose = 0, failed = 0;
  std::vector<std::size_t> op_count(n_ops, 0);
  for (std::uint64_t seed : random_seeds(1, default_count, part)) {
    auto const checked = generate_and_check(seed);
    auto const& p = checked.first;  // not a structured binding: clang 14 cannot capture those (INFO does)
    auto const& r = checked.second;
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
  MESSAGE(std::string(what) << ": " << programs << " checked (" << nodes << " nodes, " << comparisons
                            << " comparisons, " << fd_loose
                            << " against finite differences within their error estimate only) in " << secs << " s; "
                            << failed << " failed");
  if (programs >= coverage_from)  // the generator reaches every operation
    for (std::size_t o = 0; o < n_ops; ++o) {
      INFO("operation " << o);
      CHECK(op_count[o] > 0);
    }
}

}  // namespace adx_test
