// Test support: random scalar programs. A program is data (input values and a list of nodes,
// each an elementary operation over earlier values), built by a generator from any source of
// choices (a seeded std::mt19937_64 for the test suite, the fuzzer's bytes for libFuzzer) and
// evaluated by one template interpreter for every scalar type. check_program evaluates the SAME
// program in every mode and nesting combination and compares their values, gradients and
// Hessians with each other and with finite differences.
//
// Every operation keeps its operands inside its domain: the generator evaluates each candidate
// node at the program's point and near it and accepts it only if its operands keep a margin
// from the function's singular points and kinks (log of at least 0.2, no division by less than
// 0.25, atan2 away from the origin and its branch cut, max of operands at least 0.05 apart,
// ...), its value stays within [-100, 100], and it does not turn rounding noise into a
// derivative (see generator_options and generate). So finite differences are meaningful and
// every mode must agree to rounding. With generator_options::domains false there are no such
// limits (for the fuzzer's check that NaN and infinities propagate without a crash).
#pragma once

#include <adx/adx.hpp>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace adx_test::programs {

// ---- sources of choices ---------------------------------------------------------------------

/// Choices from a seeded 64-bit Mersenne twister (reproducible on every platform: the
/// conversions to choices below are our own, not the standard distributions).
struct rng_source {
  std::mt19937_64 gen;
  explicit rng_source(std::uint64_t seed) : gen(seed) {}
  unsigned pick(unsigned n) { return static_cast<unsigned>(gen() % n); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(gen() >> 11) * 0x1.0p-53; }
};

/// Choices read from bytes (a fuzzer's input): one byte per pick, two per number; zeros once
/// the bytes run out.
struct byte_source {
  std::uint8_t const* data;
  std::size_t size, pos = 0;
  unsigned byte() { return pos < size ? data[pos++] : 0u; }
  unsigned pick(unsigned n) { return byte() % n; }
  double uniform(double lo, double hi) {
    unsigned const v = byte() << 8 | byte();
    return lo + (hi - lo) * static_cast<double>(v) / 65535.0;
  }
};

// ---- programs -------------------------------------------------------------------------------

/// The operations. a, b, c name operand values, k the node's constant.
enum class op : std::uint8_t {
  // two operands
  add,      // a + b
  sub,      // a - b
  mul,      // a * b
  div,      // a / b                   |b| >= 0.25
  div_pos,  // a / (1 + b*b)
  pow,      // pow(a, b)               a >= 0.2
  pow_pos,  // pow(1 + a*a, b)
  atan2,    // atan2(a, b)             hypot(a, b) >= 0.25, not within 0.25 of the branch cut
  hypot,    // hypot(a, b)             hypot(a, b) >= 0.25
  max,      // max(a, b)               |a - b| >= 0.05
  min,      // min(a, b)               |a - b| >= 0.05
  // three operands (one statement each, operands repeated inside it)
  fma,  // a * b + c
  mix,  // a * sin(b) - c / (2 + cos(a))
  // one operand
  neg,       // -a
  exp,       // exp(a)
  expm1,     // expm1(a)
  exp2,      // exp2(a)
  log,       // log(a)                  a >= 0.2
  log_pos,   // log(1 + a*a)
  log1p,     // log1p(a)                a >= -0.8
  log2,      // log2(a)                 a >= 0.2
  log10,     // log10(a)                a >= 0.2
  sqrt,      // sqrt(a)                 a >= 0.2
  sqrt_pos,  // sqrt(0.5 + a*a)
  cbrt,      // cbrt(a)                 |a| >= 0.2
  sin,       // sin(a)
  cos,       // cos(a)
  tan,       // tan(a)                  |cos a| >= 0.25
  asin,      // asin(a)                 |a| <= 0.8
  acos,      // acos(a)                 |a| <= 0.8
  atan,      // atan(a)
  sinh,      // sinh(a)
  cosh,      // cosh(a)
  tanh,      // tanh(a)
  asinh,     // asinh(a)
  acosh,     // acosh(a)                a >= 1.2
  atanh,     // atanh(a)                |a| <= 0.8
  erf,       // erf(a)
  erfc,      // erfc(a)
  lgamma,    // lgamma(a)               0.2 <= a <= 20
  tgamma,    // tgamma(a)               0.2 <= a <= 5
  digamma,   // digamma(a)              a >= 0.3
  abs,       // abs(a)                  |a| >= 0.05
  square,    // a * a
  sin_mul,   // sin(a) * a
  affine,    // k * a + 1
  pow_k,     // pow(a, k), k in [-2.5, 2.5]   a >= 0.2
  pow_int,   // pow(a, k), k in {2, 3, 4}
  k_pow,     // pow(k, a), k in [0.3, 3]
  count
};
inline constexpr unsigned n_ops = static_cast<unsigned>(op::count);

