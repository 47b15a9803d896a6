// Eigen's AutoDiffScalar (unsupported module): forward mode with a fixed-size 1-vector of
// derivatives (one tangent).
#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "harness.hpp"

namespace adx_bench {
namespace {

using E = Eigen::AutoDiffScalar<Eigen::Matrix<double, 1, 1>>;

template <class P>
E eigen_tangent(P const& p, std::vector<E>& x) {
  for (std::size_t i = 0; i < P::n; ++i) x[i] = E(p.x0[i], Eigen::Matrix<double, 1, 1>(p.v[i]));
  return E(p(x.data()));
}

}  // namespace

void register_eigen() {
  for_each_problem([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "eigen_autodiff", mode::forward,
        [&p](benchmark::State& st) {
          std::vector<E> x(P::n);
          for (auto _ : st) {
            benchmark::DoNotOptimize(x.data());
            E y = eigen_tangent(p, x);
            benchmark::DoNotOptimize(y);
          }
        },
        [&p] {
          std::vector<E> x(P::n);
          E y = eigen_tangent(p, x);
          return std::vector<double>{y.value(), y.derivatives()(0)};
        });
  });
}

}  // namespace adx_bench
