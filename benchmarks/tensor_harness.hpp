// The tensor benchmark harness (tensor_bench): as harness.hpp for the scalar suite, every
// implementation file adds, per problem, one benchmark and one function computing what that
// benchmark computes, so that main() can check every implementation against `hand` first.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <vector>

#include "tensor_problems.hpp"

namespace adx_bench::tensor_suite {

/// The timed loop of a gradient benchmark: grad(g) writes the gradient into g and returns f;
/// both are kept from being optimised away.
template <class Grad>
void time_gradient(benchmark::State& st, double* g, Grad&& grad) {
  for (auto _ : st) {
    double f = grad(g);
    benchmark::DoNotOptimize(f);
    benchmark::DoNotOptimize(g);
    benchmark::ClobberMemory();
  }
}

/// gradient: result() is {f, df/dx...} in the problem's layout of x;
/// value:    result() is {f} (checked against hand's f);
/// output:   result() is a whole output vector (the forward elementwise problem).
enum class kind { gradient, value, output };

struct entry {
  std::string problem;
  std::string impl;
  kind k;
  std::function<void(benchmark::State&)> bench;
  std::function<std::vector<double>()> result;
};

inline std::vector<entry>& registry() {
  static std::vector<entry> r;
  return r;
}

inline void add(std::string problem, std::string impl, kind k, std::function<void(benchmark::State&)> bench,
                std::function<std::vector<double>()> result) {
  registry().push_back({std::move(problem), std::move(impl), k, std::move(bench), std::move(result)});
}

/// A problem's loss at a point, for the finite-difference check of its hand gradient.
struct fd_target {
  std::string problem;
  std::vector<double> x0;
  std::function<double(double const*)> f;
};
inline std::vector<fd_target>& fd_targets() {
  static std::vector<fd_target> r;
  return r;
}

/// d's gradient (n inputs, d.gradient(out) returning the value) as `impl` of `problem`.
template <class D>
void add_object_gradient(std::string const& problem, std::string const& impl, std::size_t n, D& d) {
  add(
      problem, impl, kind::gradient,
      [&d, n](benchmark::State& st) {
        std::vector<double> g(n);
        time_gradient(st, g.data(), [&](double* out) { return d.gradient(out); });
      },
      [&d, n] {
        std::vector<double> r(n + 1);
        r[0] = d.gradient(r.data() + 1);
        return r;
      });
}

/// p's hand gradient (p.gradient(x, out, scratch), its scratch made outside the timing) as
/// `hand`, and p.value for the finite-difference check.
template <class P>
void add_scratch_gradient(P const& p) {
  add(
      p.name, "hand", kind::gradient,
      [&p](benchmark::State& st) {
        std::vector<double> x = p.x0, g(p.n());
        typename P::scratch s(p);
        time_gradient(st, g.data(), [&](double* out) {
          benchmark::DoNotOptimize(x.data());
          return p.gradient(x.data(), out, s);
        });
      },
      [&p] {
        std::vector<double> r(p.n() + 1);
        typename P::scratch s(p);
        r[0] = p.gradient(p.x0.data(), r.data() + 1, s);
        return r;
      });
  fd_targets().push_back({p.name, p.x0, [&p](double const* x) { return p.value(x); }});
}

/// The problems in report order.
inline std::vector<std::string> problem_order() {
  std::vector<std::string> o;
  for (auto const& p : mlp_problems()) o.push_back(p.name);
  for (auto const& p : matmul_problems()) o.push_back(p.name);
  o.push_back("elementwise");
  o.push_back("elementwise_fwd");
  for (char const* s : {"lse", "normal_lpdf", "matvec_quad", "advection"}) o.push_back(s);
  return o;
}

/// Calls f(p) for each scalar problem that has a tensor form.
template <class F>
void for_each_tensor_form(F&& f) {
  f(instance<lse>());
  f(instance<normal_lpdf>());
  f(instance<matvec_quad>());
  f(instance<advection>());
}

void register_hand();       // hand (and double for the tensor forms)
void register_adx();        // adx (tensor<var<double>>): mlp, matmul_grad, elementwise
void register_adx_forms();  // adx_tensor / adx_reverse for the tensor forms
#ifdef ADX_BENCH_HAVE_TORCH
void register_torch();
#endif

}  // namespace adx_bench::tensor_suite