constexpr unsigned arity(op o) {
  if (o < op::fma) return 2;
  if (o < op::neg) return 3;
  return 1;
}

struct node {
  op o = op::sin;
  std::uint16_t a = 0, b = 0, c = 0;  // operand values (inputs first, then nodes)
  double k = 0;                       // the constant, for the operations that have one
};

/// Values 0 .. n_inputs-1 are the inputs x; value n_inputs + i is node i; the last is the output.
struct program {
  std::vector<double> x;
  std::vector<node> nodes;

  std::size_t n_inputs() const { return x.size(); }
  std::size_t n_values() const { return x.size() + nodes.size(); }
};

/// Prints as v<index>.
struct value_name {
  unsigned i;
  friend std::ostream& operator<<(std::ostream& os, value_name v) { return os << 'v' << v.i; }
};

inline std::ostream& operator<<(std::ostream& os, program const& p) {
  auto const old = os.precision(17);
  for (std::size_t i = 0; i < p.x.size(); ++i) os << "v" << i << " = " << p.x[i] << "  (input)\n";
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    node const& n = p.nodes[i];
    value_name const a{n.a}, b{n.b}, c{n.c};
    os << "v" << p.x.size() + i << " = ";
    switch (n.o) {
      case op::add:
        os << a << " + " << b;
        break;
      case op::sub:
        os << a << " - " << b;
        break;
      case op::mul:
        os << a << " * " << b;
        break;
      case op::div:
        os << a << " / " << b;
        break;
      case op::div_pos:
        os << a << " / (1 + " << b << "*" << b << ")";
        break;
      case op::pow:
        os << "pow(" << a << ", " << b << ")";
        break;
      case op::pow_pos:
        os << "pow(1 + " << a << "*" << a << ", " << b << ")";
        break;
      case op::atan2:
        os << "atan2(" << a << ", " << b << ")";
        break;
      case op::hypot:
        os << "hypot(" << a << ", " << b << ")";
        break;
      case op::max:
        os << "max(" << a << ", " << b << ")";
        break;
      case op::min:
        os << "min(" << a << ", " << b << ")";
        break;
      case op::fma:
        os << a << " * " << b << " + " << c;
        break;
      case op::mix:
        os << a << " * sin(" << b << ") - " << c << " / (2 + cos(" << a << "))";
        break;
      case op::neg:
        os << "-" << a;
        break;
      case op::log_pos:
        os << "log(1 + " << a << "*" << a << ")";
        break;
      case op::sqrt_pos:
        os << "sqrt(0.5 + " << a << "*" << a << ")";
        break;
      case op::square:
        os << a << " * " << a;
        break;
      case op::sin_mul:
        os << "sin(" << a << ") * " << a;
        break;
      case op::affine:
        os << n.k << " * " << a << " + 1";
        break;
      case op::pow_k:
      case op::pow_int:
        os << "pow(" << a << ", " << n.k << ")";
        break;
      case op::k_pow:
        os << "pow(" << n.k << ", " << a << ")";
        break;
      default: {
        static char const* const names[] = {"exp",  "expm1",  "exp2",   "log",     "log_pos", "log1p", "log2",  "log10",
                                            "sqrt", "",       "cbrt",   "sin",     "cos",     "tan",   "asin",  "acos",
                                            "atan", "sinh",   "cosh",   "tanh",    "asinh",   "acosh", "atanh", "erf",
                                            "erfc", "lgamma", "tgamma", "digamma", "abs"};
        os << names[static_cast<unsigned>(n.o) - static_cast<unsigned>(op::exp)] << "(" << a << ")";
      }
    }
    os << "\n";
  }
  os.precision(old);
  return os;
}

