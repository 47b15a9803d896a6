// libFuzzer target: the input bytes are decoded into a random program (the generators of
// test/support/programs.hpp and tensor_programs.hpp reading their choices from the bytes) and
// the program is evaluated in every mode and nesting. The first byte, modulo 3, chooses:
//
//   0  a scalar program inside its functions' domains: values, gradients and Hessians in double,
//      dual, var, var<var>, var<dual>, dual<var>, dual<dual> must agree with each other and with
//      finite differences (check_program)
//   1  a scalar program with no domains at all (log of negatives, overflow, NaN, infinities):
//      every mode must run without a crash or undefined behaviour and compute the same value
//      (check_values_only)
//   2  a tensor program (broadcasting, reductions, softmax, matmul): tensor<var> gradient =
//      tensor<dual> gradient = finite differences, and tensor<var<dual>> H v = differences of the
//      gradient (check_tensor_program)
//
// A disagreement prints the program and aborts, so libFuzzer saves the input as a crash.
// Build and run: scripts/dev.sh fuzz (ADX_FUZZ_SECONDS, default 60).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <sstream>

#include "support/programs.hpp"
#include "support/tensor_programs.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  namespace pg = adx_test::programs;
  if (size == 0) return 0;
  unsigned const kind = data[0] % 3;
  pg::byte_source src{data + 1, size - 1};
  if (kind == 2) {
    namespace tp = adx_test::tensor_programs;
    tp::tprogram const p = tp::generate(src);
    pg::report const r = tp::check_tensor_program(p, size * 0x9e3779b97f4a7c15ull + data[size - 1]);
    if (!r.ok()) {
      std::ostringstream os;
      os << p;
      std::fprintf(stderr, "adx fuzz: the modes disagree (tensor program)\nprogram:\n%sdisagreements:\n%s",
                   os.str().c_str(), r.failures.c_str());
      std::abort();
    }
    return 0;
  }
  bool const free = kind == 1;
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
