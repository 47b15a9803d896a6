// The start-up checks the tensor benchmarks share (tensor_bench, linalg_bench): every problem's
// hand gradient against central finite differences on sampled coordinates, then every other
// implementation's result against hand's (relative error below 1e-8 in the max norm).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {

/// The largest magnitude of v[0..n).
inline double norm_inf(double const* v, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::abs(v[i]));
  return m;
}

/// The checks' bound on the relative error (max norm).
inline constexpr double tolerance = 1e-8;

/// Central differences of the problem's loss on a few coordinates spread over x.
inline bool check_fd(fd_target const& t, std::vector<double> const& ref) {
  std::size_t const n = t.x0.size(), samples = std::min<std::size_t>(n, 8);
  double const* g = ref.data() + 1;
  double const scale = std::max(norm_inf(g, n), 1e-12);
  std::vector<double> x = t.x0;
  double worst = 0;
  for (std::size_t s = 0; s < samples; ++s) {
    std::size_t const i = (s * n) / samples + (s * 7919) % std::max<std::size_t>(1, n / samples);
    double const h = 1e-6 * std::max(1.0, std::abs(x[i]));
    x[i] = t.x0[i] + h;
    double const fp = t.f(x.data());
    x[i] = t.x0[i] - h;
    double const fm = t.f(x.data());
    x[i] = t.x0[i];
    worst = std::max(worst, std::abs((fp - fm) / (2 * h) - g[i]) / scale);
  }
  double const ferr = std::abs(t.f(t.x0.data()) - ref[0]) / std::max(std::abs(ref[0]), 1e-300);
  bool const ok = worst < 1e-5 && ferr < tolerance;
  std::fprintf(stderr, "check %-17s hand vs finite differences (%zu coordinates): max rel err %.2e, f %.2e %s\n",
               t.problem.c_str(), samples, worst, ferr, ok ? "ok" : "FAILED");
  return ok;
}

/// An implementation's result against hand's.
inline bool check_entry(entry const& e, std::vector<double> const& ref) {
  std::vector<double> const r = e.result();
  double err = 0;
  if (e.k == kind::output) {
    if (r.size() != ref.size()) {
      std::fprintf(stderr, "check %-17s %-16s output size %zu, want %zu FAILED\n", e.problem.c_str(), e.impl.c_str(),
                   r.size(), ref.size());
      return false;
    }
    double const scale = std::max(norm_inf(ref.data(), ref.size()), 1e-300);
    for (std::size_t i = 0; i < r.size(); ++i) err = std::max(err, std::abs(r[i] - ref[i]) / scale);
  } else {
    err = std::abs(r.at(0) - ref.at(0)) / std::max(std::abs(ref[0]), 1e-300);
    if (e.k == kind::gradient) {
      if (r.size() != ref.size()) {
        std::fprintf(stderr, "check %-17s %-16s gradient size %zu, want %zu FAILED\n", e.problem.c_str(),
                     e.impl.c_str(), r.size() - 1, ref.size() - 1);
        return false;
      }
      double const scale = std::max(norm_inf(ref.data() + 1, ref.size() - 1), 1e-300);
      for (std::size_t i = 1; i < r.size(); ++i) err = std::max(err, std::abs(r[i] - ref[i]) / scale);
    }
  }
  bool const ok = err < tolerance;
  std::fprintf(stderr, "check %-17s %-16s max rel err %.2e %s\n", e.problem.c_str(), e.impl.c_str(), err,
               ok ? "ok" : "FAILED");
  return ok;
}

/// Orders the registry by problem (stable: implementation files keep their order) and runs the
/// checks; false, after saying so, when one fails.
inline bool check_registry(char const* program, std::vector<std::string> const& order) {
  auto index = [&](std::string const& p) { return std::find(order.begin(), order.end(), p) - order.begin(); };
  auto& reg = registry();
  std::stable_sort(reg.begin(), reg.end(),
                   [&](entry const& a, entry const& b) { return index(a.problem) < index(b.problem); });
  bool ok = true;
  std::map<std::string, std::vector<double>> refs;
  for (auto const& e : reg)
    if (e.impl == "hand") refs[e.problem] = e.result();
  for (auto const& t : fd_targets()) ok &= check_fd(t, refs.at(t.problem));
  for (auto const& e : reg) {
    if (e.impl == "hand") continue;
    auto const it = refs.find(e.problem);
    if (it == refs.end()) {
      std::fprintf(stderr, "check %-17s %-16s no hand reference FAILED\n", e.problem.c_str(), e.impl.c_str());
      ok = false;
      continue;
    }
    ok &= check_entry(e, it->second);
  }
  if (!ok) std::fprintf(stderr, "%s: a check FAILED; not timing anything\n", program);
  return ok;
}

}  // namespace adx_bench::tensor_suite