inline std::string to_string(program const& p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

// ---- the interpreter ------------------------------------------------------------------------

// max and min for plain numbers (std::max would also match AD scalars, ambiguously with adx's),
// with adx's semantics (torch.maximum / torch.minimum): NaN if either argument is NaN.
template <std::floating_point T>
T max(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? b : a);
}
template <std::floating_point T>
T min(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? a + b : (b < a ? b : a);
}
inline double digamma(double a) { return adx::digamma(a); }
inline long double digamma(long double a) { return adx::digamma(a); }

/// One node's value in scalar type S (a number, a dual, a var, nested): each node is one
/// assignment, so for var<T> one tape statement holding the partials of its whole expression.
template <class S>
S apply_node(node const& n, std::vector<S> const& v) {
  using std::abs, std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atan2, std::atanh, std::cbrt, std::cos,
      std::cosh, std::erf, std::erfc, std::exp, std::exp2, std::expm1, std::hypot, std::lgamma, std::log, std::log10,
      std::log1p, std::log2, std::pow, std::sin, std::sinh, std::sqrt, std::tan, std::tanh, std::tgamma;
  S const& a = v[n.a];
  S const& b = v[n.b];
  S const& c = v[n.c];
  double const k = n.k;
  switch (n.o) {
    case op::add:
      return S(a + b);
    case op::sub:
      return S(a - b);
    case op::mul:
      return S(a * b);
    case op::div:
      return S(a / b);
    case op::div_pos:
      return S(a / (1.0 + b * b));
    case op::pow:
      return S(pow(a, b));
    case op::pow_pos:
      return S(pow(1.0 + a * a, b));
    case op::atan2:
      return S(atan2(a, b));
    case op::hypot:
      return S(hypot(a, b));
    case op::max:
      return S(max(a, b));
    case op::min:
      return S(min(a, b));
    case op::fma:
      return S(a * b + c);
    case op::mix:
      return S(a * sin(b) - c / (2.0 + cos(a)));
    case op::neg:
      return S(-a);
    case op::exp:
      return S(exp(a));
    case op::expm1:
      return S(expm1(a));
    case op::exp2:
      return S(exp2(a));
    case op::log:
      return S(log(a));
    case op::log_pos:
      return S(log(1.0 + a * a));
    case op::log1p:
      return S(log1p(a));
    case op::log2:
      return S(log2(a));
    case op::log10:
      return S(log10(a));
    case op::sqrt:
      return S(sqrt(a));
    case op::sqrt_pos:
      return S(sqrt(0.5 + a * a));
    case op::cbrt:
      return S(cbrt(a));
    case op::sin:
      return S(sin(a));
    case op::cos:
      return S(cos(a));
    case op::tan:
      return S(tan(a));
    case op::asin:
      return S(asin(a));
    case op::acos:
      return S(acos(a));
    case op::atan:
      return S(atan(a));
    case op::sinh:
      return S(sinh(a));
    case op::cosh:
      return S(cosh(a));
    case op::tanh:
      return S(tanh(a));
    case op::asinh:
      return S(asinh(a));
    case op::acosh:
      return S(acosh(a));
    case op::atanh:
      return S(atanh(a));
    case op::erf:
      return S(erf(a));
    case op::erfc:
      return S(erfc(a));
    case op::lgamma:
      return S(lgamma(a));
    case op::tgamma:
      return S(tgamma(a));
    case op::digamma:
      return S(digamma(a));
    case op::abs:
      return S(abs(a));
    case op::square:
      return S(a * a);
    case op::sin_mul:
      return S(sin(a) * a);
    case op::affine:
      return S(k * a + 1.0);
    case op::pow_k:
    case op::pow_int:
      return S(pow(a, k));
    case op::k_pow:
      return S(pow(k, a));
    case op::count:
      break;
  }
  return S(a);
}

/// Runs the program on inputs xs (already of type S: independent variables, seeded duals, ...).
template <class S>
S run(program const& p, std::vector<S> const& xs) {
  std::vector<S> v(xs);
  v.reserve(p.n_values());
  for (node const& n : p.nodes) v.push_back(apply_node(n, v));
  return v.back();
}

// The interpreter at the scalar types the checks below use is compiled once, in
// support/programs.cpp, which every program including this header links: instantiated in each
// test file, it was most of their build time.
// clang-format off
#define ADX_TEST_PROGRAM_TYPES(X) \
  X(double) X(adx::var<double>) X(adx::dual<double>) X(adx::var<adx::var<double>>) \
  X(adx::var<adx::dual<double>>) X(adx::dual<adx::var<double>>) X(adx::dual<adx::dual<double>>)
