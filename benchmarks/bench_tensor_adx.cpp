// tensor_bench, adx: every gradient from scratch in each iteration (tensor_adx.hpp).
//
// Names: `adx` for the tensor problems (mlp, matmul_grad, elementwise), `adx_tensor` for the
// tensor forms of the scalar problems and, beside them, `adx_reverse` (the problems.hpp scalar
// template at var<double>, as in scalar_bench) for comparison. Counters: statements, operands
// and tape bytes of one recording.
#include "tensor_adx.hpp"
#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {
namespace {

using namespace adx_programs;

/// Tape counters of one recording (filled once after the timing loop).
template <class Prog>
void tape_counters(benchmark::State& st, Prog const& prog) {
  auto& t = adx::tape<double>::current();
  adx::tape_stats before = t.stats(), after;
  {
    adx::tape_scope<V> scope;
    V l;
    if constexpr (std::is_same_v<Prog, mlp_model>) {
      l = prog.prog.loss({prog.weights.begin(), prog.weights.end()});
    } else {
      auto const x = variables(prog);
      l = prog.loss(x);
    }
    benchmark::DoNotOptimize(l);
    after = t.stats();
  }
  st.counters["statements"] = static_cast<double>(after.statements - before.statements);
  st.counters["operands"] = static_cast<double>(after.operands - before.operands);
  st.counters["tape_bytes"] = static_cast<double>(after.bytes_used - before.bytes_used);
  st.counters["nodes"] = static_cast<double>(after.nodes - before.nodes);
  st.counters["node_bytes"] = static_cast<double>(after.node_bytes - before.node_bytes);
}

/// The problems.hpp template at var<double> (what scalar_bench calls adx_reverse).
template <class P>
double scalar_gradient(P const& p, std::vector<V>& x, double* g) {
  adx::tape_scope<V> scope;
  for (std::size_t i = 0; i < P::n; ++i) x[i] = V(p.x0[i]);
  V y = p(x.data());
  adx::backward(y);
  for (std::size_t i = 0; i < P::n; ++i) g[i] = x[i].adjoint();
  return y.value();
}

template <class Prog>
void add_gradient(std::string const& problem, std::string const& impl, Prog const& prog) {
  std::size_t const n = input_size(prog);
  add(
      problem, impl, kind::gradient,
      [&prog, n](benchmark::State& st) {
        std::vector<double> g(n);
        time_gradient(st, g.data(), [&](double* out) { return gradient(prog, out); });
        tape_counters(st, prog);
      },
      [&prog, n] {
        std::vector<double> r(n + 1);
        r[0] = gradient(prog, r.data() + 1);
        return r;
      });
}

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

  for_each_tensor_form([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    static form_program<P> const prog(p);
    add_gradient(P::name, "adx_tensor", prog);
    // the tensor form at double must compute the problem's f (checked as a value, not timed)
    add(P::name, "adx_tensor_value", kind::value, nullptr, [] { return std::vector<double>{prog.f(prog.inputs[0])}; });
    add(
        P::name, "adx_reverse", kind::gradient,
        [&p](benchmark::State& st) {
          std::vector<V> x(P::n);
          std::vector<double> g(P::n);
          time_gradient(st, g.data(), [&](double* out) { return scalar_gradient(p, x, out); });
        },
        [&p] {
          std::vector<V> x(P::n);
          std::vector<double> r(P::n + 1);
          r[0] = scalar_gradient(p, x, r.data() + 1);
          return r;
        });
  });
}

}  // namespace adx_bench::tensor_suite
