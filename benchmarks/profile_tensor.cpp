// tensor_profile: where the time of one adx tensor gradient goes (docs/performance.md).
//
//   tensor_profile PROBLEM [SECONDS]            stage split of adx, beside hand
//   tensor_profile PROBLEM SECONDS --loop       only the adx gradient in a loop (for perf record
//                                               or valgrind --tool=callgrind; use small sizes)
//
// The stages of one gradient (the same program as tensor_bench's adx):
//   variables  tensor<var<double>> from the tensor<double> inputs (independent variables)
//   record     the program (forward values, tape statements and nodes)
//   backward   adx::backward (zeroing the adjoints, the sweep, matmul nodes' GEMMs)
//   read       every adjoint read with adx::adjoints(x, span)
//   drop       the end of the tape_scope and the tensors' destruction
// Times are the process's CPU time (robust on a shared machine), medians over the gradients.
// One BLAS thread (set OPENBLAS_NUM_THREADS=1 in the environment as well).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tensor_adx.hpp"

namespace adx_bench::tensor_suite {
namespace {

using namespace adx_programs;
using clock_type = std::chrono::steady_clock;  // for the run length only

/// The process's CPU time in microseconds.
double cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e6 * static_cast<double>(ts.tv_sec) + 1e-3 * static_cast<double>(ts.tv_nsec);
}

struct stages {
  std::vector<double> variables, record, backward, read, drop, total;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <class Prog>
void staged_once(Prog const& prog, double* g, stages& s) {
  double const t0 = cpu_us();
  double t1, t2, t3, t4;
  {
    adx::tape_scope<V> scope;
    std::vector<tensor<V>> const x = variables(prog);
    t1 = cpu_us();
    V const l = prog.loss(x);
    t2 = cpu_us();
    adx::backward(l);
    t3 = cpu_us();
    double* gp = g;
    for (auto const& t : x) {
      read_adjoints(t, gp);
      gp += t.size();
    }
    t4 = cpu_us();
  }
  double const t5 = cpu_us();
  s.variables.push_back(t1 - t0);
  s.record.push_back(t2 - t1);
  s.backward.push_back(t3 - t2);
  s.read.push_back(t4 - t3);
  s.drop.push_back(t5 - t4);
  s.total.push_back(t5 - t0);
}

template <class F>
double time_median(double seconds, F&& f) {
  std::vector<double> t;
  auto const end = clock_type::now() + std::chrono::duration<double>(seconds);
  do {
    double const a = cpu_us();
    f();
    t.push_back(cpu_us() - a);
  } while (clock_type::now() < end || t.size() < 3);
  return median(t);
}

template <class Prog, class Hand>
int run(Prog const& prog, Hand&& hand, double seconds, bool loop) {
  std::vector<double> g(input_size(prog));
  if (loop) {
    auto const end = clock_type::now() + std::chrono::duration<double>(seconds);
    std::size_t n = 0;
    do {
      gradient(prog, g.data());
      ++n;
    } while (clock_type::now() < end);
    std::printf("%zu gradients\n", n);
    return 0;
  }
  stages s, warm;
  for (int k = 0; k < 2; ++k) staged_once(prog, g.data(), warm);  // the tape's arena grows once
  auto const end = clock_type::now() + std::chrono::duration<double>(seconds);
  do staged_once(prog, g.data(), s);
  while (clock_type::now() < end || s.total.size() < 3);
  double const h = time_median(seconds / 2, hand);
  double const tot = median(s.total);
  auto line = [&](char const* name, std::vector<double> const& v) {
    double const m = median(v);
    std::printf("  %-10s %12.1f us  %5.1f %%  %6.2fx hand\n", name, m, 100 * m / tot, m / h);
  };
  std::printf("adx stages (medians of %zu gradients):\n", s.total.size());
  line("variables", s.variables);
  line("record", s.record);
  line("backward", s.backward);
  line("read", s.read);
  line("drop", s.drop);
  line("total", s.total);
  std::printf("  %-10s %12.1f us\n", "hand", h);
  return 0;
}

template <class P>
int run_form(P const& p, double seconds, bool loop) {
  form_program<P> const prog(p);
  std::vector<double> g(P::n);
  return run(
      prog, [&] { p.gradient(p.x0.data(), g.data()); }, seconds, loop);
}

}  // namespace
}  // namespace adx_bench::tensor_suite

int main(int argc, char** argv) {
  using namespace adx_bench;
  using namespace adx_bench::tensor_suite;
  if (argc < 2) {
    std::fprintf(stderr, "usage: tensor_profile PROBLEM [SECONDS] [--loop]\n");
    return 2;
  }
  std::string const name = argv[1];
  double const seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
  bool const loop = argc > 3 && std::strcmp(argv[3], "--loop") == 0;
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#endif
  for (auto const& p : mlp_problems())
    if (p.name == name) {
      adx_programs::mlp_program const prog(p);
      std::vector<double> g(p.n());
      mlp_problem::scratch s(p);
      return run(
          prog, [&] { p.gradient(p.x0.data(), g.data(), s); }, seconds, loop);
    }
  for (auto const& p : matmul_problems())
    if (p.name == name) {
      adx_programs::matmul_program const prog(p);
      std::vector<double> g(p.n());
      matmul_problem::scratch s(p);
      return run(
          prog, [&] { p.gradient(p.x0.data(), g.data(), s); }, seconds, loop);
    }
  if (name == "elementwise") {
    auto const& p = elementwise_instance();
    adx_programs::elementwise_program const prog(p);
    std::vector<double> g(p.n());
    return run(
        prog, [&] { p.gradient(p.x0.data(), g.data()); }, seconds, loop);
  }
  if (name == "lse") return run_form(instance<lse>(), seconds, loop);
  if (name == "normal_lpdf") return run_form(instance<normal_lpdf>(), seconds, loop);
  if (name == "matvec_quad") return run_form(instance<matvec_quad>(), seconds, loop);
  if (name == "advection") return run_form(instance<advection>(), seconds, loop);
  std::fprintf(stderr, "tensor_profile: unknown problem %s\n", name.c_str());
  return 2;
}