// clang-format on
#define ADX_TEST_EXTERN_RUN(S) extern template S run<S>(program const&, std::vector<S> const&);
ADX_TEST_PROGRAM_TYPES(ADX_TEST_EXTERN_RUN)
#undef ADX_TEST_EXTERN_RUN

// ---- the generator --------------------------------------------------------------------------

/// Whether a node with these operand values keeps its margins (see the top of this file).
inline bool admissible(op o, double a, double b, double k, double r) {
  if (!std::isfinite(r) || std::abs(r) > 100) return false;
  switch (o) {
    case op::div:
      return std::abs(b) >= 0.25;
    case op::pow:
    case op::log:
    case op::log2:
    case op::log10:
    case op::sqrt:
    case op::pow_k:
      return a >= 0.2;
    case op::atan2:
      return std::hypot(a, b) >= 0.25 && !(b < 0 && std::abs(a) < 0.25);
    case op::hypot:
      return std::hypot(a, b) >= 0.25;
    case op::max:
    case op::min:
      return std::abs(a - b) >= 0.05;
    case op::log1p:
      return a >= -0.8;
    case op::cbrt:
      return std::abs(a) >= 0.2;
    case op::tan:
      return std::abs(std::cos(a)) >= 0.25;
    case op::asin:
    case op::acos:
    case op::atanh:
      return std::abs(a) <= 0.8;
    case op::acosh:
      return a >= 1.2;
    case op::lgamma:
      return a >= 0.2 && a <= 20;
    case op::tgamma:
      return a >= 0.2 && a <= 5;
    case op::digamma:
      return a >= 0.3;
    case op::abs:
      return std::abs(a) >= 0.05;
    default:
      (void)k;
      return true;
  }
}

struct generator_options {
  unsigned max_inputs = 4;
  unsigned max_nodes = 24;
  double radius = 2e-3;    ///< margins and bounds hold at x and at x +- radius along each input
  double max_slope = 100;  ///< bound on each value's first differences over the radius
  double max_curve = 1e4;  ///< bound on each value's second differences over the radius
  /// bound on each value's sensitivity: the sum over its operands of |partial| times the
  /// operand's sensitivity (inputs 1), a bound on its gradient that no cancellation lowers;
  /// it keeps rounding noise from being amplified without limit (2^40 (a - b) with a and b
  /// equal up to rounding)
  double max_sensitivity = 1e4;
  /// false: no margins or bounds at all (any domain error, overflow, NaN or infinity), for
  /// check_values_only
  bool domains = true;
};

