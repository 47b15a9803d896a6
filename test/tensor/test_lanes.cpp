// The tensor loops on lanes (tensor/lanes.hpp, core/simd.hpp): with SLEEF, elementwise
// expressions over double and var<double> run several elements at a time. They must give the
// element-by-element loop's numbers: exactly for arithmetic and sqrt, within SLEEF's and glibc's
// accuracy (1 ulp each) for the transcendental functions, with the same edge cases; and the
// same partials (up to what a 1-ulp difference in a value makes of them), through sum() and
// mean() too, at every tensor size (the last lanes partly used). The functions are every rule
// of adx::all_unary_rules with a lane form (Rule::lanes). This file is also built for AVX2
// (adx_lanes_avx2_tests) where the machine has it.
#include <adx/adx.hpp>
#include <array>
#include <boost/mp11/algorithm.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "support/check.hpp"

using adx::tensor;
using adx::var;
using V = var<double>;

namespace {

using adx_test::ulps;
/// The same number up to `max_ulps`: both NaN, equal infinities, or finite and that close.
bool same_number(double a, double b, std::uint64_t max_ulps) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return ulps(a, b) <= max_ulps;
}

/// Derivatives from values 1 ulp apart: a rule such as tanh' = 1 - r^2 cancels, so the
/// difference is relative to the operands, not to the result (1e-12, beside 1e-15 absolute).
bool same_derivative(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) return same_number(a, b, 0);
  return adx_test::close(a, b, 1e-12, 1e-15);
}

/// How far apart two results may be: arithmetic and sqrt are exact on lanes (without FMA
/// contraction, which the scalar and lane loops may apply differently); SLEEF's functions and
/// glibc's are each within 1 ulp of the true value, so within 2 of each other.
#if defined(__FMA__)
constexpr std::uint64_t exact = 1;
#else
constexpr std::uint64_t exact = 0;
#endif
constexpr std::uint64_t transcendental = 2;

std::vector<double> values_in(std::size_t n, double lo, double hi, unsigned seed) {
  std::vector<double> v(n);
  std::uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = lo + (hi - lo) * static_cast<double>(s >> 11) * 0x1.0p-53;
  }
  return v;
}

/// A tensor of vars whose elements are made one by one (not one block): its expressions run
/// element by element, the reference for the lanes.
tensor<V> elementwise_variables(std::vector<double> const& x, adx::shape const& sh) {
  return tensor<V>::generate(sh, [&](std::size_t i) { return V(x[i]); });
}
tensor<V> elementwise_variables(std::vector<double> const& x) { return elementwise_variables(x, adx::shape{x.size()}); }

struct unary_case {
  char const* name;
  std::function<tensor<double>(tensor<double> const&)> on_tensor;
  std::function<tensor<V>(tensor<V> const&)> on_vars;
  std::function<double(double)> on_number;
  double lo, hi;
  std::uint64_t tolerance;
};

/// Rule's value at a number, as the element loop computes it.
template <class Rule>
double scalar_value(double x) {
  if constexpr (requires { Rule::value(x); })
    return Rule::value(x);
  else
    return Rule::template value_as<double>(x);
}

/// The rules whose lane form is exact: the same IEEE operations as the element loop.
template <class Rule>
constexpr bool exact_on_lanes =
    std::is_same_v<Rule, adx::detail::neg_rule> || std::is_same_v<Rule, adx::detail::sqrt_rule> ||
    std::is_same_v<Rule, adx::detail::square_rule>;

/// Every unary rule with a lane form (Rule::lanes), from adx::all_unary_rules: over [-3, 3]
/// (where some functions are outside their domain: NaN on both sides) and over [0.01, 10].
std::vector<unary_case> const& unary_cases() {
  static std::vector<unary_case> const cases = [] {
    std::vector<unary_case> out;
    boost::mp11::mp_for_each<adx::all_unary_rules>([&](auto rule) {
      using Rule = decltype(rule);
      if constexpr (requires { Rule::lanes; }) {
        if constexpr (Rule::lanes) {
          auto const on_tensor = [](tensor<double> const& t) {
            return tensor<double>(adx::detail::make_tensor_expr<Rule>(t));
          };
          auto const on_vars = [](tensor<V> const& t) { return tensor<V>(adx::detail::make_tensor_expr<Rule>(t)); };
          std::uint64_t const tolerance = exact_on_lanes<Rule> ? exact : transcendental;
          out.push_back({Rule::name, on_tensor, on_vars, scalar_value<Rule>, -3, 3, tolerance});
          out.push_back({Rule::name, on_tensor, on_vars, scalar_value<Rule>, 0.01, 10, tolerance});
        }
      }
    });
    return out;
  }();
  return cases;
}

}  // namespace

