// tensor_bench, adx: the tensor forms of the scalar problems, named `adx_tensor`, and beside
// them `adx_reverse` (the problems.hpp scalar template at var<double>, as in scalar_bench) for
// comparison. Every gradient from scratch in each iteration.
#include "tensor_adx_bench.hpp"

namespace adx_bench::tensor_suite {
namespace {

using namespace adx_programs;

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

}  // namespace

void register_adx_forms() {
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