/// A random program: inputs in [-1.5, 1.5], then nodes whose operands are earlier values
/// (usually recent ones, so that values are reused: shared subexpressions). A node is accepted
/// only if it is admissible at the inputs and at the points radius away along each input, with
/// bounded first and second differences there: so the finite differences of the checks (steps
/// of at most 2e-4) never cross a kink or a singularity and stay accurate. Nodes whose
/// derivative would be rounding noise are not generated either: a - b, a / b, atan2(a, b) of
/// equal numbers, sums that cancel exactly, values whose double evaluation is off by more than
/// 1e-13 relative from a long double one, sensitivities above max_sensitivity. Usually the
/// values no node used are summed into the output, so that everything computed matters;
/// otherwise they stay as dead code.
template <class Source>
program generate(Source& src, generator_options const& opt = {}) {
  program p;
  unsigned const n_in = 1 + src.pick(opt.max_inputs);
  for (unsigned i = 0; i < n_in; ++i) p.x.push_back(src.uniform(-1.5, 1.5));
  // the values at x (point 0) and at x + radius e_i (point 2i+1), x - radius e_i (point 2i+2)
  std::vector<std::vector<double>> val(1 + 2 * n_in, p.x);
  for (unsigned i = 0; i < n_in; ++i) {
    val[2 * i + 1][i] += opt.radius;
    val[2 * i + 2][i] -= opt.radius;
  }
  // the values at x once more in long double: a node whose double value is off by more than
  // 1e-13 relative is ill-conditioned there (rounding, such as 1 + a*a for a tiny a, or
  // cancellation), and finite differences of the double program would measure its noise
  std::vector<long double> exact(p.x.begin(), p.x.end());
  std::vector<unsigned> uses(n_in, 0);
  unsigned const n_nodes = 1 + src.pick(opt.max_nodes);
  auto operand = [&]() -> std::uint16_t {
    auto const n = static_cast<unsigned>(val[0].size());
    unsigned const how = src.pick(4);
    if (how < 2) return static_cast<std::uint16_t>(n - 1);                               // the latest value
    if (how == 2) return static_cast<std::uint16_t>(n - 1 - src.pick(std::min(n, 4u)));  // a recent one
    return static_cast<std::uint16_t>(src.pick(n));                                      // any
  };
  std::vector<double> sensitivity(n_in, 1.0);
  double candidate_sensitivity = 0;
  auto acceptable = [&](node const& n) {
    // Without domains every node is taken, whatever its arguments.
    if (!opt.domains) return true;
    // a - b, a / b and atan2(a, b) with a and b the same number (the same value, or the same
    // computation twice) are constants whose derivatives are zero only up to rounding noise;
    // so is a sum that cancels exactly: not generated
    double const r0 = apply_node(n, val[0]);
    double const a0 = val[0][n.a], b0 = val[0][n.b];
    if (a0 == b0 && (n.o == op::sub || n.o == op::div || n.o == op::atan2)) return false;
    if (r0 == 0 && (n.o == op::add || n.o == op::fma || n.o == op::mix)) return false;
    if (!admissible(n.o, a0, b0, n.k, r0)) return false;
    long double const re = apply_node(n, exact);
    if (!(std::abs(static_cast<long double>(r0) - re) <= 1e-13L * std::abs(re))) return false;
    candidate_sensitivity = 0;
    std::uint16_t const ops[] = {n.a, n.b, n.c};
    for (unsigned j = 0; j < arity(n.o); ++j) {
      bool repeated = false;
      for (unsigned i = 0; i < j; ++i) repeated |= ops[i] == ops[j];
      if (repeated) continue;
      std::vector<double> v = val[0];
      double const d = 1e-7 * std::max(1.0, std::abs(v[ops[j]]));
      v[ops[j]] += d;
      double const up = apply_node(n, v);
      v[ops[j]] -= 2 * d;
      double const partial = (up - apply_node(n, v)) / (2 * d);
      candidate_sensitivity += std::abs(partial) * sensitivity[ops[j]];
    }
    if (!(candidate_sensitivity <= opt.max_sensitivity)) return false;
    double const r2 = opt.radius * opt.radius;
    for (unsigned i = 0; i < n_in; ++i) {
      auto const& vp = val[2 * i + 1];
      auto const& vm = val[2 * i + 2];
      double const rp = apply_node(n, vp), rm = apply_node(n, vm);
      if (!admissible(n.o, vp[n.a], vp[n.b], n.k, rp) || !admissible(n.o, vm[n.a], vm[n.b], n.k, rm)) return false;
      if (std::abs(rp - rm) > 2 * opt.radius * opt.max_slope || std::abs(rp - 2 * r0 + rm) > r2 * opt.max_curve)
        return false;
    }
    return true;
  };
  auto append = [&](node const& n) {
    sensitivity.push_back(candidate_sensitivity);
    p.nodes.push_back(n);
    for (auto& v : val) v.push_back(apply_node(n, v));
    exact.push_back(apply_node(n, exact));
    uses.push_back(0);
  };
  for (unsigned i = 0; i < n_nodes; ++i) {
    node n;
    bool ok = false;
    for (int attempt = 0; attempt < 16 && !ok; ++attempt) {
      n.o = static_cast<op>(src.pick(n_ops));
      n.a = operand();
      n.b = operand();
      n.c = operand();
      n.k = n.o == op::affine    ? src.uniform(-2, 2)
            : n.o == op::pow_k   ? src.uniform(-2.5, 2.5)
            : n.o == op::pow_int ? 2.0 + src.pick(3)
            : n.o == op::k_pow   ? src.uniform(0.3, 3)
                                 : 0.0;
      ok = acceptable(n);
    }
    if (!ok) {  // as good as its operand
      n = node{op::neg, static_cast<std::uint16_t>(val[0].size() - 1), 0, 0, 0.0};
      candidate_sensitivity = sensitivity.back();
    }
    unsigned const ar = arity(n.o);
    ++uses[n.a];
    if (ar > 1) ++uses[n.b];
    if (ar > 2) ++uses[n.c];
    append(n);
  }
  if (src.pick(4) != 0) {  // sum what nothing used into the output
    auto acc = static_cast<std::uint16_t>(val[0].size() - 1);
    std::size_t const last = acc;
    for (std::size_t i = n_in; i < last; ++i)
      if (uses[i] == 0) {
        candidate_sensitivity = sensitivity[acc] + sensitivity[i];
        append(node{op::add, acc, static_cast<std::uint16_t>(i), 0, 0.0});
        acc = static_cast<std::uint16_t>(val[0].size() - 1);
      }
  }
  return p;
}

