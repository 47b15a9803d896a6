// adx: reverse mode (adx::var<double>, from scratch each iteration) and forward mode
// (adx::dual<double>, one tangent along the problem's direction v).
#include <adx/adx.hpp>

#include "harness.hpp"

namespace adx_bench {
namespace {

using V = adx::var<double>;
using D = adx::dual<double>;

/// One reverse gradient from scratch: open a nested recording, make the inputs independent
/// variables, record f, sweep, read every adjoint; the scope drops the recording. The inputs
/// are made and read with the bulk calls (one tape lookup each), as Adept's set_values and
/// get_gradients do; the loops x[i] = V(x0[i]) and g[i] = x[i].adjoint() give the same result.
template <class P>
ADX_ALWAYS_INLINE double adx_gradient(P const& p, std::vector<V>& x, double* g) {
  adx::tape_scope<V> scope;
  adx::make_independent(x, p.x0);
  V y = p(x.data());
  adx::backward(y);
  adx::adjoints(x, std::span<double>(g, P::n));
  return y.value();
}

template <class P>
ADX_ALWAYS_INLINE D adx_tangent(P const& p, std::vector<D>& x) {
  for (std::size_t i = 0; i < P::n; ++i) x[i] = D(p.x0[i], p.v[i]);
  return D(p(x.data()));
}

/// Tape counters of one recording of P: statements (independent variables included), operand
/// entries and bytes (1 byte per statement + index and partial per operand).
template <class P>
void tape_counters(P const& p, benchmark::State& st) {
  auto& t = adx::tape<double>::current();
  adx::tape_stats before = t.stats(), after;
  {
    adx::tape_scope<V> scope;
    std::vector<V> x(p.x0.begin(), p.x0.end());
    [[maybe_unused]] V y = p(x.data());
    after = t.stats();
  }
  double const stmts = static_cast<double>(after.statements - before.statements);
  double const ops = static_cast<double>(after.operands - before.operands);
  double const bytes = static_cast<double>(after.bytes_used - before.bytes_used);
  st.counters["tape_bytes"] = bytes;
  st.counters["statements"] = stmts;
  st.counters["operands"] = ops;
  st.counters["bytes_per_stmt"] = stmts > 0 ? bytes / stmts : 0;
  st.counters["bytes_per_operand"] = ops > 0 ? bytes / ops : 0;
}

}  // namespace

void register_adx() {
  for_each_problem([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    add(
        P::name, "adx_reverse", mode::reverse,
        [&p](benchmark::State& st) {
          std::vector<V> x(P::n);
          std::vector<double> g(P::n);
          for (auto _ : st) {
            double y = adx_gradient(p, x, g.data());
            benchmark::DoNotOptimize(y);
            benchmark::DoNotOptimize(g.data());
            benchmark::ClobberMemory();
          }
          tape_counters(p, st);
        },
        [&p] {
          std::vector<V> x(P::n);
          std::vector<double> r(P::n + 1);
          r[0] = adx_gradient(p, x, r.data() + 1);
          return r;
        });
    add(
        P::name, "adx_forward", mode::forward,
        [&p](benchmark::State& st) {
          std::vector<D> x(P::n);
          for (auto _ : st) {
            benchmark::DoNotOptimize(x.data());
            D y = adx_tangent(p, x);
            benchmark::DoNotOptimize(y);
          }
        },
        [&p] {
          std::vector<D> x(P::n);
          D y = adx_tangent(p, x);
          return std::vector<double>{y.value(), y.tangent()};
        });
  });
}

}  // namespace adx_bench
