// Ceres Solver's Jet<double, 1>: forward mode, one tangent.
#include <ceres/jet.h>

#include "harness.hpp"

namespace adx_bench {
namespace {

using J = ceres::Jet<double, 1>;

template <class P>
J jet_tangent(P const& p, std::vector<J>& x) {
  for (std::size_t i = 0; i < P::n; ++i) {
    x[i] = J(p.x0[i]);
    x[i].v[0] = p.v[i];
  }
  return J(p(x.data()));
}

}  // namespace

void register_ceres() {
  for_each_problem([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "ceres_jet", mode::forward,
        [&p](benchmark::State& st) {
          std::vector<J> x(P::n);
          for (auto _ : st) {
            benchmark::DoNotOptimize(x.data());
            J y = jet_tangent(p, x);
            benchmark::DoNotOptimize(y);
          }
        },
        [&p] {
          std::vector<J> x(P::n);
          J y = jet_tangent(p, x);
          return std::vector<double>{y.a, y.v[0]};
        });
  });
}

}  // namespace adx_bench
