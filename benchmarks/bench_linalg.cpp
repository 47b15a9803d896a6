// linalg_bench: the gradients of three linear-algebra problems (linalg_problems.hpp: mvn, gp,
// solve_logdet at n = 8, 64, 256) by
//   hand       the textbook adjoint formulas over LAPACKE and CBLAS (the practical limit),
//   adx        tensor<var<double>> with adx::linalg, as a user writes it,
//   torch      LibTorch's torch.linalg with autograd (bench_linalg_torch.cpp, when CMake finds it),
//   eigen_var  Eigen's LLT / PartialPivLU over adx::var<double> scalars (bench_linalg_eigen.cpp,
//              when CMake finds Eigen; n = 8 and 64 only: every scalar operation of the
//              factorization is a tape statement, and at 256 one gradient takes 40 to 80 ms and
//              a recording of several hundred MB).
//
// Every implementation runs on one thread: the process re-executes itself once with
// OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1, and LibTorch is told torch::set_num_threads(1).
// Before timing, every hand gradient is checked against central differences on sampled
// coordinates, and every implementation's value and gradient against hand's (relative error
// below 1e-8 in the max norm); any mismatch aborts the run. `--check_only` stops after the
// checks. Ratios: run with --benchmark_repetitions=N --benchmark_enable_random_interleaving=true
// and compare the medians (benchmarks/linalg_ratios.py; scripts/dev.sh bench-linalg).
#include <adx/adx.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "harness_checks.hpp"
#include "linalg_problems.hpp"
#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {

#ifdef ADX_BENCH_HAVE_TORCH
void register_linalg_torch();  // bench_linalg_torch.cpp
#endif
#ifdef ADX_BENCH_HAVE_EIGEN
void register_linalg_eigen();  // bench_linalg_eigen.cpp
#endif

