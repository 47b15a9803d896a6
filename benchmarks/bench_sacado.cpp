// Sacado (Trilinos): Sacado::Rad::ADvar<double> reverse mode (the tape is rebuilt after each
// Gradcomp) and Sacado::Fad::SFad<double, 1> forward mode (one tangent).
//
// Debian's Sacado_config.h declares Kokkos and Teuchos support, but their headers come in other packages
// (libtrilinos-kokkos-dev, libtrilinos-teuchos-dev). Rad and SFad need neither: read the configuration
// once, drop those switches and tell Sacado not to read it again.
#include <Sacado_config.h>
#undef HAVE_SACADO_KOKKOSCORE
#undef HAVE_SACADO_KOKKOSCONTAINERS
#undef HAVE_SACADO_TEUCHOSKOKKOSCOMM
#undef HAVE_SACADO_KOKKOSMPICOMM
#undef HAVE_SACADO_VIEW_SPEC
#undef HAVE_SACADO_TEUCHOSCORE
#undef HAVE_SACADO_TEUCHOSCOMM
#undef HAVE_SACADO_TEUCHOSNUMERICS
#undef HAVE_MPI
#define TRILINOS_NO_CONFIG_H
#include <Sacado_No_Kokkos.hpp>
#include <Sacado_trad.hpp>

#include "harness.hpp"

namespace adx_bench {
namespace {

using R = Sacado::Rad::ADvar<double>;
using F = Sacado::Fad::SFad<double, 1>;

template <class P>
double rad_gradient(P const& p, double* g) {
  std::vector<R> x(P::n);
  for (std::size_t i = 0; i < P::n; ++i) x[i] = p.x0[i];
  R y = p(x.data());
  R::Gradcomp();
  for (std::size_t i = 0; i < P::n; ++i) g[i] = x[i].adj();
  return y.val();
}

template <class P>
F sfad_tangent(P const& p, std::vector<F>& x) {
  for (std::size_t i = 0; i < P::n; ++i) {
    x[i] = F(p.x0[i]);
    x[i].fastAccessDx(0) = p.v[i];
  }
  return F(p(x.data()));
}

}  // namespace

void register_sacado() {
  for_each_problem([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "sacado_rad", mode::reverse,
        [&p](benchmark::State& st) {
          std::vector<double> g(P::n);
          for (auto _ : st) {
            double y = rad_gradient(p, g.data());
            benchmark::DoNotOptimize(y);
            benchmark::DoNotOptimize(g.data());
            benchmark::ClobberMemory();
          }
        },
        [&p] {
          std::vector<double> r(P::n + 1);
          r[0] = rad_gradient(p, r.data() + 1);
          return r;
        });
    add(
        P::name, "sacado_sfad", mode::forward,
        [&p](benchmark::State& st) {
          std::vector<F> x(P::n);
          for (auto _ : st) {
            benchmark::DoNotOptimize(x.data());
            F y = sfad_tangent(p, x);
            benchmark::DoNotOptimize(y);
          }
        },
        [&p] {
          std::vector<F> x(P::n);
          F y = sfad_tangent(p, x);
          return std::vector<double>{y.val(), y.dx(0)};
        });
  });
}

}  // namespace adx_bench
