// gradient_loop: a loop of independent gradients on the thread's base recording, with no
// tape_scope, as a new user writes it:
//
//   for (...) { var<double> x = ...; var<double> y = f(x); backward(y); use(x.adjoint()); }
//
// Each gradient must cost only what it reaches, not everything recorded before it: the time per
// gradient (the counter per_gradient, in seconds) is flat from 10^3 to 10^5 gradients. Each benchmark
// iteration records on a fresh tape (tape_activation), so that the runs do not add up.
#include <benchmark/benchmark.h>
#include <adx/adx.hpp>

namespace {

void gradient_loop(benchmark::State& st) {
  auto const n = static_cast<int>(st.range(0));
  for (auto _ : st) {
    adx::tape<double> tp;
    adx::tape_activation<double> active(tp);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      adx::var<double> x = 0.5 + 1e-6 * i;
      adx::var<double> y = sin(x) * x + exp(x);
      adx::backward(y);
      sum += x.adjoint();
    }
    benchmark::DoNotOptimize(sum);
  }
  // seconds per gradient (printed with an SI prefix: 70n is 70 ns)
  st.counters["per_gradient"] = benchmark::Counter(static_cast<double>(n) * static_cast<double>(st.iterations()),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(gradient_loop)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
