// tensor_bench, adx: what the two files of adx's benchmarks share (bench_tensor_adx.cpp: the
// tensor problems; bench_tensor_adx_forms.cpp: the tensor forms of the scalar problems). Two
// files, so that a build on two cores compiles them at once.
#pragma once

#include "tensor_adx.hpp"
#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {

/// Tape counters of one recording (filled once after the timing loop).
template <class Prog>
void tape_counters(benchmark::State& st, Prog const& prog) {
  auto& t = adx::tape<double>::current();
  adx::tape_stats before = t.stats(), after;
  {
    adx::tape_scope<adx_programs::V> scope;
    adx_programs::V l;
    if constexpr (std::is_same_v<Prog, adx_programs::mlp_model>) {
      l = prog.prog.loss({prog.weights.begin(), prog.weights.end()});
    } else {
      auto const x = variables(prog);
      l = prog.loss(x);
    }
    benchmark::DoNotOptimize(l);
    after = t.stats();
  }
  st.counters["statements"] = static_cast<double>(after.statements - before.statements);
  st.counters["operands"] = static_cast<double>(after.operands - before.operands);
  st.counters["tape_bytes"] = static_cast<double>(after.bytes_used - before.bytes_used);
  st.counters["nodes"] = static_cast<double>(after.nodes - before.nodes);
  st.counters["node_bytes"] = static_cast<double>(after.node_bytes - before.node_bytes);
}

template <class Prog>
void add_gradient(std::string const& problem, std::string const& impl, Prog const& prog) {
  std::size_t const n = input_size(prog);
  add(
      problem, impl, kind::gradient,
      [&prog, n](benchmark::State& st) {
        std::vector<double> g(n);
        time_gradient(st, g.data(), [&](double* out) { return gradient(prog, out); });
        tape_counters(st, prog);
      },
      [&prog, n] {
        std::vector<double> r(n + 1);
        r[0] = gradient(prog, r.data() + 1);
        return r;
      });
}

}  // namespace adx_bench::tensor_suite
