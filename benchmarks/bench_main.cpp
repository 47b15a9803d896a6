// scalar_bench: the six scalar problems in every available implementation.
//
// Before timing, every implementation's result (value, gradient or tangent) is checked against
// the hand-coded gradient, which is itself checked against central finite differences; any
// mismatch aborts the run. `--check_only` stops after the checks.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "harness.hpp"

namespace adx_bench {
namespace {

struct reference {
  double f;
  std::vector<double> g;
  double tangent;
};

double norm_inf(std::vector<double> const& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

template <class P>
bool make_reference(P const& p, reference& ref) {
  ref.f = p(p.x0.data());
  ref.g.assign(P::n, 0.0);
  p.gradient(p.x0.data(), ref.g.data());
  ref.tangent = 0;
  for (std::size_t i = 0; i < P::n; ++i) ref.tangent += ref.g[i] * p.v[i];
  // central finite differences
  std::vector<double> x = p.x0;
  double const scale = std::max(1.0, norm_inf(ref.g));
  double worst = 0;
  for (std::size_t i = 0; i < P::n; ++i) {
    double const h = 1e-6 * std::max(1.0, std::abs(x[i]));
    x[i] = p.x0[i] + h;
    double const fp = p(x.data());
    x[i] = p.x0[i] - h;
    double const fm = p(x.data());
    x[i] = p.x0[i];
    worst = std::max(worst, std::abs((fp - fm) / (2 * h) - ref.g[i]) / scale);
  }
  bool const ok = worst < 1e-6;
  std::fprintf(stderr, "check %-12s hand gradient vs finite differences: max rel err %.2e %s\n", P::name, worst,
               ok ? "ok" : "FAILED");
  return ok;
}

bool check_entry(entry const& e, reference const& ref) {
  std::vector<double> const r = e.result();
  double const fscale = std::max(1.0, std::abs(ref.f));
  double err = std::abs(r.at(0) - ref.f) / fscale;
  if (e.kind == mode::reverse) {
    double const gscale = std::max(1.0, norm_inf(ref.g));
    if (r.size() != ref.g.size() + 1) return false;
    for (std::size_t i = 0; i < ref.g.size(); ++i) err = std::max(err, std::abs(r[i + 1] - ref.g[i]) / gscale);
  } else if (e.kind == mode::forward) {
    double const tscale = std::max(1.0, std::abs(ref.tangent));
    err = std::max(err, std::abs(r.at(1) - ref.tangent) / tscale);
  }
  bool const ok = err < 1e-9;
  std::fprintf(stderr, "check %-12s %-16s max rel err %.2e %s\n", e.problem.c_str(), e.impl.c_str(), err,
               ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace
}  // namespace adx_bench

int main(int argc, char** argv) {
  using namespace adx_bench;
  std::vector<char*> args;
  bool const check_only = take_flag(argc, argv, "--check_only", args);
  int nargs = static_cast<int>(args.size());

  register_baseline();
  register_adx();
#ifdef ADX_BENCH_HAVE_ADOLC
  register_adolc();
#endif
#ifdef ADX_BENCH_HAVE_SACADO
  register_sacado();
#endif
#ifdef ADX_BENCH_HAVE_EIGEN
  register_eigen();
#endif
#ifdef ADX_BENCH_HAVE_CERES
  register_ceres();
#endif

  // Checks.
  bool ok = true;
  std::vector<reference> refs(problem_order().size());
  std::size_t k = 0;
  for_each_problem([&](auto const& p) { ok &= make_reference(p, refs[k++]); });
  auto problem_index = [](std::string const& name) {
    auto const& o = problem_order();
    return static_cast<std::size_t>(std::find(o.begin(), o.end(), name) - o.begin());
  };
  auto& reg = registry();
  std::stable_sort(reg.begin(), reg.end(),
                   [&](entry const& a, entry const& b) { return problem_index(a.problem) < problem_index(b.problem); });
  for (auto const& e : reg) ok &= check_entry(e, refs[problem_index(e.problem)]);
  if (!ok) {
    std::fprintf(stderr, "scalar_bench: a check FAILED; not timing anything\n");
    return 1;
  }
  if (check_only) return 0;

  for (auto const& e : reg)
    benchmark::RegisterBenchmark((e.problem + "/" + e.impl).c_str(), e.bench)->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
