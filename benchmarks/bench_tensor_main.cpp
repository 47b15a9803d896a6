// tensor_bench: the tensor problems (mlp, matmul_grad, elementwise and the tensor
// forms of lse, normal_lpdf, matvec_quad, advection) in hand-written code, adx and LibTorch.
//
// Every implementation runs on one thread: the process re-executes itself once with
// OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 (OpenBLAS and OpenMP read them at load time),
// and LibTorch is also told torch::set_num_threads(1).
//
// Before timing, every hand gradient is checked against central finite differences on sampled
// coordinates, and every implementation's result against `hand` of the same problem (value and
// gradient, relative error below 1e-8 in the max norm); any mismatch aborts the run.
// `--check_only` stops after the checks.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "harness_checks.hpp"
#include "tensor_harness.hpp"

int main(int argc, char** argv) {
  using namespace adx_bench;
  using namespace adx_bench::tensor_suite;
  single_threaded("tensor_bench", argv);
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#endif
  std::vector<char*> args;
  bool const check_only = take_flag(argc, argv, "--check_only", args);
  int nargs = static_cast<int>(args.size());

  register_hand();
  register_adx();
  register_adx_forms();
#ifdef ADX_BENCH_HAVE_TORCH
  register_torch();
#endif

  if (!check_registry("tensor_bench", problem_order())) return 1;
  auto const& reg = registry();
  if (check_only) return 0;

  benchmark::AddCustomContext("OPENBLAS_NUM_THREADS",
                              std::getenv("OPENBLAS_NUM_THREADS") ? std::getenv("OPENBLAS_NUM_THREADS") : "unset");
#ifdef ADX_BENCH_HAVE_TORCH
  benchmark::AddCustomContext("torch", "LibTorch (Debian libtorch-dev), torch::set_num_threads(1)");
#endif
  for (auto const& e : reg) {
    if (!e.bench) continue;
    auto* b = benchmark::RegisterBenchmark((e.problem + "/" + e.impl).c_str(), e.bench);
    b->Unit(benchmark::kMicrosecond);
    if (long const it = iterations_for(e.problem); it > 0)
      b->Iterations(it);
    else
      b->MinTime(0.2);
  }
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
