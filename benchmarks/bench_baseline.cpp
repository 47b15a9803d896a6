// The baselines: the template instantiated at double (`double`) and the hand-coded gradient
// (`hand`, gradient only).
#include "harness.hpp"

namespace adx_bench {

void register_baseline() {
  for_each_problem([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "double", mode::value,
        [&p](benchmark::State& st) {
          std::vector<double> x = p.x0;
          for (auto _ : st) {
            benchmark::DoNotOptimize(x.data());
            double y = p(x.data());
            benchmark::DoNotOptimize(y);
          }
        },
        [&p] { return std::vector<double>{p(p.x0.data())}; });
    add(
        P::name, "hand", mode::reverse,
        [&p](benchmark::State& st) {
          std::vector<double> x = p.x0, g(P::n);
          for (auto _ : st) {
            benchmark::DoNotOptimize(x.data());
            p.gradient(x.data(), g.data());
            benchmark::DoNotOptimize(g.data());
            benchmark::ClobberMemory();
          }
        },
        [&p] {
          std::vector<double> r(P::n + 1);
          r[0] = p(p.x0.data());
          p.gradient(p.x0.data(), r.data() + 1);
          return r;
        });
  });
}

}  // namespace adx_bench
