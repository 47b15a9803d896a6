// ADOL-C: reverse gradient, retaping each iteration (trace_on / trace_off, then gradient(),
// which runs a zero-order forward and a first-order reverse sweep over the new trace).
#include <adolc/adolc.h>

#include "harness.hpp"

namespace adx_bench {
namespace {

constexpr short tag = 1;

template <class P>
double adolc_gradient(P const& p, double* g) {
  double yv = 0;
  trace_on(tag);
  {
    std::vector<adouble> x(P::n);
    for (std::size_t i = 0; i < P::n; ++i) x[i] <<= p.x0[i];
    adouble y = p(x.data());
    y >>= yv;
  }
  trace_off();
  gradient(tag, static_cast<int>(P::n), p.x0.data(), g);
  return yv;
}

}  // namespace

void register_adolc() {
  for_each_problem([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "adolc_reverse", mode::reverse,
        [&p](benchmark::State& st) {
          std::vector<double> g(P::n);
          for (auto _ : st) {
            double y = adolc_gradient(p, g.data());
            benchmark::DoNotOptimize(y);
            benchmark::DoNotOptimize(g.data());
            benchmark::ClobberMemory();
          }
        },
        [&p] {
          std::vector<double> r(P::n + 1);
          r[0] = adolc_gradient(p, r.data() + 1);
          return r;
        });
  });
}

}  // namespace adx_bench
