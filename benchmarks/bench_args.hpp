// What the benchmark programs' main functions share: one BLAS and OpenMP thread, and their own
// flag (--check_only) taken out of the arguments before Google Benchmark reads them.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace adx_bench {

/// Re-executes the program once with one BLAS / OpenMP thread (read by those libraries at load
/// time, before main could set anything); `program` names it in the message if that fails.
inline void single_threaded(char const* program, char** argv) {
  char const* ob = std::getenv("OPENBLAS_NUM_THREADS");
  char const* omp = std::getenv("OMP_NUM_THREADS");
  if (ob && omp && std::strcmp(ob, "1") == 0 && std::strcmp(omp, "1") == 0) return;
  if (std::getenv("ADX_BENCH_REEXECUTED")) return;  // never loop
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("ADX_BENCH_REEXECUTED", "1", 1);
  execv("/proc/self/exe", argv);
  std::perror((std::string(program) + ": re-executing with OPENBLAS_NUM_THREADS=1 failed; continuing").c_str());
}

/// The arguments without `flag` (for benchmark::Initialize) into rest; whether flag was there.
inline bool take_flag(int argc, char** argv, char const* flag, std::vector<char*>& rest) {
  bool found = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0)
      found = true;
    else
      rest.push_back(argv[i]);
  }
  return found;
}

}  // namespace adx_bench
