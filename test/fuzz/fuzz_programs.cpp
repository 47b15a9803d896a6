// libFuzzer target: the input bytes are decoded into a random scalar program (the generator of
// test/support/programs.hpp reading its choices from the bytes) and the program is evaluated in
// every mode and nesting (double, dual, var, var<var>, var<dual>, dual<var>, dual<dual>).
//
//   first byte even: a program inside its functions' domains; values, gradients and Hessians
//                    must agree across modes and with finite differences (check_program)
//   first byte odd:  no domains at all (log of negatives, overflow, NaN, infinities); every mode
//                    must run without a crash or undefined behaviour and compute the same value
//                    (check_values_only)
//
// A disagreement prints the program and aborts, so libFuzzer saves the input as a crash.
// Build and run: scripts/dev.sh fuzz (ADX_FUZZ_SECONDS, default 60).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "support/programs.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  namespace pg = adx_test::programs;
  if (size == 0) return 0;
  bool const free = data[0] & 1;
  pg::byte_source src{data + 1, size - 1};
  pg::generator_options opt;
  opt.max_nodes = 40;
  opt.domains = !free;
  pg::program const p = pg::generate(src, opt);
  pg::report const r = free ? pg::check_values_only(p) : pg::check_program(p);
  if (!r.ok()) {
    std::fprintf(stderr, "adx fuzz: the modes disagree (%s program)\nprogram:\n%sdisagreements:\n%s",
                 free ? "unrestricted" : "in-domain", pg::to_string(p).c_str(), r.failures.c_str());
    std::abort();
  }
  return 0;
}
