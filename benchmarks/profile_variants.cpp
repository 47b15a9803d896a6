// tensor_variants: other ways of writing the same tensor programs (to see which costs belong to
// the formulation and which to the library), and the forward elementwise loop taken apart.
// CPU-time medians.
//
//   OPENBLAS_NUM_THREADS=1 tensor_variants
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tensor_adx.hpp"

namespace {

using namespace adx_bench;
using namespace adx_bench::tensor_suite::adx_programs;

double cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e6 * static_cast<double>(ts.tv_sec) + 1e-3 * static_cast<double>(ts.tv_nsec);
}

template <class X>
void keep(X const& x) {
  asm volatile("" : : "r"(&x) : "memory");
}

template <class F>
double median_us(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    double const a = cpu_us();
    f();
    t.push_back(cpu_us() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// One gradient of loss over one input tensor, from scratch (as tensor_bench's adx_tensor).
template <class L>
double grad(T const& x0, L&& loss, std::vector<double>& g) {
  adx::tape_scope<V> scope;
  tensor<V> x(x0);
  V y = loss(x);
  adx::backward(y);
  read_adjoints(x, g.data());
  return y.value();
}

void normal_lpdf_variants() {
  auto const& p = instance<normal_lpdf>();
  T const y(adx::shape{normal_lpdf::m}, p.y), x0(adx::shape{2}, p.x0);
  std::vector<double> g(2);
  double const m = normal_lpdf::m;
  auto lazy = [&](tensor<V> const& x) {  // tensor_bench's form
    V mu = x[0], s = x[1];
    auto z = (y - mu) / s;
    return V(sum(-0.5 * z * z) - m * log(s));
  };
  auto stored = [&](tensor<V> const& x) {
    V mu = x[0], s = x[1];
    tensor<V> z = (y - mu) / s;
    return V(sum(-0.5 * z * z) - m * log(s));
  };
  auto power = [&](tensor<V> const& x) {
    V mu = x[0], s = x[1];
    auto z = (y - mu) / s;
    return V(sum(-0.5 * pow(z, 2.0)) - m * log(s));
  };
  auto literal = [&](tensor<V> const& x) {  // log(sigma) inside the sum, as the scalar template
    V mu = x[0], s = x[1];
    auto z = (y - mu) / s;
    return V(sum(-0.5 * z * z - log(s)));
  };
  auto inverse = [&](tensor<V> const& x) {
    V mu = x[0], s = x[1];
    V inv = 1.0 / s;
    auto z = (y - mu) * inv;
    return V(sum(-0.5 * z * z) - m * log(s));
  };
  std::vector<V> xs(2);
  std::printf("normal_lpdf (m = 10000)\n");
  std::printf("  lazy z, sum(-0.5 z z) - m log s    %8.1f us  (tensor_bench)\n",
              median_us(2000, [&] { keep(grad(x0, lazy, g)); }));
  std::printf("  z stored as tensor<var>            %8.1f us\n", median_us(2000, [&] { keep(grad(x0, stored, g)); }));
  std::printf("  pow(z, 2.0)                        %8.1f us\n", median_us(2000, [&] { keep(grad(x0, power, g)); }));
  std::printf("  sum(-0.5 z z - log s)              %8.1f us\n", median_us(2000, [&] { keep(grad(x0, literal, g)); }));
  std::printf("  z = (y - mu) * (1 / s)             %8.1f us\n", median_us(2000, [&] { keep(grad(x0, inverse, g)); }));
  std::printf("  scalar tape (problems.hpp)         %8.1f us\n", median_us(2000, [&] {
                adx::tape_scope<V> scope;
                for (std::size_t i = 0; i < 2; ++i) xs[i] = V(p.x0[i]);
                V r = p(xs.data());
                adx::backward(r);
                for (std::size_t i = 0; i < 2; ++i) g[i] = xs[i].adjoint();
              }));
  std::printf("  hand                               %8.1f us\n",
              median_us(2000, [&] { p.gradient(p.x0.data(), g.data()); }));
}

void advection_variants() {
  auto const& a = instance<advection>();
  constexpr long n = advection::n;
  static constexpr double c = advection::c;
  T const q0(adx::shape{advection::n}, a.x0);
  std::vector<double> g(advection::n);
  tensor_form<advection> const two{a};
  auto flux = [](auto const& l, auto const& r) { return 0.5 * c * (l + r + c * (l - r)); };
  auto twice = [&](tensor<V> const& x) {  // each flux fused into both cells' updates (the older form)
    tensor<V> q = x;
    for (int step = 0; step < advection::steps; ++step) {
      tensor<V> const q0s = q.slice(0, 0, n - 2), q1 = q.slice(0, 1, n - 1), q2 = q.slice(0, 2, n);
      tensor<V> const inner = q1 + flux(q0s, q1) - flux(q1, q2);
      q = adx::concat({inner.slice(0, n - 3, n - 2), inner, inner.slice(0, 0, 1)});
    }
    return V(sum(q * q));
  };
  auto fused = [&](tensor<V> const& x) {  // one statement per element and step
    tensor<V> q = x;
    for (int step = 0; step < advection::steps; ++step) {
      tensor<V> const q0s = q.slice(0, 0, n - 2), q1 = q.slice(0, 1, n - 1), q2 = q.slice(0, 2, n);
      tensor<V> const inner = q1 + flux(q0s, q1) - flux(q1, q2);
      V* qp = q.data();
      std::copy(inner.begin(), inner.end(), qp + 1);
      qp[0] = qp[n - 2];
      qp[n - 1] = qp[1];
    }
    return V(sum(q * q));
  };
  auto linear = [&](tensor<V> const& x) {  // the same step with its three coefficients folded
    constexpr double a0 = 0.5 * c * (1 + c), a1 = 0.5 * c * (1 - c);
    tensor<V> q = x;
    for (int step = 0; step < advection::steps; ++step) {
      tensor<V> const q0s = q.slice(0, 0, n - 2), q1 = q.slice(0, 1, n - 1), q2 = q.slice(0, 2, n);
      tensor<V> const inner = a0 * q0s + (1 + a1 - a0) * q1 - a1 * q2;
      V* qp = q.data();
      std::copy(inner.begin(), inner.end(), qp + 1);
      qp[0] = qp[n - 2];
      qp[n - 1] = qp[1];
    }
    return V(sum(q * q));
  };
  std::vector<V> xs(advection::n);
  tensor<V> const qv(adx::shape{advection::n});
  std::printf("advection (n = 100, 200 steps)\n");
  std::printf("  flux once, then update, concat     %8.1f us  (tensor_bench)\n",
              median_us(300, [&] { keep(grad(q0, two, g)); }));
  std::printf("  each flux twice, in one update     %8.1f us\n", median_us(300, [&] { keep(grad(q0, twice, g)); }));
  std::printf("  one fused statement per element    %8.1f us\n", median_us(300, [&] { keep(grad(q0, fused, g)); }));
  std::printf("  one folded linear statement        %8.1f us\n", median_us(300, [&] { keep(grad(q0, linear, g)); }));
  std::printf("  600 slices of tensor<var> alone    %8.1f us\n", median_us(300, [&] {
                for (int s = 0; s < 200; ++s) {
                  auto s0 = qv.slice(0, 0, n - 2), s1 = qv.slice(0, 1, n - 1), s2 = qv.slice(0, 2, n);
                  keep(s0), keep(s1), keep(s2);
                }
              }));
  std::printf("  scalar tape (problems.hpp)         %8.1f us\n", median_us(300, [&] {
                adx::tape_scope<V> scope;
                for (std::size_t i = 0; i < advection::n; ++i) xs[i] = V(a.x0[i]);
                V r = a(xs.data());
                adx::backward(r);
                for (std::size_t i = 0; i < advection::n; ++i) g[i] = xs[i].adjoint();
              }));
  std::printf("  hand                               %8.1f us\n",
              median_us(300, [&] { a.gradient(a.x0.data(), g.data()); }));
}

/// The fixed cost of one recorded tensor statement: `q = 0.999 * q + 0.001` 600 times on a
/// tensor of 1 and of 100 elements (one node each), then sum(q), from scratch as grad() does.
void statement_cost() {
  std::printf("one recorded statement q = 0.999 * q + 0.001 (600 of them)\n");
  for (std::size_t len : {std::size_t{1}, std::size_t{100}}) {
    T const x0 = adx::full<double>(adx::shape{len}, 0.5);
    std::vector<double> g(len);
    auto chain = [](tensor<V> const& x) {
      tensor<V> q = x;
      for (int k = 0; k < 600; ++k) q = 0.999 * q + 0.001;
      return V(sum(q));
    };
    double const rec = median_us(300, [&] {
      adx::tape_scope<V> scope;
      tensor<V> const x(x0);
      keep(chain(x));
    });
    double const all = median_us(300, [&] { keep(grad(x0, chain, g)); });
    std::printf("  [%3zu] recorded %6.1f ns a statement, with the backward pass %6.1f ns\n", len, 1e3 * rec / 600,
                1e3 * all / 600);
  }
}

void forward_elementwise() {
  auto const& p = elementwise_instance();
  elementwise_program const prog(p);
  auto const& in = prog.inputs;
  std::size_t const n = p.N;
  double const* x = p.x0.data();
  std::vector<double> y(n);
  std::printf("elementwise forward (n = 10^6)\n");
  std::printf("  hand loop a*b + sin(c)/d           %8.0f us\n", median_us(40, [&] {
                p.forward(x, y.data());
                keep(y[0]);
              }));
  std::printf("  adx fused a*b + sin(c)/d           %8.0f us\n", median_us(40, [&] { keep(prog.forward()); }));
  std::printf("  hand loop a*b + c/d (no sin)       %8.0f us\n", median_us(40, [&] {
                for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * x[n + i] + x[2 * n + i] / x[3 * n + i];
                keep(y[0]);
              }));
  std::printf("  adx fused a*b + c/d (no sin)       %8.0f us\n",
              median_us(40, [&] { keep(T(in[0] * in[1] + in[2] / in[3])); }));
  std::printf("  tensor<double>(shape) allocation   %8.0f us\n", median_us(40, [&] { keep(T(adx::shape{n})); }));
}

}  // namespace

int main() {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#endif
  normal_lpdf_variants();
  advection_variants();
  statement_cost();
  forward_elementwise();
  return 0;
}