// ---- every mode on one program --------------------------------------------------------------

struct tolerances {
  /// Between modes, relative to the largest entry compared (at least 1): values and gradients,
  /// and Hessians (second order carries more rounding: an exactly cancelling path such as
  /// atan2(u, u) leaves noise that the later operations amplify).
  double modes = 1e-12;
  double modes2 = 1e-11;
  /// Against finite differences, likewise; plus the finite differences' own error estimate.
  double fd = 1e-6;
};

/// Value, gradient and Hessian (row-major) as one mode computes them (empty where it does not).
struct derivatives {
  char const* mode;
  double value;
  std::vector<double> grad, hess;
};

/// f at x in plain double arithmetic.
inline double value(program const& p, std::vector<double> const& x) { return run<double>(p, x); }

/// Finite differences with an estimate of their error.
struct fd_result {
  std::vector<double> d;    ///< the derivatives
  std::vector<double> err;  ///< |D(h) - D(h/2)|, which bounds the error of d generously
};

/// Central differences of g (R^n -> R^m) at x, an m x n matrix (row-major by output): the
/// 5-point stencil D at steps h = 1e-4 max(1, |x_i|) and h/2, combined by Richardson
/// extrapolation (16 D(h/2) - D(h)) / 15. The stencil's error is O(h^4), so |D(h) - D(h/2)| is
/// about 15 times the error of D(h/2) and far above that of the extrapolation.
template <class G>
fd_result fd_jacobian(G const& g, std::vector<double> const& x, std::size_t m) {
  std::size_t const n = x.size();
  fd_result r{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (std::size_t i = 0; i < n; ++i) {
    auto stencil = [&](double h) {
      auto at = [&](double d) {
        auto xs = x;
        xs[i] += d;
        return g(xs);
      };
      auto const p2 = at(2 * h), p1 = at(h), m1 = at(-h), m2 = at(-2 * h);
      std::vector<double> D(m);
      for (std::size_t k = 0; k < m; ++k) D[k] = (-p2[k] + 8 * p1[k] - 8 * m1[k] + m2[k]) / (12 * h);
      return D;
    };
    double const h = 1e-4 * std::max(1.0, std::abs(x[i]));
    auto const coarse = stencil(h), fine = stencil(h / 2);
    for (std::size_t k = 0; k < m; ++k) {
      r.d[k * n + i] = (16 * fine[k] - coarse[k]) / 15;
      r.err[k * n + i] = std::abs(fine[k] - coarse[k]);
    }
  }
  return r;
}

/// Reverse mode: value and gradient in one sweep.
inline derivatives reverse_gradient(program const& p, std::vector<double> const& x) {
  using adx::var;
  adx::tape_scope<var<double>> scope;
  std::vector<var<double>> xs(x.begin(), x.end());
  var<double> y = run(p, xs);
  adx::backward(y);
  derivatives d{"var", y.value(), {}, {}};
  for (auto const& xi : xs) d.grad.push_back(xi.adjoint());
  return d;
}

/// Forward mode: one dual pass per input.
inline derivatives forward_gradient(program const& p, std::vector<double> const& x) {
  using adx::dual;
  derivatives d{"dual", 0, {}, {}};
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<dual<double>> xs;
    for (std::size_t j = 0; j < x.size(); ++j) xs.emplace_back(x[j], i == j ? 1.0 : 0.0);
    dual<double> y = run(p, xs);
    d.value = y.value();
    d.grad.push_back(y.tangent());
  }
  return d;
}

