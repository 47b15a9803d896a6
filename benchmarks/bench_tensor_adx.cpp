// tensor_bench, adx: every gradient from scratch in each iteration (tensor_adx.hpp), for the
// tensor problems (mlp, matmul_grad, elementwise), named `adx`; bench_tensor_adx_forms.cpp has
// the tensor forms of the scalar problems. Counters: statements, operands and tape bytes of one
// recording.
#include "tensor_adx_bench.hpp"

namespace adx_bench::tensor_suite {
namespace {

using namespace adx_programs;

/// `<mlp>/adx_parameter`: the model is made once per run, inside a tape_scope that lasts the
/// run, as a training loop holds its model. Leaving that scope drops the parameters' variables;
/// made on the thread's base recording instead, they would stay on the tape, and every later
/// backward on this thread would zero their adjoints as well (README, "Recordings").
void add_model_gradient(mlp_program const& prog) {
  std::size_t const n = input_size(prog);
  add(
      prog.p.name, "adx_parameter", kind::gradient,
      [&prog, n](benchmark::State& st) {
        adx::tape_scope<V> held;
        mlp_model const model(prog);
        std::vector<double> g(n);
        time_gradient(st, g.data(), [&](double* out) { return model.gradient(out); });
        tape_counters(st, model);
      },
      [&prog, n] {
        adx::tape_scope<V> held;
        mlp_model const model(prog);
        std::vector<double> r(n + 1);
        r[0] = model.gradient(r.data() + 1);
        return r;
      });
}

}  // namespace

void register_adx() {
  // the programs live as long as the registry
  static std::vector<std::unique_ptr<mlp_program>> mlps;
  for (auto const& p : mlp_problems()) {
    mlps.push_back(std::make_unique<mlp_program>(p));
    add_gradient(p.name, "adx", *mlps.back());
  }
  for (auto const& prog : mlps) add_model_gradient(*prog);  // the same programs on parameters
  static std::vector<std::unique_ptr<matmul_program>> mms;
  for (auto const& p : matmul_problems()) {
    mms.push_back(std::make_unique<matmul_program>(p));
    add_gradient(p.name, "adx", *mms.back());
  }
  static elementwise_program const ew(elementwise_instance());
  add_gradient(ew.p.name, "adx", ew);
  add(
      "elementwise_fwd", "adx", kind::output,
      [](benchmark::State& st) {
        for (auto _ : st) {
          T y = ew.forward();
          benchmark::DoNotOptimize(y.data());
          benchmark::ClobberMemory();
        }
      },
      [] {
        T const y = ew.forward();
        return std::vector<double>(y.begin(), y.end());
      });
}

}  // namespace adx_bench::tensor_suite
