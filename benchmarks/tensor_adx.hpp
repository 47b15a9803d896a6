// The adx programs of tensor_bench, shared by bench_tensor_adx.cpp (timing) and
// profile_tensor.cpp (stage split, perf / callgrind driver).
//
// Each program has `inputs` (its differentiable inputs as tensor<double>, in the problem's
// layout of x) and `loss(x)` over the same inputs as tensor<var<double>>. gradient() is what
// one timed iteration does, as a user writes it: open a tape_scope<var<double>>, make the
// inputs tensor<var<double>> (independent variables), run the program, backward, read every
// adjoint into a double buffer (adx::adjoints(x, span), the bulk read).
#pragma once

#include <adx/adx.hpp>
#include <memory>
#include <vector>

#include "tensor_problems.hpp"

namespace adx_bench::tensor_suite::adx_programs {

// Needed: the operators and functions of a tensor expression (adx::detail::tensor_expr) are
// not found by argument-dependent lookup outside namespace adx.
using namespace adx;
using V = adx::var<double>;
using T = tensor<double>;

inline T make(std::vector<double> const& v, std::size_t offset, adx::shape const& sh) {
  auto const first = v.begin() + static_cast<std::ptrdiff_t>(offset);
  return T(sh, std::vector<double>(first, first + static_cast<std::ptrdiff_t>(sh.size())));
}

/// Every adjoint of x, in row-major order, into g (adx's bulk read).
ADX_ALWAYS_INLINE void read_adjoints(tensor<V> const& x, double* g) {
  adx::adjoints(x, std::span<double>(g, x.size()));
}

// ---- mlp --------------------------------------------------------------------------------

struct mlp_program {
  mlp_problem const& p;
  T X, Y;
  std::vector<T> inputs;  // W1, b1, W2, b2
  explicit mlp_program(mlp_problem const& q)
      : p(q),
        X(make(q.X, 0, {q.B, q.D})),
        Y(make(q.onehot, 0, {q.B, q.C})),
        inputs{make(q.x0, 0, {q.D, q.H}), make(q.x0, q.off_b1(), {q.H}), make(q.x0, q.off_W2(), {q.H, q.C}),
               make(q.x0, q.off_b2(), {q.C})} {}

  /// Softmax cross-entropy (mean over the batch) of tanh(X W1 + b1) W2 + b2.
  V loss(std::vector<tensor<V>> const& x) const {
    tensor<V> const &W1 = x[0], &b1 = x[1], &W2 = x[2], &b2 = x[3];
    tensor<V> h = tanh(matmul(X, W1) + b1);
    tensor<V> z = matmul(h, W2) + b2;
    return -sum(log_softmax(z, 1) * Y) / static_cast<double>(p.B);
  }
};

/// The mlp as a model holds it: its weights are adx::parameter, made once (not in the timed
/// loop), and each gradient records with them as they are (`mlp*/adx_parameter`).
struct mlp_model {
  mlp_program const& prog;
  std::vector<parameter<double>> weights;
  explicit mlp_model(mlp_program const& p) : prog(p) {
    weights.reserve(p.inputs.size());
    for (auto const& t : p.inputs) weights.emplace_back(t);
  }
  /// One timed iteration: {f, gradient in x's layout}, the parameters' adjoints read in bulk.
  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    V const l = prog.loss({weights.begin(), weights.end()});
    adx::backward(l);
    for (auto const& w : weights) {
      read_adjoints(w, g);
      g += w.size();
    }
    return l.value();
  }
};

// ---- matmul_grad ------------------------------------------------------------------------

struct matmul_program {
  matmul_problem const& p;
  T W;
  std::vector<T> inputs;  // A, B
  explicit matmul_program(matmul_problem const& q)
      : p(q), W(make(q.W, 0, {q.N, q.N})), inputs{make(q.x0, 0, {q.N, q.N}), make(q.x0, q.N * q.N, {q.N, q.N})} {}

  V loss(std::vector<tensor<V>> const& x) const { return sum(matmul(x[0], x[1]) * W); }
};

// ---- elementwise ------------------------------------------------------------------------

struct elementwise_program {
  elementwise_problem const& p;
  std::vector<T> inputs;  // a, b, c, d
  explicit elementwise_program(elementwise_problem const& q) : p(q) {
    for (std::size_t k = 0; k < 4; ++k) inputs.push_back(make(q.x0, k * q.N, {q.N}));
  }

  V loss(std::vector<tensor<V>> const& x) const {
    tensor<V> const &a = x[0], &b = x[1], &c = x[2], &d = x[3];
    return sum(a * b + sin(c) / d);
  }
  /// The forward-only fused evaluation on tensor<double>.
  T forward() const { return inputs[0] * inputs[1] + sin(inputs[2]) / inputs[3]; }
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
    // square(z), not z * z: the element expression then divides once per element
    return sum(-0.5 * square((y - mu) / sigma)) - static_cast<double>(normal_lpdf::m) * log(sigma);
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
      // as the scalar program: each interface's flux once (flux_i between cells i and i + 1),
      // then every inner cell's update from the fluxes on its two sides
      tensor<S> const l = q.slice(0, 0, n - 1), r = q.slice(0, 1, n);
      tensor<S> const flux = 0.5 * c * (l + r + c * (l - r));  // i = 0 .. n-2
      tensor<S> const inner =
          q.slice(0, 1, n - 1) + flux.slice(0, 0, n - 2) - flux.slice(0, 1, n - 1);  // cells 1 .. n-2
      // periodic boundary: q = [inner[n-3], inner..., inner[0]]
      q = adx::concat({inner.slice(0, n - 3, n - 2), inner, inner.slice(0, 0, 1)});
    }
    return sum(q * q);
  }
};

/// A tensor form as a program over one input tensor.
template <class P>
struct form_program {
  tensor_form<P> f;
  std::vector<T> inputs;
  explicit form_program(P const& p) : f{p}, inputs{T(adx::shape{P::n}, p.x0)} {}
  V loss(std::vector<tensor<V>> const& x) const { return f(x[0]); }
};

// ---- one gradient -------------------------------------------------------------------------

/// The inputs as independent variables.
template <class Prog>
std::vector<tensor<V>> variables(Prog const& prog) {
  std::vector<tensor<V>> x;
  x.reserve(prog.inputs.size());
  for (auto const& t : prog.inputs) x.emplace_back(t);
  return x;
}

/// One timed iteration: {f, gradient in x's layout} from scratch.
template <class Prog>
double gradient(Prog const& prog, double* g) {
  adx::tape_scope<V> scope;
  std::vector<tensor<V>> const x = variables(prog);
  V const l = prog.loss(x);
  adx::backward(l);
  for (auto const& t : x) {
    read_adjoints(t, g);
    g += t.size();
  }
  return l.value();
}

template <class Prog>
std::size_t input_size(Prog const& prog) {
  std::size_t n = 0;
  for (auto const& t : prog.inputs) n += t.size();
  return n;
}

}  // namespace adx_bench::tensor_suite::adx_programs