TEST_CASE("lanes: with SLEEF the element loops over double run on lanes") {
#if ADX_WITH_SLEEF && defined(__x86_64__)
  CHECK(ADX_LANES == 1);
#endif
#if ADX_LANES
  tensor<double> a{1.0, 2.0};
  tensor<V> const va(a);
  CHECK(adx::detail::lane_ready<double, decltype(a * sin(a) + 2)>);
  CHECK(adx::detail::lane_ready<V, decltype(va * sin(va) + a / 3)>);
  CHECK(!adx::detail::lane_ready<double, decltype(abs(a))>);  // abs has a branch: no lane form
  // sin on lanes is SLEEF's: the values of a tensor are those of detail::sin on lanes
  std::vector<double> const x = values_in(64, -3, 3, 1);
  tensor<double> const y = sin(tensor<double>(adx::shape{x.size()}, x));
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == sin(adx::detail::lanes(x[i]))[0]);
#endif
}

TEST_CASE("lanes: every function with a lane form gives the element-by-element value and derivative") {
  REQUIRE(unary_cases().size() >= 2 * 11);  // neg, square, sqrt, exp, expm1, log, log1p, sin, cos, tan, tanh
  for (unary_case const& c : unary_cases()) {
    for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 7u, 9u, 33u}) {
      INFO(std::string(c.name));  // a char const* alone is shown as a pointer
      CAPTURE(n);
      std::vector<double> const x = values_in(n, c.lo, c.hi, static_cast<unsigned>(n));
      tensor<double> const t(adx::shape{n}, x);
      tensor<double> const y = c.on_tensor(t);
      for (std::size_t i = 0; i < n; ++i) CHECK(same_number(y[i], c.on_number(x[i]), c.tolerance));

      adx::tape_scope<V> scope;
      tensor<V> const block(t), single = elementwise_variables(x);
      tensor<V> const yb = c.on_vars(block), ys = c.on_vars(single);
      V const lb = sum(yb * 1.5), ls = sum(ys * 1.5);
      adx::backward(lb);  // a sweep zeroes every adjoint first: read each gradient after its own
      tensor<double> const gb = adx::adjoints(block);
      adx::backward(ls);
      tensor<double> const gs = adx::adjoints(single);
      tensor<V> ynb;
      double sb = 0;
      {
        adx::no_grad off;  // not recorded: the same values
        ynb = c.on_vars(block);
        sb = sum(c.on_vars(block) * 1.5).val();
      }
      CHECK(same_number(sb, lb.val(), 0));  // (NaN outside a function's domain: both)
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(same_number(ynb[i].val(), y[i], 0));
        CHECK(same_number(yb[i].val(), y[i], 0));  // the same lanes for numbers and variables
        CHECK(same_number(ys[i].val(), c.on_number(x[i]), 0));
        INFO(x[i], " lanes ", gb[i], " elements ", gs[i]);
        CHECK(same_derivative(gb[i], gs[i]));
      }
    }
  }
}

// Sums add element i into partial sum i % 8 and the eight as ((s0+s4)+(s1+s5))+((s2+s6)+(s3+s7))
// (README, Tensors). The values below make every other order give another number.
TEST_CASE("lanes: every sum adds its elements in the documented order, on lanes and element by element") {
  auto documented = [](std::vector<double> const& x) {
    std::array<double, 8> p{};
    for (std::size_t i = 0; i < x.size(); ++i) p[i % 8] += x[i];
    return ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
  };
  auto running = [](std::vector<double> const& x) {
    double s = 0;
    for (double v : x) s += v;
    return s;
  };
  for (std::size_t n : {5u, 9u, 15u, 16u, 21u, 37u}) {
    CAPTURE(n);
    std::vector<double> x(n, 1.0);  // a running sum loses the ones next to 1e16
    x.front() = 1e16;
    x.back() = -1e16;
    double const want = documented(x);
    CHECK(want != running(x));  // the order shows
    tensor<double> const t(adx::shape{n}, x);
    CHECK(sum(t) == want);
    CHECK(sum(t * 1.0) == want);      // fused
    CHECK(sum(t, 0).item() == want);  // a line of an axis reduction
    CHECK(mean(t * 1.0) == want / double(n));
    {
      adx::tape_scope<V> scope;
      tensor<V> const block(t), single = elementwise_variables(x);
      CHECK(sum(block * 1.0).val() == want);   // recorded, on lanes
      CHECK(sum(single * 1.0).val() == want);  // recorded, element by element
      CHECK(sum(block).val() == want);
      adx::no_grad off;
      CHECK(sum(block * 1.0).val() == want);
    }
    // rows of 5 (a row operand: lanes start at indices that are not multiples of the width)
    if (n % 5 == 0) {
      tensor<double> const m(adx::shape{n / 5, 5}, x), row(adx::shape{5}, std::vector<double>(5, 0.0));
      CHECK(sum(m + row) == want);
      adx::tape_scope<V> scope;
      tensor<V> const vm(m);
      CHECK(sum(vm + row).val() == want);
    }
  }
}

