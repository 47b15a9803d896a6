// Test support: which seeds a randomized test runs, from the environment.
//   ADX_RANDOM_PROGRAMS=n   how many programs (each test has its default)
//   ADX_RANDOM_SEED=s       only the program of seed s (the tests print it with any failure)
#pragma once

#include <cstdint>
#include <cstdlib>
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

/// The seeds to check: the one ADX_RANDOM_SEED names, or first .. first + count - 1 with count
/// from ADX_RANDOM_PROGRAMS or default_count.
inline std::vector<std::uint64_t> random_seeds(std::uint64_t first, std::uint64_t default_count) {
  if (char const* s = std::getenv("ADX_RANDOM_SEED")) return {std::strtoull(s, nullptr, 0)};
  std::uint64_t count = default_count;
  if (char const* n = std::getenv("ADX_RANDOM_PROGRAMS")) count = std::strtoull(n, nullptr, 0);
  std::vector<std::uint64_t> out;
  for (std::uint64_t k = 0; k < count; ++k) out.push_back(first + k);
  return out;
}

}  // namespace adx_test