/// Reverse over reverse: one recording, then one sweep per gradient entry.
inline derivatives hessian_var_var(program const& p, std::vector<double> const& x) {
  using adx::var;
  std::size_t const n = x.size();
  adx::tape_scope<var<var<double>>> scope;
  std::vector<var<var<double>>> xs(x.begin(), x.end());
  var<var<double>> y = run(p, xs);
  adx::backward(y);
  std::vector<var<double>> g;
  for (auto const& xi : xs) g.push_back(xi.adjoint());
  derivatives d{"var<var>", adx::primal(y), {}, std::vector<double>(n * n)};
  for (std::size_t i = 0; i < n; ++i) {
    d.grad.push_back(g[i].value());
    adx::backward(g[i]);
    for (std::size_t j = 0; j < n; ++j) d.hess[i * n + j] = xs[j].value().adjoint();
  }
  return d;
}

/// Forward over reverse: one recording and sweep per direction (Hessian-vector products).
inline derivatives hessian_var_dual(program const& p, std::vector<double> const& x) {
  using adx::dual, adx::var;
  std::size_t const n = x.size();
  derivatives d{"var<dual>", 0, std::vector<double>(n), std::vector<double>(n * n)};
  for (std::size_t i = 0; i < n; ++i) {
    adx::tape_scope<var<dual<double>>> scope;
    std::vector<var<dual<double>>> xs;
    for (std::size_t j = 0; j < n; ++j) xs.emplace_back(dual<double>(x[j], i == j ? 1.0 : 0.0));
    var<dual<double>> y = run(p, xs);
    adx::backward(y);
    d.value = adx::primal(y);
    for (std::size_t j = 0; j < n; ++j) {
      d.grad[j] = xs[j].adjoint().value();
      d.hess[j * n + i] = xs[j].adjoint().tangent();
    }
  }
  return d;
}

/// Reverse over forward: one tangent pass per direction, then a sweep of the tangent.
inline derivatives hessian_dual_var(program const& p, std::vector<double> const& x) {
  using adx::dual, adx::var;
  std::size_t const n = x.size();
  derivatives d{"dual<var>", 0, std::vector<double>(n), std::vector<double>(n * n)};
  adx::tape_scope<dual<var<double>>> scope;
  std::vector<var<double>> base(x.begin(), x.end());
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<dual<var<double>>> xs;
    for (std::size_t j = 0; j < n; ++j) xs.emplace_back(base[j], var<double>::constant(i == j ? 1.0 : 0.0));
    dual<var<double>> y = run(p, xs);
    var<double> t = y.tangent();
    adx::backward(t);
    d.value = adx::primal(y);
    d.grad[i] = t.value();
    for (std::size_t j = 0; j < n; ++j) d.hess[i * n + j] = base[j].adjoint();
  }
  return d;
}

/// Forward over forward: one pass per pair of directions.
inline derivatives hessian_dual_dual(program const& p, std::vector<double> const& x) {
  using adx::dual;
  using D2 = dual<dual<double>>;
  std::size_t const n = x.size();
  derivatives d{"dual<dual>", 0, std::vector<double>(n), std::vector<double>(n * n)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j) {
      std::vector<D2> xs;
      for (std::size_t k = 0; k < n; ++k)
        xs.emplace_back(dual<double>(x[k], k == i ? 1.0 : 0.0), dual<double>(k == j ? 1.0 : 0.0, 0.0));
      D2 y = run(p, xs);
      d.value = adx::primal(y);
      d.grad[i] = y.value().tangent();
      d.hess[i * n + j] = d.hess[j * n + i] = y.tangent().tangent();
    }
  return d;
}

/// What check_program did: the number of comparisons, how many of those against finite
/// differences needed the differences' own error estimate to pass, and a description of each
/// disagreement.
struct report {
  std::size_t comparisons = 0;
  std::size_t fd_loose = 0;
  std::string failures;
  bool ok() const { return failures.empty(); }
};

