// tensor_bench baselines: `hand` (loss and gradient by hand, CBLAS products and plain loops,
// buffers allocated outside the timing) and, for the tensor forms of the scalar problems,
// `double` (the problems.hpp template at double) and `hand` (its hand-coded gradient).
#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {

void register_hand() {
  for (auto const& p : mlp_problems()) add_scratch_gradient(p);
  for (auto const& p : matmul_problems()) add_scratch_gradient(p);

  auto const& e = elementwise_instance();
  add(
      e.name, "hand", kind::gradient,
      [&e](benchmark::State& st) {
        std::vector<double> x = e.x0, g(e.n());
        time_gradient(st, g.data(), [&](double* out) {
          benchmark::DoNotOptimize(x.data());
          return e.gradient(x.data(), out);
        });
      },
      [&e] {
        std::vector<double> r(e.n() + 1);
        r[0] = e.gradient(e.x0.data(), r.data() + 1);
        return r;
      });
  fd_targets().push_back({e.name, e.x0, [&e](double const* x) { return e.value(x); }});
  add(
      "elementwise_fwd", "hand", kind::output,
      [&e](benchmark::State& st) {
        std::vector<double> x = e.x0, y(e.N);
        for (auto _ : st) {
          benchmark::DoNotOptimize(x.data());
          e.forward(x.data(), y.data());
          benchmark::DoNotOptimize(y.data());
          benchmark::ClobberMemory();
        }
      },
      [&e] {
        std::vector<double> y(e.N);
        e.forward(e.x0.data(), y.data());
        return y;
      });

  for_each_tensor_form([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "double", kind::value,
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
        P::name, "hand", kind::gradient,
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
    fd_targets().push_back({P::name, p.x0, [&p](double const* x) { return p(x); }});
  });
}

}  // namespace adx_bench::tensor_suite
