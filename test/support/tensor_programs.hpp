// Test support: random tensor programs. Like programs.hpp for scalars: a program is data (input
// tensors and a list of nodes over earlier values), built by a seeded generator and evaluated by
// one template interpreter for tensor<double>, tensor<dual<double>>, tensor<var<double>> and
// tensor<var<dual<double>>>. Shapes are small (up to 3 x 4) and operands broadcast: [1], [n],
// [m, 1] and rank-0 values against [m, n]. The nodes are fused elementwise expressions of smooth
// functions, reductions over one axis (keepdims or not) or over everything, softmax and
// log_softmax, matrix products (of two values, a value and a transposed one, or a value and a
// constant matrix), scaling by a rank-0 value used as a scalar, and structural operations.
//
// The loss is the sum over the values no node used (each weighted elementwise by a constant
// tensor), so that everything computed matters; check_tensor_program compares its reverse
// gradient (one sweep), its forward gradient (one dual pass per input element) and central
// finite differences, and a Hessian-vector product by forward-over-reverse with finite
// differences of the reverse gradient.
#pragma once

#include <adx/adx.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "support/programs.hpp"

namespace adx_test::tensor_programs {

using adx::shape;
using adx::tensor;
using programs::rng_source;

enum class top : std::uint8_t {
  unary,         // f(a) elementwise, f one of unary_fn
  binary,        // g(a, b) elementwise with broadcasting, g one of binary_fn
  affine,        // k * a + 0.5
  scale_by,      // a * s, s the element of the rank-0 value b, as a scalar
  reduce_all,    // r(a) over every element: a rank-0 value, r one of reduction
  reduce_axis,   // r(a, axis, keepdims)
  softmax,       // softmax(a, axis)
  log_softmax,   // log_softmax(a, axis)
  matmul,        // matmul(a, b) or matmul(a, b^T)
  matmul_const,  // matmul(a, w), w a constant matrix
  transpose,     // a^T (rank 2)
  flatten,       // a.reshape({-1})
  scaled_sum,    // sum or mean of a * s + square(a - s), s = b.item(): a fused reduction whose
                 // scalar operand appears twice (its partials are summed while recording)
  concat,        // concat({a, b}, axis), or concat({a, a}, axis) when b does not fit
  stencil,       // k l - r + (l - 0.25 r) / 2 (+ b.item() if b has one element), l and r the
                 // slices [0, d-1) and [1, d) of a along an axis: a linear expression whose
                 // operands repeat (one partial per operand, merged)
  linalg,        // an adx::linalg function of a square a (at most 4 x 4), kept well conditioned
                 // through tanh: one of linalg_fn
  count
};
/// The linalg node's functions; M = I + 0.1 tanh(a) (diagonally dominant), G = T T^T + I with
/// T = tanh(a) (positive definite).
enum class linalg_fn : std::uint8_t { solve, inv, det, logdet, cholesky, matrix_exp, slogdet, count };
enum class unary_fn : std::uint8_t {
  neg,
  exp,
  log_pos,
  sqrt_pos,
  sin,
  cos,
  tanh,
  atan,
  sigmoid,
  softplus,
  erf,
  square,
  count
};
enum class binary_fn : std::uint8_t { add, sub, mul, div_pos, sin_mix, count };
enum class reduction : std::uint8_t { sum, mean, logsumexp, prod, norm, count };

struct tnode {
  top o = top::unary;
  std::uint8_t f = 0;  // the unary_fn, binary_fn or reduction
  std::uint16_t a = 0, b = 0;
  long axis = 0;
  bool keepdims = false;
  bool transpose_b = false;
  double k = 0;
  tensor<double> w;  // matmul_const's matrix
};

/// Values 0 .. n_inputs-1 are the inputs; value n_inputs + i is node i. The loss is
/// sum over sinks s of sum(value_s * weight_s).
struct tprogram {
  std::vector<tensor<double>> x;
  std::vector<tnode> nodes;
  std::vector<std::uint16_t> sinks;
  std::vector<tensor<double>> weights;
};

// ---- the interpreter ------------------------------------------------------------------------

template <class S>
tensor<S> unary(unary_fn f, tensor<S> const& a) {
  switch (f) {
    case unary_fn::neg:
      return -a;
    case unary_fn::exp:
      return exp(a);
    case unary_fn::log_pos:
      return log(1.0 + a * a);
    case unary_fn::sqrt_pos:
      return sqrt(0.5 + a * a);
    case unary_fn::sin:
      return sin(a);
    case unary_fn::cos:
      return cos(a);
    case unary_fn::tanh:
      return tanh(a);
    case unary_fn::atan:
      return atan(a);
    case unary_fn::sigmoid:
      return 1.0 / (1.0 + exp(-a));
    case unary_fn::softplus:
      return log1p(exp(a));
    case unary_fn::erf:
      return erf(a);
    case unary_fn::square:
      return a * a;
    case unary_fn::count:
      break;
  }
  return a;
}

template <class S>
tensor<S> binary(binary_fn g, tensor<S> const& a, tensor<S> const& b) {
  switch (g) {
    case binary_fn::add:
      return a + b;
    case binary_fn::sub:
      return a - b;
    case binary_fn::mul:
      return a * b;
    case binary_fn::div_pos:
      return a / (1.0 + b * b);
    case binary_fn::sin_mix:
      return a * sin(b) + b;
    case binary_fn::count:
      break;
  }
  return a;
}

template <class S>
S reduce_all(reduction r, tensor<S> const& a) {
  switch (r) {
    case reduction::sum:
      return S(sum(a));
    case reduction::mean:
      return S(mean(a));
    case reduction::logsumexp:
      return S(logsumexp(a));
    case reduction::prod:
      return S(prod(a));
    case reduction::norm:
      return S(norm(a));
    case reduction::count:
      break;
  }
  return S(sum(a));
}

template <class S>
tensor<S> reduce_axis(reduction r, tensor<S> const& a, long axis, bool keepdims) {
  switch (r) {
    case reduction::sum:
      return sum(a, axis, keepdims);
    case reduction::mean:
      return mean(a, axis, keepdims);
    case reduction::logsumexp:
      return logsumexp(a, axis, keepdims);
    case reduction::prod:
      return prod(a, axis, keepdims);
    case reduction::norm:
      return norm(a, axis, keepdims);
    case reduction::count:
      break;
  }
  return sum(a, axis, keepdims);
}

/// The linalg node: f of a square a (b the right-hand side of solve, when it has a's rows).
template <class S>
tensor<S> apply_linalg(linalg_fn f, tensor<S> const& a, tensor<S> const& b) {
  std::size_t const n = a.shape()[0];
  tensor<double> const I = adx::linalg::diag(tensor<double>(shape{n}, 1.0));
  tensor<S> const T = tanh(a);
  tensor<S> const M = I + 0.1 * T;
  switch (f) {
    case linalg_fn::solve:
      return adx::linalg::solve(M, b.rank() >= 1 && b.shape()[0] == n && b.rank() <= 2 ? b : a);
    case linalg_fn::inv:
      return adx::linalg::inv(M);
    case linalg_fn::det:
      return adx::linalg::det(M);
    case linalg_fn::logdet:
      return adx::linalg::logdet(tensor<S>(matmul(T, T.transpose()) + I));
    case linalg_fn::cholesky:
      return adx::linalg::cholesky(tensor<S>(matmul(T, T.transpose()) + I));
    case linalg_fn::matrix_exp:
      return adx::linalg::matrix_exp(tensor<S>(0.5 * T));
    case linalg_fn::slogdet:
      return adx::linalg::slogdet(M)[1];
    case linalg_fn::count:
      break;
  }
  return a;
}

template <class S>
tensor<S> apply_tnode(tnode const& n, std::vector<tensor<S>> const& v) {
  tensor<S> const& a = v[n.a];
  tensor<S> const& b = v[n.b];
  switch (n.o) {
    case top::unary:
      return unary(static_cast<unary_fn>(n.f), a);
    case top::binary:
      return binary(static_cast<binary_fn>(n.f), a, b);
    case top::affine:
      return tensor<S>(n.k * a + 0.5);
    case top::scale_by:
      return tensor<S>(a * b.item());
    case top::reduce_all:
      return tensor<S>::scalar(reduce_all(static_cast<reduction>(n.f), a));
    case top::reduce_axis:
      return reduce_axis(static_cast<reduction>(n.f), a, n.axis, n.keepdims);
    case top::softmax:
      return softmax(a, n.axis);
    case top::log_softmax:
      return log_softmax(a, n.axis);
    case top::matmul:
      return matmul(a, n.transpose_b ? b.transpose() : b);
    case top::matmul_const:
      return matmul(a, n.w);
    case top::transpose:
      return a.transpose();
    case top::flatten:
      return a.reshape({-1L});
    case top::scaled_sum: {
      auto const s = b.item();
      auto const e = a * s + square(a - s);
      return tensor<S>::scalar(n.f == 0 ? S(sum(e)) : S(mean(e)));
    }
    case top::concat:
      return adx::concat({a, b}, n.axis);
    case top::stencil: {
      long const d = static_cast<long>(a.dim(n.axis));
      tensor<S> const l = a.slice(n.axis, 0, d - 1), r = a.slice(n.axis, 1, d);
      auto const e = n.k * l - r + (l - 0.25 * r) / 2.0;
      if (b.size() == 1) return tensor<S>(e + b.item());
      return tensor<S>(e);
    }
    case top::linalg:
      return apply_linalg(static_cast<linalg_fn>(n.f), a, b);
    case top::count:
      break;
  }
  return a;
}

/// The loss of the program on inputs xs (tensors of S).
template <class S>
S run(tprogram const& p, std::vector<tensor<S>> const& xs) {
  std::vector<tensor<S>> v(xs);
  v.reserve(xs.size() + p.nodes.size());
  for (tnode const& n : p.nodes) v.push_back(apply_tnode(n, v));
  S loss = S(0.0);
  for (std::size_t s = 0; s < p.sinks.size(); ++s) loss = loss + sum(v[p.sinks[s]] * p.weights[s]);
  return loss;
}

// Compiled once, in support/tensor_programs.cpp, as the scalar interpreter (programs.hpp).
#define ADX_TEST_TENSOR_PROGRAM_TYPES(X) \
  X(double) X(adx::var<double>) X(adx::dual<double>) X(adx::var<adx::dual<double>>)
#define ADX_TEST_EXTERN_RUN(S) extern template S run<S>(tprogram const&, std::vector<tensor<S>> const&);
ADX_TEST_TENSOR_PROGRAM_TYPES(ADX_TEST_EXTERN_RUN)
#undef ADX_TEST_EXTERN_RUN

// ---- printing -------------------------------------------------------------------------------

inline std::ostream& operator<<(std::ostream& os, tprogram const& p) {
  static char const* const unary_names[] = {"neg",  "exp",  "log1p_sq", "sqrt_half_sq", "sin", "cos",
                                            "tanh", "atan", "sigmoid",  "softplus",     "erf", "square"};
  static char const* const binary_names[] = {"add", "sub", "mul", "div_1_plus_sq", "sin_mix"};
  static char const* const reduction_names[] = {"sum", "mean", "logsumexp", "prod", "norm"};
  auto const old = os.precision(17);
  auto values = [&](tensor<double> const& t) {
    os << "shape " << t.shape() << " {";
    for (std::size_t i = 0; i < t.size(); ++i) os << (i ? ", " : "") << t[i];
    os << "}";
  };
  for (std::size_t i = 0; i < p.x.size(); ++i) {
    os << "t" << i << " = input ";
    values(p.x[i]);
    os << "\n";
  }
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    tnode const& n = p.nodes[i];
    os << "t" << p.x.size() + i << " = ";
    switch (n.o) {
      case top::unary:
        os << unary_names[n.f] << "(t" << n.a << ")";
        break;
      case top::binary:
        os << binary_names[n.f] << "(t" << n.a << ", t" << n.b << ")";
        break;
      case top::affine:
        os << n.k << " * t" << n.a << " + 0.5";
        break;
      case top::scale_by:
        os << "t" << n.a << " * t" << n.b << ".item()";
        break;
      case top::reduce_all:
        os << reduction_names[n.f] << "(t" << n.a << ")";
        break;
      case top::reduce_axis:
        os << reduction_names[n.f] << "(t" << n.a << ", axis " << n.axis << (n.keepdims ? ", keepdims)" : ")");
        break;
      case top::softmax:
        os << "softmax(t" << n.a << ", axis " << n.axis << ")";
        break;
      case top::log_softmax:
        os << "log_softmax(t" << n.a << ", axis " << n.axis << ")";
        break;
      case top::matmul:
        os << "matmul(t" << n.a << ", t" << n.b << (n.transpose_b ? "^T)" : ")");
        break;
      case top::matmul_const:
        os << "matmul(t" << n.a << ", ";
        values(n.w);
        os << ")";
        break;
      case top::transpose:
        os << "t" << n.a << "^T";
        break;
      case top::flatten:
        os << "t" << n.a << ".reshape(-1)";
        break;
      case top::scaled_sum:
        os << (n.f == 0 ? "sum" : "mean") << "(t" << n.a << " * s + square(t" << n.a << " - s)), s = t" << n.b
           << ".item()";
        break;
      case top::concat:
        os << "concat({t" << n.a << ", t" << n.b << "}, axis " << n.axis << ")";
        break;
      case top::stencil:
        os << n.k << " * l - r + (l - 0.25 * r) / 2, l, r = t" << n.a << "[0 : d-1], t" << n.a << "[1 : d] on axis "
           << n.axis << " (+ t" << n.b << ".item() if one element)";
        break;
      case top::linalg: {
        static char const* const linalg_names[] = {"solve(M, t_b or a)",  "inv(M)",      "det(M)",
                                                   "logdet(G)",           "cholesky(G)", "matrix_exp(T / 2)",
                                                   "slogdet(M).logabsdet"};
        os << "linalg " << linalg_names[n.f] << " of a = t" << n.a << ", b = t" << n.b
           << " (T = tanh(a), M = I + 0.1 T, G = T T^T + I)";
        break;
      }
      case top::count:
        break;
    }
    os << "\n";
  }
  os << "loss = ";
  for (std::size_t s = 0; s < p.sinks.size(); ++s) {
    os << (s ? " + " : "") << "sum(t" << p.sinks[s] << " * ";
    values(p.weights[s]);
    os << ")";
  }
  os << "\n";
  os.precision(old);
  return os;
}