namespace {

// ---- hand ---------------------------------------------------------------------------------

// ---- adx ----------------------------------------------------------------------------------
//
// Each gradient as a user writes it: a tape_scope, the inputs made variables from numbers, the
// function, backward, every adjoint read (adjoints(x, span), the bulk read).

// Needed: the operators and functions of a tensor expression are found in namespace adx.
using namespace adx;
using V = var<double>;     ///< the scalar
using T = tensor<double>;  ///< a tensor of numbers

/// The elements of v from offset on as a tensor of shape sh.
T matrix(std::vector<double> const& v, std::size_t offset, shape const& sh) {
  auto const first = v.begin() + static_cast<std::ptrdiff_t>(offset);
  return T(sh, std::vector<double>(first, first + static_cast<std::ptrdiff_t>(sh.size())));
}

/// mvn in adx.
struct mvn_adx {
  mvn_problem const& p;  ///< the instance
  T Sigma0, mu0, z;      ///< the point and the data
  /// The tensors of q's point and data.
  explicit mvn_adx(mvn_problem const& q)
      : p(q), Sigma0(matrix(q.x0, 0, {q.N, q.N})), mu0(matrix(q.x0, q.N * q.N, {q.N})), z(matrix(q.z, 0, {q.N})) {}
  /// log N(z; mu, Sigma) and its gradient into g: cholesky reads Sigma's lower triangle and gives
  /// the symmetric gradient.
  double gradient(double* g) const {
    std::size_t const n = p.N;
    tape_scope<V> scope;
    tensor<V> const Sigma(Sigma0), mu(mu0);
    tensor<V> const L = linalg::cholesky(Sigma);
    tensor<V> const r = linalg::solve_triangular(L, tensor<V>(z - mu).reshape(shape{n, 1}), false);
    V const f = -0.5 * sum(r * r) - sum(log(linalg::diagonal(L))) - half_log_2pi(n);
    backward(f);
    adjoints(Sigma, std::span<double>(g, n * n));
    adjoints(mu, std::span<double>(g + n * n, n));
    return f.value();
  }
};

/// gp in adx: the hyperparameters var<double>, y a tensor of vars.
struct gp_adx {
  gp_problem const& p;  ///< the instance
  T D, I, y0;           ///< the squared distances, the identity, y ([n, 1])
  /// The tensors of q's data and y.
  explicit gp_adx(gp_problem const& q)
      : p(q), D(matrix(q.D, 0, {q.N, q.N})), I(linalg::diag(T(shape{q.N}, 1.0))), y0(matrix(q.x0, 3, {q.N, 1})) {}
  /// nlml and its gradient into g.
  double gradient(double* g) const {
    std::size_t const n = p.N;
    tape_scope<V> scope;
    V const ell = p.x0[0], sf2 = p.x0[1], sn2 = p.x0[2];
    tensor<V> const y(y0);
    tensor<V> const K = sf2 * exp(D * (-0.5 / (ell * ell))) + sn2 * I;
    tensor<V> const L = linalg::cholesky(K);
    tensor<V> const alpha = linalg::cholesky_solve(y, L);
    V const f = 0.5 * sum(y * alpha) + sum(log(linalg::diagonal(L))) + half_log_2pi(n);
    backward(f);
    g[0] = ell.adjoint(), g[1] = sf2.adjoint(), g[2] = sn2.adjoint();
    adjoints(y, std::span<double>(g + 3, n));
    return f.value();
  }
};

/// solve_logdet in adx.
struct solve_logdet_adx {
  solve_logdet_problem const& p;  ///< the instance
  T A0, B0, W;                    ///< the point and the data
  /// The tensors of q's point and data.
  explicit solve_logdet_adx(solve_logdet_problem const& q)
      : p(q), A0(matrix(q.x0, 0, {q.N, q.N})), B0(matrix(q.x0, q.N * q.N, {q.N, q.K})), W(matrix(q.W, 0, {q.N, q.K})) {}
  /// f and its gradient into g.
  double gradient(double* g) const {
    std::size_t const n = p.N;
    tape_scope<V> scope;
    tensor<V> const A(A0), B(B0);
    V const f = sum(W * linalg::solve(A, B)) + linalg::logdet(A).item();
    backward(f);
    adjoints(A, std::span<double>(g, n * n));
    adjoints(B, std::span<double>(g + n * n, n * p.K));
    return f.value();
  }
};

/// hand and adx for every problem and size.
void register_hand_and_adx() {
  static std::vector<std::unique_ptr<mvn_adx>> mvns;
  static std::vector<std::unique_ptr<gp_adx>> gps;
  static std::vector<std::unique_ptr<solve_logdet_adx>> sls;
  for (auto const& p : mvn_problems()) {
    add_scratch_gradient(p);
    mvns.push_back(std::make_unique<mvn_adx>(p));
    add_object_gradient(p.name, "adx", p.n(), *mvns.back());
  }
  for (auto const& p : gp_problems()) {
    add_scratch_gradient(p);
    gps.push_back(std::make_unique<gp_adx>(p));
    add_object_gradient(p.name, "adx", p.n(), *gps.back());
  }
  for (auto const& p : solve_logdet_problems()) {
    add_scratch_gradient(p);
    sls.push_back(std::make_unique<solve_logdet_adx>(p));
    add_object_gradient(p.name, "adx", p.n(), *sls.back());
  }
}

/// The problems in report order: each problem at its three sizes.
std::vector<std::string> linalg_order() {
  std::vector<std::string> o;
  for (auto const& p : mvn_problems()) o.push_back(p.name);
  for (auto const& p : gp_problems()) o.push_back(p.name);
  for (auto const& p : solve_logdet_problems()) o.push_back(p.name);
  return o;
}

}  // namespace
}  // namespace adx_bench::tensor_suite

int main(int argc, char** argv) {
  using namespace adx_bench;
  using namespace adx_bench::tensor_suite;
  single_threaded("linalg_bench", argv);
  std::vector<char*> args;
  bool const check_only = take_flag(argc, argv, "--check_only", args);
  int nargs = static_cast<int>(args.size());

  register_hand_and_adx();
#ifdef ADX_BENCH_HAVE_TORCH
  register_linalg_torch();
#endif
#ifdef ADX_BENCH_HAVE_EIGEN
  register_linalg_eigen();
#endif

  if (!check_registry("linalg_bench", linalg_order())) return 1;
  auto const& reg = registry();
  if (check_only) return 0;

  benchmark::AddCustomContext("OPENBLAS_NUM_THREADS",
                              std::getenv("OPENBLAS_NUM_THREADS") ? std::getenv("OPENBLAS_NUM_THREADS") : "unset");
#ifdef ADX_BENCH_HAVE_TORCH
  benchmark::AddCustomContext("torch", "LibTorch (Debian libtorch-dev), torch::set_num_threads(1)");
#endif
  for (auto const& e : reg)
    benchmark::RegisterBenchmark((e.problem + "/" + e.impl).c_str(), e.bench)
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.2);
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