namespace detail {
inline double largest(std::vector<double> const& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}
/// Records where got and want differ by more than tol * (|want| + s) + slack[i], s the largest
/// |want| or 1 if that is smaller (an entry that is zero in exact arithmetic, such as the
/// derivative of atan2(x, x), is rounding noise the size of the terms that cancelled).
inline void compare(report& r, std::ostringstream& out, char const* what, char const* got_mode,
                    std::vector<double> const& got, char const* want_mode, std::vector<double> const& want, double tol,
                    std::vector<double> const* slack = nullptr) {
  double const scale = std::max(1.0, largest(want));
  r.comparisons += got.size();
  if (got.size() != want.size()) {
    out << what << ": " << got_mode << " has " << got.size() << " entries, " << want_mode << " " << want.size() << "\n";
    return;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    double const diff = std::abs(got[i] - want[i]), bound = tol * (std::abs(want[i]) + scale);
    double const extra = slack ? (*slack)[i] : 0.0;
    bool const ok = std::isfinite(got[i]) && diff <= bound + extra;
    r.fd_loose += ok && diff > bound;
    if (!ok)
      out << std::setprecision(17) << what << "[" << i << "]: " << got_mode << " " << got[i] << ", " << want_mode << " "
          << want[i] << " (difference " << diff << (slack ? ", finite-difference error estimate " : "")
          << (slack ? std::to_string(extra) : "") << ")\n";
  }
}
}  // namespace detail

/// Evaluates p in every mode and compares:
///   value:    every mode = double                                          (tol.modes)
///   gradient: dual (one pass per input) = var (one sweep) = the nested modes  (tol.modes)
///             = central differences of the double program                    (tol.fd)
///   Hessian:  var<dual> = dual<var> = dual<dual> = var<var>                (tol.modes2)
///             symmetric                                                    (tol.modes2)
///             = central differences of the var gradient                      (tol.fd)
inline report check_program(program const& p, tolerances const& tol = {}) {
  std::ostringstream out;
  report r;
  auto const& x = p.x;
  std::size_t const n = x.size();
  double const f = value(p, x);
  derivatives const modes[] = {reverse_gradient(p, x), forward_gradient(p, x), hessian_var_var(p, x),
                               hessian_var_dual(p, x), hessian_dual_var(p, x), hessian_dual_dual(p, x)};
  auto const& rev = modes[0];
  for (auto const& m : modes) {
    detail::compare(r, out, "value", m.mode, {m.value}, "double", {f}, tol.modes);
    detail::compare(r, out, "gradient", m.mode, m.grad, rev.mode, rev.grad, tol.modes);
  }
  auto const fd_grad =
      fd_jacobian([&](std::vector<double> const& xs) { return std::vector<double>{value(p, xs)}; }, x, 1);
  detail::compare(r, out, "gradient", rev.mode, rev.grad, "finite differences", fd_grad.d, tol.fd, &fd_grad.err);
  auto const& hvv = modes[2];
  for (std::size_t m = 3; m < std::size(modes); ++m)
    detail::compare(r, out, "Hessian", modes[m].mode, modes[m].hess, hvv.mode, hvv.hess, tol.modes2);
  std::vector<double> hvv_t(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) hvv_t[i * n + j] = hvv.hess[j * n + i];
  detail::compare(r, out, "Hessian symmetry", "H", hvv.hess, "H^T", hvv_t, tol.modes2);
  auto const fd_hess = fd_jacobian([&](std::vector<double> const& xs) { return reverse_gradient(p, xs).grad; }, x, n);
  detail::compare(r, out, "Hessian", hvv.mode, hvv.hess, "finite differences of the gradient", fd_hess.d, tol.fd,
                  &fd_hess.err);
  r.failures = out.str();
  return r;
}

/// For programs generated without domains: every mode runs (recording, sweeping, nesting) on
/// whatever values arise, NaN and infinities included, and must compute the same value as
/// double arithmetic (NaN where it is NaN, the same infinity). Derivatives are not compared:
/// at such points they legitimately differ between modes (0 * inf in one order, not in another).
inline report check_values_only(program const& p) {
  std::ostringstream out;
  report r;
  double const f = value(p, p.x);
  derivatives const modes[] = {reverse_gradient(p, p.x), forward_gradient(p, p.x), hessian_var_var(p, p.x),
                               hessian_var_dual(p, p.x), hessian_dual_var(p, p.x), hessian_dual_dual(p, p.x)};
  for (auto const& m : modes) {
    ++r.comparisons;
    bool const same = std::isnan(f)   ? std::isnan(m.value)
                      : std::isinf(f) ? m.value == f
                                      : std::isfinite(m.value) && std::abs(m.value - f) <= 1e-12 * (std::abs(f) + 1);
    if (!same) out << std::setprecision(17) << "value: " << m.mode << " " << m.value << ", double " << f << "\n";
  }
  r.failures = out.str();
  return r;
}

}  // namespace adx_test::programs