// ---- the generator --------------------------------------------------------------------------

inline bool broadcastable(shape const& a, shape const& b) {
  std::size_t const r = std::max(a.rank(), b.rank());
  for (std::size_t i = 0; i < r; ++i) {
    std::size_t const da = i < a.rank() ? a[a.rank() - 1 - i] : 1, db = i < b.rank() ? b[b.rank() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return false;
  }
  return true;
}

template <class Source>  // rng_source, or the fuzzer's byte_source
tensor<double> random_tensor(Source& src, shape const& sh, double lo, double hi) {
  tensor<double> t(sh);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = src.uniform(lo, hi);
  return t;
}

/// A random program. A candidate node is accepted if every element of its value at the inputs
/// is finite and within [-30, 30] (and a norm is at least 0.1: away from its kink at zero).
template <class Source>  // rng_source, or the fuzzer's byte_source
tprogram generate(Source& src, unsigned max_nodes = 16) {
  tprogram p;
  std::size_t const m = 1 + src.pick(3), n = 1 + src.pick(4);
  shape const input_shapes[] = {shape{m, n}, shape{n}, shape{1}, shape{m, 1}, shape{}, shape{n, m}};
  unsigned const n_in = 1 + src.pick(3);
  for (unsigned i = 0; i < n_in; ++i)
    p.x.push_back(random_tensor(src, i == 0 ? shape{m, n} : input_shapes[src.pick(6)], -1.5, 1.5));
  std::vector<tensor<double>> val = p.x;
  std::vector<unsigned> uses(n_in, 0);
  auto operand = [&]() -> std::uint16_t {
    auto const k = static_cast<unsigned>(val.size());
    return static_cast<std::uint16_t>(src.pick(2) == 0 ? k - 1 : src.pick(k));
  };
  unsigned const n_nodes = 1 + src.pick(max_nodes);
  for (unsigned i = 0; i < n_nodes; ++i) {
    tnode nd;
    bool ok = false;
    for (int attempt = 0; attempt < 32 && !ok; ++attempt) {
      nd = tnode{};
      nd.o = static_cast<top>(src.pick(static_cast<unsigned>(top::count)));
      nd.a = operand();
      shape const& sa = val[nd.a].shape();
      switch (nd.o) {
        case top::unary:
          nd.f = static_cast<std::uint8_t>(src.pick(static_cast<unsigned>(unary_fn::count)));
          break;
        case top::binary: {
          nd.f = static_cast<std::uint8_t>(src.pick(static_cast<unsigned>(binary_fn::count)));
          nd.b = operand();
          if (!broadcastable(sa, val[nd.b].shape())) continue;
          break;
        }
        case top::affine:
          nd.k = src.uniform(-2, 2);
          break;
        case top::scale_by: {
          nd.b = operand();
          if (val[nd.b].size() != 1) continue;
          break;
        }
        case top::reduce_all:
          nd.f = static_cast<std::uint8_t>(src.pick(static_cast<unsigned>(reduction::count)));
          break;
        case top::reduce_axis:
        case top::softmax:
        case top::log_softmax:
          if (sa.rank() == 0) continue;
          nd.f = static_cast<std::uint8_t>(src.pick(static_cast<unsigned>(reduction::count)));
          nd.axis = static_cast<long>(src.pick(static_cast<unsigned>(sa.rank())));
          if (src.pick(2)) nd.axis -= static_cast<long>(sa.rank());  // negative axes too
          nd.keepdims = src.pick(2);
          break;
        case top::matmul: {
          nd.b = operand();
          shape const& sb = val[nd.b].shape();
          nd.transpose_b = sb.rank() == 2 && src.pick(2);
          if (sa.rank() < 1 || sa.rank() > 2 || sb.rank() < 1 || sb.rank() > 2) continue;
          std::size_t const k_b = nd.transpose_b ? sb[1] : sb[0];
          if (sa.back() != k_b) continue;
          break;
        }
        case top::matmul_const: {
          if (sa.rank() < 1 || sa.rank() > 2) continue;
          nd.w = random_tensor(src, shape{sa.back(), 1 + static_cast<std::size_t>(src.pick(4))}, -1, 1);
          break;
        }
        case top::transpose:
          if (sa.rank() != 2) continue;
          break;
        case top::flatten:
          break;
        case top::scaled_sum: {
          nd.f = static_cast<std::uint8_t>(src.pick(2));
          nd.b = operand();
          if (val[nd.b].size() != 1) continue;
          break;
        }
        case top::concat: {
          if (sa.rank() == 0) continue;
          nd.axis = static_cast<long>(src.pick(static_cast<unsigned>(sa.rank())));
          nd.b = operand();
          shape const& sb = val[nd.b].shape();
          bool fits = sb.rank() == sa.rank();
          for (std::size_t d = 0; fits && d < sa.rank(); ++d)
            fits = d == static_cast<std::size_t>(nd.axis) || sa[d] == sb[d];
          if (!fits) nd.b = nd.a;
          if (src.pick(2)) nd.axis -= static_cast<long>(sa.rank());
          break;
        }
        case top::stencil: {
          if (sa.rank() == 0) continue;
          nd.axis = static_cast<long>(src.pick(static_cast<unsigned>(sa.rank())));
          if (sa[static_cast<std::size_t>(nd.axis)] < 2) continue;
          nd.k = src.uniform(-2, 2);
          nd.b = operand();
          break;
        }
        case top::linalg: {
          if (sa.rank() != 2 || sa[0] != sa[1] || sa[0] > 4) continue;
          nd.f = static_cast<std::uint8_t>(src.pick(static_cast<unsigned>(linalg_fn::count)));
          nd.b = operand();
          break;
        }
        case top::count:
          continue;
      }
      tensor<double> const r = apply_tnode(nd, val);
      ok = r.size() <= 16;
      for (double e : r) ok = ok && std::isfinite(e) && std::abs(e) <= 30;
      if (ok && nd.o == top::reduce_all && static_cast<reduction>(nd.f) == reduction::norm) ok = r[0] >= 0.1;
      if (ok && nd.o == top::reduce_axis && static_cast<reduction>(nd.f) == reduction::norm)
        for (double e : r) ok = ok && e >= 0.1;
    }
    if (!ok) {  // tanh of the latest value is always admissible
      nd = tnode{};
      nd.f = static_cast<std::uint8_t>(unary_fn::tanh);
      nd.a = static_cast<std::uint16_t>(val.size() - 1);
    }
    ++uses[nd.a];
    if (nd.o == top::binary || nd.o == top::scale_by || nd.o == top::matmul || nd.o == top::scaled_sum ||
        nd.o == top::concat || (nd.o == top::stencil && val[nd.b].size() == 1))
      ++uses[nd.b];
    val.push_back(apply_tnode(nd, val));
    p.nodes.push_back(std::move(nd));
    uses.push_back(0);
  }
  for (std::size_t i = 0; i < val.size(); ++i)
    if (uses[i] == 0 && (i >= n_in || src.pick(4) == 0)) {  // unused inputs: usually left out (zero gradient)
      p.sinks.push_back(static_cast<std::uint16_t>(i));
      p.weights.push_back(random_tensor(src, val[i].shape(), -1, 1));
    }
  return p;
}

// ---- every mode on one program --------------------------------------------------------------

struct tderivatives {
  double value = 0;
  std::vector<double> grad;  // every input's elements, one after the other
};

inline double value(tprogram const& p, std::vector<tensor<double>> const& x) { return run<double>(p, x); }

inline std::size_t n_elements(std::vector<tensor<double>> const& x) {
  std::size_t n = 0;
  for (auto const& t : x) n += t.size();
  return n;
}

/// The inputs with element `flat` (counting through all inputs) moved by d.
inline std::vector<tensor<double>> moved(std::vector<tensor<double>> x, std::size_t flat, double d) {
  for (auto& t : x) {
    if (flat < t.size()) {
      t[flat] += d;
      break;
    }
    flat -= t.size();
  }
  return x;
}

/// Reverse: one recording of tensor<var<double>>, one sweep.
inline tderivatives reverse_gradient(tprogram const& p, std::vector<tensor<double>> const& x) {
  using adx::var;
  adx::tape_scope<var<double>> scope;
  std::vector<tensor<var<double>>> xs;
  for (auto const& t : x) xs.emplace_back(t);  // independent variables
  var<double> y = run(p, xs);
  adx::backward(y);
  tderivatives d{y.value(), {}};
  for (auto const& t : xs)
    for (auto const& e : t) d.grad.push_back(e.adjoint());
  return d;
}

/// Forward: one pass of tensor<dual<double>> per input element.
inline tderivatives forward_gradient(tprogram const& p, std::vector<tensor<double>> const& x) {
  using adx::dual;
  tderivatives d;
  std::size_t const n = n_elements(x);
  for (std::size_t e = 0; e < n; ++e) {
    std::vector<tensor<dual<double>>> xs;
    std::size_t first = 0;  // flat position of the input's first element
    for (auto const& t : x) {
      tensor<dual<double>> td(t);
      if (e >= first && e < first + t.size()) td[e - first] = dual<double>(t[e - first], 1.0);
      first += t.size();
      xs.push_back(td);
    }
    dual<double> y = run(p, xs);
    d.value = y.value();
    d.grad.push_back(y.tangent());
  }
  return d;
}

/// Forward over reverse: H v by one recording of tensor<var<dual<double>>> and one sweep.
inline std::vector<double> hvp(tprogram const& p, std::vector<tensor<double>> const& x, std::vector<double> const& v) {
  using adx::dual, adx::var;
  adx::tape_scope<var<dual<double>>> scope;
  std::vector<tensor<var<dual<double>>>> xs;
  std::size_t k = 0;
  for (auto const& t : x) {
    tensor<var<dual<double>>> tv(t.shape());
    for (std::size_t i = 0; i < t.size(); ++i) tv[i] = var<dual<double>>(dual<double>(t[i], v[k++]));
    xs.push_back(tv);
  }
  var<dual<double>> y = run(p, xs);
  adx::backward(y);
  std::vector<double> out;
  for (auto const& t : xs)
    for (auto const& e : t) out.push_back(e.adjoint().tangent());
  return out;
}

/// Evaluates p in every mode and compares (tolerances as for scalar programs):
///   loss:     tensor<var>, tensor<dual> = tensor<double>                     (tol.modes)
///   gradient: reverse (one sweep) = forward (one pass per input element)     (tol.modes)
///             = central differences of the tensor<double> loss               (tol.fd)
///   H v:      forward over reverse = central differences of the reverse gradient along v (tol.fd)
inline programs::report check_tensor_program(tprogram const& p, std::uint64_t direction_seed,
                                             programs::tolerances const& tol = {}) {
  namespace pd = programs::detail;
  std::ostringstream out;
  programs::report r;
  auto const& x = p.x;
  std::size_t const n = n_elements(x);
  double const f = value(p, x);
  tderivatives const rev = reverse_gradient(p, x), fwd = forward_gradient(p, x);
  pd::compare(r, out, "loss", "tensor<var>", {rev.value}, "tensor<double>", {f}, tol.modes);
  pd::compare(r, out, "loss", "tensor<dual>", {fwd.value}, "tensor<double>", {f}, tol.modes);
  pd::compare(r, out, "gradient", "tensor<dual>", fwd.grad, "tensor<var>", rev.grad, tol.modes);
  // finite differences along each element: the flat coordinates of all inputs
  std::vector<double> flat;
  for (auto const& t : x)
    for (double e : t) flat.push_back(e);
  auto unflatten = [&](std::vector<double> const& xs) {
    std::vector<tensor<double>> ts = x;
    std::size_t k = 0;
    for (auto& t : ts)
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = xs[k++];
    return ts;
  };
  auto const fd = programs::fd_jacobian(
      [&](std::vector<double> const& xs) { return std::vector<double>{value(p, unflatten(xs))}; }, flat, 1);
  pd::compare(r, out, "gradient", "tensor<var>", rev.grad, "finite differences", fd.d, tol.fd, &fd.err);
  // H v against differences of the reverse gradient along v
  rng_source src(direction_seed);
  std::vector<double> v(n);
  for (double& e : v) e = src.uniform(-1, 1);
  auto const hv = hvp(p, x, v);
  auto const dir = programs::fd_jacobian(
      [&](std::vector<double> const& t) {
        std::vector<double> xs = flat;
        for (std::size_t i = 0; i < n; ++i) xs[i] += t[0] * v[i];
        return reverse_gradient(p, unflatten(xs)).grad;
      },
      std::vector<double>{0.0}, n);
  pd::compare(r, out, "Hessian-vector product", "tensor<var<dual>>", hv, "finite differences of the gradient", dir.d,
              tol.fd, &dir.err);
  r.failures = out.str();
  return r;
}

}  // namespace adx_test::tensor_programs
