// tensor_bench, adx: every gradient from scratch in each iteration, as a user writes it:
// open a tape_scope<var<double>>, make the parameters tensor<var<double>> (independent
// variables), run the tensor program, backward, read every adjoint into a double buffer
// (x[i].adjoint() per element: the only way a tensor's gradient can be read today).
//
// Names: `adx` for the tensor problems (mlp, matmul_grad, elementwise), `adx_tensor` for the
// tensor forms of the scalar problems and, beside them, `adx_reverse` (the problems.hpp scalar
// template at var<double>, as in scalar_bench) for comparison.
#include <adx/adx.hpp>

#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {
namespace {

// Needed: the operators and functions of a tensor expression (adx::detail::tensor_expr) are
// not found by argument-dependent lookup outside namespace adx (see results/TENSOR_PROFILE.md).
using namespace adx;
using V = adx::var<double>;
using T = tensor<double>;

T make(std::vector<double> const& v, std::size_t offset, adx::shape const& sh) {
  auto const first = v.begin() + static_cast<std::ptrdiff_t>(offset);
  return T(sh, std::vector<double>(first, first + static_cast<std::ptrdiff_t>(sh.size())));
}

/// Every adjoint of x, in row-major order, into g.
ADX_ALWAYS_INLINE void read_adjoints(tensor<V> const& x, double* g) {
  for (std::size_t i = 0; i < x.size(); ++i) g[i] = x[i].adjoint();
}

/// Tape counters of one recording (filled once after the timing loop).
template <class F>
void tape_counters(benchmark::State& st, F&& record) {
  auto& t = adx::tape<double>::current();
  adx::tape_stats before = t.stats(), after;
  {
    adx::tape_scope<V> scope;
    record();
    after = t.stats();
  }
  st.counters["statements"] = static_cast<double>(after.statements - before.statements);
  st.counters["operands"] = static_cast<double>(after.operands - before.operands);
  st.counters["tape_bytes"] = static_cast<double>(after.bytes_used - before.bytes_used);
}

// ---- mlp --------------------------------------------------------------------------------

struct mlp_data {
  mlp_problem const& p;
  T X, Y, W1, b1, W2, b2;
  explicit mlp_data(mlp_problem const& q)
      : p(q),
        X(make(q.X, 0, {q.B, q.D})),
        Y(make(q.onehot, 0, {q.B, q.C})),
        W1(make(q.x0, 0, {q.D, q.H})),
        b1(make(q.x0, q.off_b1(), {q.H})),
        W2(make(q.x0, q.off_W2(), {q.H, q.C})),
        b2(make(q.x0, q.off_b2(), {q.C})) {}

  /// The program: softmax cross-entropy (mean over the batch) of tanh(X W1 + b1) W2 + b2.
  V loss(tensor<V> const& w1, tensor<V> const& c1, tensor<V> const& w2, tensor<V> const& c2) const {
    tensor<V> h = tanh(matmul(X, w1) + c1);
    tensor<V> z = matmul(h, w2) + c2;
    return -sum(log_softmax(z, 1) * Y) / static_cast<double>(p.B);
  }

  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    tensor<V> w1(W1), c1(b1), w2(W2), c2(b2);
    V l = loss(w1, c1, w2, c2);
    adx::backward(l);
    read_adjoints(w1, g);
    read_adjoints(c1, g + p.off_b1());
    read_adjoints(w2, g + p.off_W2());
    read_adjoints(c2, g + p.off_b2());
    return l.value();
  }
  void record() const {
    tensor<V> w1(W1), c1(b1), w2(W2), c2(b2);
    V l = loss(w1, c1, w2, c2);
    benchmark::DoNotOptimize(l);
  }
};

// ---- matmul_grad ------------------------------------------------------------------------

struct matmul_data {
  matmul_problem const& p;
  T W, A, B;
  explicit matmul_data(matmul_problem const& q)
      : p(q), W(make(q.W, 0, {q.N, q.N})), A(make(q.x0, 0, {q.N, q.N})), B(make(q.x0, q.N * q.N, {q.N, q.N})) {}

  V loss(tensor<V> const& a, tensor<V> const& b) const { return sum(matmul(a, b) * W); }

  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    tensor<V> a(A), b(B);
    V l = loss(a, b);
    adx::backward(l);
    read_adjoints(a, g);
    read_adjoints(b, g + p.N * p.N);
    return l.value();
  }
  void record() const {
    tensor<V> a(A), b(B);
    V l = loss(a, b);
    benchmark::DoNotOptimize(l);
  }
};

// ---- elementwise ------------------------------------------------------------------------

struct elementwise_data {
  elementwise_problem const& p;
  T a, b, c, d;
  explicit elementwise_data(elementwise_problem const& q)
      : p(q),
        a(make(q.x0, 0, {q.N})),
        b(make(q.x0, q.N, {q.N})),
        c(make(q.x0, 2 * q.N, {q.N})),
        d(make(q.x0, 3 * q.N, {q.N})) {}

  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    tensor<V> va(a), vb(b), vc(c), vd(d);
    V f = sum(va * vb + sin(vc) / vd);
    adx::backward(f);
    read_adjoints(va, g);
    read_adjoints(vb, g + p.N);
    read_adjoints(vc, g + 2 * p.N);
    read_adjoints(vd, g + 3 * p.N);
    return f.value();
  }
  void record() const {
    tensor<V> va(a), vb(b), vc(c), vd(d);
    V f = sum(va * vb + sin(vc) / vd);
    benchmark::DoNotOptimize(f);
  }
  /// The forward-only fused evaluation on tensor<double>.
  T forward() const { return a * b + sin(c) / d; }
};

