// train_bench: what training a network costs. The gradient of convolutional networks (forward
// and backward: a LeNet-sized one and a wide layer) by adx and, where CMake finds it, LibTorch
// (bench_train_torch.cpp); one Adam step over 2^20 parameters by adx's optim::adam and by a
// hand-written loop of the same formulas.
//
// Every implementation runs on one thread: the process re-executes itself once with
// OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1, and LibTorch is told torch::set_num_threads(1).
// Before timing: adx's convolution gradients against central differences (LeNet) and against
// LibTorch's (both), adx's Adam against the hand loop (equal to the bit); any mismatch aborts.
// Ratios: run with --benchmark_repetitions=N --benchmark_enable_random_interleaving=true and
// compare the medians (scripts/dev.sh bench-train prints them).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <adx/adx.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "train_problems.hpp"

namespace adx_bench::train {

#ifdef ADX_BENCH_HAVE_TORCH
double torch_conv_gradient(conv_problem const& p, double* g);  // bench_train_torch.cpp
void torch_one_thread();
#endif

namespace {

using adx::shape;
using adx::tensor;
using V = adx::var<double>;

/// adx: the parameters made variables, the network recorded, one backward sweep, the gradient
/// read out: what a training step's gradient costs from scratch.
double adx_conv_gradient(conv_problem const& p, double* g) {
  static std::vector<std::pair<conv_problem const*, std::pair<tensor<double>, tensor<double>>>> data;
  tensor<double> const* x = nullptr;
  tensor<double> const* r = nullptr;
  for (auto const& d : data)
    if (d.first == &p) x = &d.second.first, r = &d.second.second;
  if (!x) {
    std::size_t const last = p.layers.size() - 1, s = p.out_size(last);
    data.push_back({&p,
                    {tensor<double>(shape{p.batch, p.channels, p.size, p.size}, p.x),
                     tensor<double>(shape{p.batch, p.layers[last].out, s, s}, p.r)}});
    x = &data.back().second.first;
    r = &data.back().second.second;
  }
  adx::tape_scope<V> scope;
  std::vector<tensor<V>> ws, bs;
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    std::size_t const o = p.offset(l), k = p.layers[l].k, oc = p.layers[l].out, n = p.weight_size(l);
    std::vector<double> const wv(p.params.begin() + static_cast<long>(o), p.params.begin() + static_cast<long>(o + n));
    std::vector<double> const bv(p.params.begin() + static_cast<long>(o + n),
                                 p.params.begin() + static_cast<long>(o + n + oc));
    ws.emplace_back(tensor<double>(shape{oc, p.in_channels(l), k, k}, wv));
    bs.emplace_back(tensor<double>(shape{oc}, bv));
  }
  auto const options = [&](std::size_t l) {
    return adx::conv2d_options{.padding = {p.layers[l].pad, p.layers[l].pad}};
  };
  tensor<V> y = adx::conv2d(*x, ws[0], bs[0], options(0));
  for (std::size_t l = 1; l < p.layers.size(); ++l) y = adx::conv2d(tanh(y), ws[l], bs[l], options(l));
  V const loss = sum(*r * y);
  adx::backward(loss);
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    double* out = g + p.offset(l);
    for (V const& w : ws[l]) *out++ = w.adjoint();
    for (V const& b : bs[l]) *out++ = b.adjoint();
  }
  return loss.value();
}

/// The loss alone, in plain numbers, for the finite-difference check.
double conv_loss(conv_problem const& p, std::vector<double> const& params) {
  tensor<double> y(shape{p.batch, p.channels, p.size, p.size}, p.x);
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    std::size_t const o = p.offset(l), k = p.layers[l].k, oc = p.layers[l].out, n = p.weight_size(l);
    tensor<double> const w(
        shape{oc, p.in_channels(l), k, k},
        std::vector<double>(params.begin() + static_cast<long>(o), params.begin() + static_cast<long>(o + n)));
    tensor<double> const b(shape{oc}, std::vector<double>(params.begin() + static_cast<long>(o + n),
                                                          params.begin() + static_cast<long>(o + n + oc)));
    y = adx::conv2d(l == 0 ? y : tensor<double>(eval(tanh(y))), w, b, {.padding = {p.layers[l].pad, p.layers[l].pad}});
  }
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += p.r[i] * y.data()[i];
  return s;
}

// ---- Adam over 2^20 parameters ----------------------------------------------------------------

constexpr adx::optim::adam_options adam_opts{.lr = 1e-3, .weight_decay = 1e-2};

struct hand_adam {
  std::vector<double> p, m, v;
  double step = 0;
  explicit hand_adam(adam_problem const& a) : p(a.p0), m(a.n, 0.0), v(a.n, 0.0) {}
  void run(double const* g) {
    step += 1;
    double const b1 = adam_opts.beta1, b2 = adam_opts.beta2, wd = adam_opts.weight_decay, eps = adam_opts.eps;
    double const c1 = 1 - std::pow(b1, step), c2 = 1 - std::pow(b2, step);
    double const minus_step = -(adam_opts.lr / c1), c2_sqrt = std::sqrt(c2);
    double const one_b1 = 1 - b1, one_b2 = 1 - b2;
    for (std::size_t k = 0, n = p.size(); k < n; ++k) {
      double const gk = g[k] + wd * p[k];
      m[k] = m[k] * b1 + one_b1 * gk;
      v[k] = v[k] * b2 + one_b2 * gk * gk;
      p[k] = p[k] + minus_step * m[k] / (std::sqrt(v[k]) / c2_sqrt + eps);
    }
  }
};