TEST_CASE("lanes: a fused sum or mean of an expression keeps the element loop's order and partials") {
  for (std::size_t n : {1u, 3u, 4u, 6u, 17u, 1001u}) {
    CAPTURE(n);
    std::vector<double> const xa = values_in(n, -1, 1, 11), xb = values_in(n, -1, 1, 12), xc = values_in(n, -3, 3, 13),
                              xd = values_in(n, 1, 2, 14);
    tensor<double> const a(adx::shape{n}, xa), b(adx::shape{n}, xb), c(adx::shape{n}, xc), d(adx::shape{n}, xd);
    // arithmetic only: the fused sum is the sum of the evaluated tensor, in the same order
    CHECK(ulps(sum(a * b + c / d), sum(tensor<double>(a * b + c / d))) <= exact);

    adx::tape_scope<V> scope;
    V const s(0.75);  // one variable read by every element: its partials are summed
    tensor<V> const va(a), vb(b), vc(c), vd(d);
    tensor<V> const ea = elementwise_variables(xa), eb = elementwise_variables(xb), ec = elementwise_variables(xc),
                    ed = elementwise_variables(xd);
    auto program = [&](tensor<V> const& p, tensor<V> const& q, tensor<V> const& r, tensor<V> const& w) {
      return sum(p * q + sin(r) / w - s * exp(p * 0.5)) + mean(sqrt(w) * tanh(q) + log1p(w) * s);
    };
    V const l = program(va, vb, vc, vd);
    V const le = program(ea, eb, ec, ed);
    CHECK(adx_test::close(l.val(), le.val(), 1e-14, 1e-14));
    adx::backward(l);  // a sweep zeroes every adjoint first: read each gradient after its own
    double const gs = s.adjoint();
    std::vector<tensor<double>> g;
    for (tensor<V> const* x : {&va, &vb, &vc, &vd}) g.push_back(adx::adjoints(*x));
    adx::backward(le);
    CHECK(adx_test::close(gs, s.adjoint(), 1e-13, 1e-13));
    std::size_t k = 0;
    for (tensor<V> const* x : {&ea, &eb, &ec, &ed}) {
      tensor<double> const ge = adx::adjoints(*x);
      for (std::size_t i = 0; i < n; ++i) {
        INFO(k, " ", i, " lanes ", g[k][i], " elements ", ge[i]);
        CHECK(same_derivative(g[k][i], ge[i]));
      }
      ++k;
    }
  }
}

TEST_CASE("lanes: a row read by every row of the result (a bias) is read on lanes along each row") {
  for (std::size_t cols : {1u, 2u, 3u, 5u, 8u, 11u}) {
    CAPTURE(cols);
    std::size_t const rows = 3;
    std::vector<double> const xm = values_in(rows * cols, -2, 2, 21), xb = values_in(cols, -1, 1, 22);
    tensor<double> const m(adx::shape{rows, cols}, xm), b(adx::shape{cols}, xb);
    tensor<double> const y = tanh(m * 0.5 + b) + sin(b);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        double const want = std::tanh(xm[r * cols + c] * 0.5 + xb[c]) + std::sin(xb[c]);
        CHECK(same_number(y(r, c), want, 2 * transcendental));
      }
    CHECK(ulps(sum(m * b - b / 3), sum(tensor<double>(m * b - b / 3))) <= exact);

    adx::tape_scope<V> scope;
    tensor<V> const vm(m), vb(b);  // blocks: the bias is a block read row after row
    tensor<V> const em = elementwise_variables(xm, adx::shape{rows, cols}), eb = elementwise_variables(xb);
    auto program = [](tensor<V> const& p, tensor<V> const& q) {
      tensor<V> const h = tanh(p * 0.5 + q);        // an elementwise node
      return sum(h * q) + mean(exp(q * 0.25) * p);  // fused reductions
    };
    V const l = program(vm, vb);
    V const le = program(em, eb);
    CHECK(adx_test::close(l.val(), le.val(), 1e-14, 1e-14));
    adx::backward(l);
    tensor<double> const gm = adx::adjoints(vm), gb = adx::adjoints(vb);
    adx::backward(le);
    tensor<double> const gem = adx::adjoints(em), geb = adx::adjoints(eb);
    for (std::size_t i = 0; i < rows * cols; ++i) CHECK(same_derivative(gm.data()[i], gem.data()[i]));
    for (std::size_t c = 0; c < cols; ++c) CHECK(same_derivative(gb[c], geb[c]));
  }
}