// ---- tensor forms of the scalar problems ----------------------------------------------

/// f(x) written with tensor operations, x a tensor<S> of the problem's inputs.
template <class P>
struct tensor_form;

template <>
struct tensor_form<lse> {
  lse const& p;
  template <class S>
  S operator()(tensor<S> const& x) const {
    return logsumexp(x);
  }
};

template <>
struct tensor_form<normal_lpdf> {
  normal_lpdf const& p;
  T y = T(adx::shape{normal_lpdf::m}, p.y);
  template <class S>
  S operator()(tensor<S> const& x) const {
    S const mu = x[0], sigma = x[1];
    auto const z = (y - mu) / sigma;
    return sum(-0.5 * z * z) - static_cast<double>(normal_lpdf::m) * log(sigma);
  }
};

template <>
struct tensor_form<matvec_quad> {
  matvec_quad const& p;
  T A = T(adx::shape{matvec_quad::n, matvec_quad::n}, p.A);
  template <class S>
  S operator()(tensor<S> const& x) const {
    return 0.5 * dot(x, matmul(A, x));
  }
};

template <>
struct tensor_form<advection> {
  advection const& p;
  template <class S>
  S operator()(tensor<S> const& x) const {
    constexpr long n = advection::n;
    constexpr double c = advection::c;
    tensor<S> q = x;
    for (int step = 0; step < advection::steps; ++step) {
      tensor<S> const l = q.slice(0, 0, n - 1), r = q.slice(0, 1, n);
      tensor<S> const flux = 0.5 * c * (l + r + c * (l - r));                                       // [n-1]
      tensor<S> const inner = q.slice(0, 1, n - 1) + flux.slice(0, 0, n - 2) - flux.slice(0, 1, n - 1);  // [n-2]
      // periodic boundary: q = [inner[n-3], inner..., inner[0]]
      S* qp = q.data();
      std::copy(inner.begin(), inner.end(), qp + 1);
      qp[0] = qp[n - 2];
      qp[n - 1] = qp[1];
    }
    return sum(q * q);
  }
};

template <class P>
double tensor_form_gradient(tensor_form<P> const& f, T const& x0, double* g) {
  adx::tape_scope<V> scope;
  tensor<V> x(x0);
  V y = f(x);
  adx::backward(y);
  read_adjoints(x, g);
  return y.value();
}

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

template <class D>
void add_gradient(std::string const& name, std::size_t n, D const& d) {
  add(
      name, "adx", kind::gradient,
      [&d, n](benchmark::State& st) {
        std::vector<double> g(n);
        for (auto _ : st) {
          double f = d.gradient(g.data());
          benchmark::DoNotOptimize(f);
          benchmark::DoNotOptimize(g.data());
          benchmark::ClobberMemory();
        }
        tape_counters(st, [&d] { d.record(); });
      },
      [&d, n] {
        std::vector<double> r(n + 1);
        r[0] = d.gradient(r.data() + 1);
        return r;
      });
}

}  // namespace

void register_adx() {
  // the data live as long as the registry (function-local statics in the registration)
  static std::vector<std::unique_ptr<mlp_data>> mlps;
  for (auto const& p : mlp_problems()) {
    mlps.push_back(std::make_unique<mlp_data>(p));
    add_gradient(p.name, p.n(), *mlps.back());
  }
  static std::vector<std::unique_ptr<matmul_data>> mms;
  for (auto const& p : matmul_problems()) {
    mms.push_back(std::make_unique<matmul_data>(p));
    add_gradient(p.name, p.n(), *mms.back());
  }
  static elementwise_data const ew(elementwise_instance());
  add_gradient(ew.p.name, ew.p.n(), ew);
  add(
      "elementwise_fwd", "adx", kind::output,
      [](benchmark::State& st) {
        for (auto _ : st) {
          T y = ew.forward();
          benchmark::DoNotOptimize(y.data());
          benchmark::ClobberMemory();
        }
      },
      [] {
        T const y = ew.forward();
        return std::vector<double>(y.begin(), y.end());
      });

  for_each_tensor_form([](auto const& p) {
    using P = std::remove_cvref_t<decltype(p)>;
    static tensor_form<P> const f{p};
    static T const x0(adx::shape{P::n}, p.x0);
    add(
        P::name, "adx_tensor", kind::gradient,
        [](benchmark::State& st) {
          std::vector<double> g(P::n);
          for (auto _ : st) {
            double y = tensor_form_gradient(f, x0, g.data());
            benchmark::DoNotOptimize(y);
            benchmark::DoNotOptimize(g.data());
            benchmark::ClobberMemory();
          }
          tape_counters(st, [] {
            tensor<V> x(x0);
            V y = f(x);
            benchmark::DoNotOptimize(y);
          });
        },
        [] {
          std::vector<double> r(P::n + 1);
          r[0] = tensor_form_gradient(f, x0, r.data() + 1);
          return r;
        });
    // the tensor form at double must compute the problem's f (checked as a value)
    add(
        P::name, "adx_tensor_value", kind::value, nullptr, [] { return std::vector<double>{f(x0)}; });
    add(
        P::name, "adx_reverse", kind::gradient,
        [&p](benchmark::State& st) {
          std::vector<V> x(P::n);
          std::vector<double> g(P::n);
          for (auto _ : st) {
            double y = scalar_gradient(p, x, g.data());
            benchmark::DoNotOptimize(y);
            benchmark::DoNotOptimize(g.data());
            benchmark::ClobberMemory();
          }
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