struct adx_adam {
  adx::parameter<double> p;
  adx::optim::adam<double> opt;
  std::vector<tensor<double>> g;
  explicit adx_adam(adam_problem const& a)
      : p(tensor<double>(shape{a.n}, a.p0)),
        opt(std::vector<adx::parameter<double>>{p}, adam_opts),
        g{tensor<double>(shape{a.n}, a.g)} {}
  void run() { opt.step(g); }
};

bool check(char const* what, bool ok, double err) {
  std::fprintf(stderr, "check %-40s max rel err %.2e %s\n", what, err, ok ? "ok" : "FAILED");
  return ok;
}

bool run_checks() {
  bool ok = true;
  for (auto const& p : conv_problems()) {
    std::vector<double> g(p.params.size());
    double const f = adx_conv_gradient(p, g.data());
    double scale = 0;
    for (double v : g) scale = std::max(scale, std::abs(v));
    if (p.name == "conv_lenet") {  // central differences on a few parameters
      double worst = std::abs(conv_loss(p, p.params) - f) / std::abs(f);
      std::vector<double> q = p.params;
      for (std::size_t s = 0; s < 8; ++s) {
        std::size_t const i = (s * q.size()) / 8 + s;
        double const h = 1e-6;
        q[i] = p.params[i] + h;
        double const fp = conv_loss(p, q);
        q[i] = p.params[i] - h;
        double const fm = conv_loss(p, q);
        q[i] = p.params[i];
        worst = std::max(worst, std::abs((fp - fm) / (2 * h) - g[i]) / scale);
      }
      ok &= check((p.name + ": adx vs central differences").c_str(), worst < 1e-6, worst);
    }
#ifdef ADX_BENCH_HAVE_TORCH
    std::vector<double> t(p.params.size());
    double const ft = torch_conv_gradient(p, t.data());
    double err = std::abs(ft - f) / std::abs(f);
    for (std::size_t i = 0; i < t.size(); ++i) err = std::max(err, std::abs(t[i] - g[i]) / scale);
    ok &= check((p.name + ": adx vs LibTorch").c_str(), err < 1e-10, err);
#endif
  }
  hand_adam h(adam_instance());
  adx_adam a(adam_instance());
  for (int k = 0; k < 3; ++k) {
    h.run(adam_instance().g.data());
    a.run();
  }
  double err = 0;
  tensor<double> const pv = a.p.value();
  for (std::size_t i = 0; i < h.p.size(); ++i) err = std::max(err, std::abs(pv.data()[i] - h.p[i]));
  ok &= check("adam_1m: optim::adam vs the hand loop, 3 steps", err == 0, err);
  return ok;
}

void register_all() {
  for (auto const& p : conv_problems()) {
    benchmark::RegisterBenchmark((p.name + "/adx").c_str(), [&p](benchmark::State& st) {
      std::vector<double> g(p.params.size());
      for (auto _ : st) benchmark::DoNotOptimize(adx_conv_gradient(p, g.data()));
    })->Unit(benchmark::kMillisecond);
#ifdef ADX_BENCH_HAVE_TORCH
    benchmark::RegisterBenchmark((p.name + "/torch").c_str(), [&p](benchmark::State& st) {
      std::vector<double> g(p.params.size());
      for (auto _ : st) benchmark::DoNotOptimize(torch_conv_gradient(p, g.data()));
    })->Unit(benchmark::kMillisecond);
#endif
  }
  benchmark::RegisterBenchmark("adam_1m/adx", [](benchmark::State& st) {
    adx_adam a(adam_instance());
    for (auto _ : st) {
      a.run();
      benchmark::ClobberMemory();
    }
  })->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("adam_1m/hand", [](benchmark::State& st) {
    hand_adam h(adam_instance());
    for (auto _ : st) {
      h.run(adam_instance().g.data());
      benchmark::DoNotOptimize(h.p.data());
      benchmark::ClobberMemory();
    }
  })->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace adx_bench::train

int main(int argc, char** argv) {
  adx_bench::single_threaded("train_bench", argv);
#ifdef ADX_BENCH_HAVE_TORCH
  adx_bench::train::torch_one_thread();
#endif
  std::vector<char*> args;
  bool const check_only = adx_bench::take_flag(argc, argv, "--check_only", args);
  if (!adx_bench::train::run_checks()) {
    std::fprintf(stderr, "train_bench: a check FAILED; not timing anything\n");
    return 1;
  }
  if (check_only) return 0;
  adx_bench::train::register_all();
  int nargs = static_cast<int>(args.size());
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