TEST_CASE("lanes: edge cases give what the element loop gives (zeros, infinities, NaN, subnormals)") {
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // 709.7827128 and 1e308: SLEEF's exp and log1p give inf there (lanes take <cmath>'s)
  std::vector<double> const x{0.0, -0.0, inf, -inf, nan, 4.9e-324, -1.0, 1.0, 710.0, -750.0, 709.7827128, 1e300, 1e308};
  tensor<double> const t(adx::shape{x.size()}, x);
  for (unary_case const& c : unary_cases()) {
    INFO(std::string(c.name));  // a char const* alone is shown as a pointer
    tensor<double> const y = c.on_tensor(t);
    for (std::size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      double const want = c.on_number(x[i]);
      // sin, cos and tan of 1e300 reduce a huge argument: both libraries are within 1 ulp
      CHECK(same_number(y[i], want, c.tolerance));
      if (want == 0) CHECK(std::signbit(y[i]) == std::signbit(want));
    }
    adx::tape_scope<V> scope;
    tensor<V> const block(t), single = elementwise_variables(x);
    adx::backward(sum(c.on_vars(block)));
    tensor<double> const gb = adx::adjoints(block);
    adx::backward(sum(c.on_vars(single)));
    tensor<double> const gs = adx::adjoints(single);
    for (std::size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      CHECK(same_derivative(gb[i], gs[i]));
    }
  }
  // the documented rules at their points: log'(0) = +inf, sqrt'(0) = +inf
  adx::tape_scope<V> scope;
  tensor<V> const z(tensor<double>{0.0, 0.0, 0.0});
  adx::backward(sum(log(z) * 0 + sqrt(z)));
  tensor<double> const gz = adx::adjoints(z);
  CHECK(std::isnan(gz[0]));  // 0 * log'(0) = 0 * inf, plus sqrt'(0) = inf: NaN, as in torch
  tensor<V> const u(tensor<double>{0.0, 4.0, 0.0, 1.0, 0.0});
  adx::backward(sum(sqrt(u)));
  tensor<double> const gu = adx::adjoints(u);
  CHECK(gu[0] == inf);
  CHECK(gu[1] == 0.25);
  CHECK(gu[4] == inf);
  // x / y where 1/y overflows (subnormal y, among normal ones): d/dy = -(x/y)/y stays finite in
  // every lane, as element by element
  std::vector<double> const yv{2.0, 1e-310, -3.0, 0.5, -1e-310, 7.0, 1e-309, 1.5, 4.9e-324};
  std::vector<double> const xv(yv.size(), 1e-320);
  tensor<V> const xb(tensor<double>(adx::shape{xv.size()}, xv)), yb(tensor<double>(adx::shape{yv.size()}, yv));
  tensor<V> const xs = elementwise_variables(xv), ys = elementwise_variables(yv);
  adx::backward(sum(xb / yb));
  tensor<double> const gyb = adx::adjoints(yb);
  adx::backward(sum(xs / ys));
  tensor<double> const gys = adx::adjoints(ys);
  for (std::size_t i = 0; i < yv.size(); ++i) {
    CAPTURE(yv[i]);
    double const want = -(xv[i] / yv[i]) / yv[i];  // -inf only for 4.9e-324 (the true value overflows)
    CHECK(std::isfinite(want) == (yv[i] != 4.9e-324));
    CHECK(gyb[i] == want);
    CHECK(gys[i] == want);
  }
}
