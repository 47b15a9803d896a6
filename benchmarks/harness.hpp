// The benchmark harness: every implementation file adds, per problem, one benchmark and one
// function computing what that benchmark computes (value, gradient or tangent), so that main()
// can check every implementation against the hand-coded gradient before timing anything.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "problems.hpp"

namespace adx_bench {

enum class mode { value, reverse, forward };

struct entry {
  std::string problem;
  std::string impl;
  mode kind;
  std::function<void(benchmark::State&)> bench;
  /// value: {f(x0)}; reverse: {f(x0), gradient...}; forward: {f(x0), tangent along v}.
  std::function<std::vector<double>()> result;
};

inline std::vector<entry>& registry() {
  static std::vector<entry> r;
  return r;
}

inline void add(char const* problem, char const* impl, mode kind, std::function<void(benchmark::State&)> bench,
                std::function<std::vector<double>()> result) {
  registry().push_back({problem, impl, kind, std::move(bench), std::move(result)});
}

/// Calls f(p) for each problem instance, in the spec's order.
template <class F>
void for_each_problem(F&& f) {
  f(instance<lse>());
  f(instance<normal_lpdf>());
  f(instance<prod_sum>());
  f(instance<matvec_quad>());
  f(instance<advection>());
  f(instance<det_minor>());
}

inline std::vector<char const*> const& problem_order() {
  static std::vector<char const*> const o{"lse", "normal_lpdf", "prod_sum", "matvec_quad", "advection", "det_minor"};
  return o;
}

// Registration functions, one per implementation file.
void register_baseline();  // double, hand
void register_adx();       // adx_reverse, adx_forward
#ifdef ADX_BENCH_HAVE_ADOLC
void register_adolc();
#endif
#ifdef ADX_BENCH_HAVE_SACADO
void register_sacado();
#endif
#ifdef ADX_BENCH_HAVE_EIGEN
void register_eigen();
#endif
#ifdef ADX_BENCH_HAVE_CERES
void register_ceres();
#endif

}  // namespace adx_bench
