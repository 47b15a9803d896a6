// The sum node (core/sum.hpp): `a + b - c + ...` is one node of many terms. Its value, its
// partials (reverse) and its tangent (forward) must be those of the nested binary additions it
// replaces, bit for bit, in every mode and nesting level; long statements (more operands than
// tape::short_statement) take the statement writer, whose settling of constants, variables of
// outer recordings and stale variables is checked here too.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <array>
#include <cmath>
#include <type_traits>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

namespace {

/// sum_k c_k f_k(x_{k mod 4} * x_{(k + 1) mod 4}) with alternating signs: `terms` terms,
/// written as one expression by a fold (so one statement), cycling through sin, exp, log1p, cos.
template <std::size_t Terms, class T>
T long_sum(std::array<T, 4> const& x) {
  auto term = [&](auto k) {
    constexpr std::size_t i = decltype(k)::value;
    auto const& a = x[i % 4];
    auto const& b = x[(i + 1) % 4];
    double const c = 0.5 + 0.25 * static_cast<double>(i % 3);
    if constexpr (i % 4 == 0)
      return c * sin(a * b);
    else if constexpr (i % 4 == 1)
      return c * exp(a * b);
    else if constexpr (i % 4 == 2)
      return c * log1p(a * b);
    else
      return c * cos(a * b);
  };
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    // ((t0 - t1) + t2) - t3 ...: every odd term subtracted
    auto fold = [&](auto acc, auto k) {
      if constexpr (decltype(k)::value % 2 == 1)
        return acc - term(k);
      else
        return acc + term(k);
    };
    auto r = term(std::integral_constant<std::size_t, 0>{});
    if constexpr (sizeof...(I) > 0) {
      auto step = [&](auto self, auto acc, auto k, auto... rest) {
        auto next = fold(acc, k);
        if constexpr (sizeof...(rest) == 0)
          return T(next);
        else
          return self(self, next, rest...);
      };
      return step(step, r, std::integral_constant<std::size_t, I + 1>{}...);
    } else {
      return T(r);
    }
  }
  (std::make_index_sequence<Terms - 1>{});
}

/// The same function in double, term by term: value and gradient by hand.
template <std::size_t Terms>
std::pair<double, std::array<double, 4>> long_sum_by_hand(std::array<double, 4> const& x) {
  double v = 0;
  std::array<double, 4> g{};
  for (std::size_t i = 0; i < Terms; ++i) {
    std::size_t const ia = i % 4, ib = (i + 1) % 4;
    double const u = x[ia] * x[ib];
    double const c = 0.5 + 0.25 * static_cast<double>(i % 3);
    double f, df;
    switch (i % 4) {
      case 0:
        f = std::sin(u), df = std::cos(u);
        break;
      case 1:
        f = std::exp(u), df = std::exp(u);
        break;
      case 2:
        f = std::log1p(u), df = 1 / (1 + u);
        break;
      default:
        f = std::cos(u), df = -std::sin(u);
        break;
    }
    double const s = (i % 2 == 1) ? -1.0 : 1.0;
    v = i == 0 ? c * f : v + s * c * f;
    g[ia] += s * c * df * x[ib];
    g[ib] += s * c * df * x[ia];
  }
  return {v, g};
}

constexpr std::array<double, 4> at{0.3, -0.7, 1.1, 0.45};

}  // namespace

TEST_CASE("a + b - c + d is one sum node, and reads as the binary nodes in anomaly reports") {
  var<double> a, b, c;
  using E = decltype(a + b - c + 2.0);
  static_assert(E::n_active == 3);
  static_assert(E::terms_type::size == 4);
  CHECK(std::string(detail::describe_expression<E>()) == "add(sub(add(x, x), x), c)");
  CHECK(std::string(detail::describe_expression<decltype(a - (b + c))>()) == "sub(x, add(x, x))");
  CHECK(std::string(detail::describe_expression<decltype(sin(a - b) + c)>()) == "add(sin(sub(x, x)), x)");
}

TEST_CASE("sum node: values and partials are those of the nested binary additions, bit for bit") {
  tape_scope<var<double>> s;
  var<double> x = 0.7, y = -1.3, z = 2.9;
  // the binary nodes' arithmetic, written out: ((x + y) - z) + x * y
  var<double> r = x + y - z + x * y;
  CHECK(r.val() == ((0.7 + -1.3) - 2.9) + 0.7 * -1.3);
  backward(r);
  CHECK(x.adjoint() == 1 + -1.3);
  CHECK(y.adjoint() == 1 + 0.7);
  CHECK(z.adjoint() == -1);
  // a sum as a term of a sum (a + (b + c)) and under a function: sin(x - y) + (y + z)
  var<double> q = sin(x - y) + (y + z);
  backward(q);
  CHECK(x.adjoint() == std::cos(0.7 - -1.3));
  CHECK(y.adjoint() == -std::cos(0.7 - -1.3) + 1);
  CHECK(z.adjoint() == 1);
  // an expression kept in a variable and extended twice: the terms are copied, not shared
  auto e = x * x - y;
  var<double> p1 = e + z;
  var<double> p2 = e - z;
  CHECK(p1.val() == 0.7 * 0.7 - -1.3 + 2.9);
  CHECK(p2.val() == 0.7 * 0.7 - -1.3 - 2.9);
  backward(p2);
  CHECK(x.adjoint() == 1.4);
  CHECK(z.adjoint() == -1);
}

TEST_CASE("forward sums: value and tangent of the nested binary additions, bit for bit, in two values") {
  // a constant first, a product, a subtracted function, a constant last; the binary form is
  // evaluated one addition at a time
  auto check = [](auto x, auto y, auto z) {
    using D = decltype(x);
    auto const e = 2.0 - x + y * z - sin(x) + 3.0;
    static_assert(sizeof(e) == sizeof(D), "a forward sum holds its value and tangent only");
    D const r = e;
    D const b1 = 2.0 - x;
    D const b2 = b1 + y * z;
    D const b3 = b2 - sin(x);
    D const b4 = b3 + 3.0;
    CHECK(primal(r.value()) == primal(b4.value()));
    CHECK(primal(r.tangent()) == primal(b4.tangent()));
    if constexpr (requires { r.tangent().tangent(); })  // dual<dual<double>>: the second order too
      CHECK(r.tangent().tangent() == b4.tangent().tangent());
    // and against the closed form: d/dt of 2 - x + y z - sin x + 3 along (x', y', z')
    CHECK(close(primal(r.tangent()), primal(-x.tangent() + y.tangent() * z.value() + y.value() * z.tangent() -
                                            cos(x.value()) * x.tangent())));
  };
  check(dual<double>(0.7, 1.0), dual<double>(-1.3, 0.25), dual<double>(2.9, -2.0));
  using D2 = dual<dual<double>>;
  check(D2(dual<double>(0.7, 1.0), dual<double>(1.0, 0.0)), D2(dual<double>(-1.3, 0.5), dual<double>(0.25, 0.0)),
        D2(dual<double>(2.9, 0.0), dual<double>(-2.0, 1.0)));
  // a long forward sum is two values however many terms it has
  std::array<dual<double>, 4> x{dual<double>(0.3, 1.0), dual<double>(0.6, 0.0), dual<double>(0.9, 0.0),
                                dual<double>(1.2, 0.0)};
  static_assert(sizeof(decltype(x[0] + x[1] - x[2] + x[3] * x[0] + x[1] + x[2] - x[3] + 1.0)) == sizeof(dual<double>));
  // its tangent is returned by value, as every node's: a reference to it outlives the sum (the
  // sanitizer build would see a reference into the ended temporary)
  auto const& t = (x[0] - x[1]).tangent();
  double noise[16];
  for (auto& n : noise) n = 99.0;
  CHECK(noise[3] == 99.0);
  CHECK(t == 1.0);
}

TEST_CASE("long sums: reverse, forward and nested agree with the gradient by hand") {
  auto [value, grad] = long_sum_by_hand<30>(at);
  {
    tape_scope<var<double>> s;
    std::array<var<double>, 4> x{var<double>(at[0]), var<double>(at[1]), var<double>(at[2]), var<double>(at[3])};
    var<double> y = long_sum<30>(x);
    CHECK(close(y.val(), value));
    backward(y);
    for (std::size_t i = 0; i < 4; ++i) CHECK(close(x[i].adjoint(), grad[i]));
  }
  for (std::size_t j = 0; j < 4; ++j) {  // forward: one tangent per input
    std::array<dual<double>, 4> x;
    for (std::size_t i = 0; i < 4; ++i) x[i] = dual<double>(at[i], i == j ? 1.0 : 0.0);
    dual<double> y = long_sum<30>(x);
    CHECK(close(y.val(), value));
    CHECK(close(y.tangent(), grad[j]));
  }
  // the gradient through the transforms, and the Hessian: reverse over reverse against forward
  // over reverse
  auto f = [](auto const& v) {
    using S = std::remove_cvref_t<decltype(v[0])>;
    return long_sum<30>(std::array<S, 4>{v[0], v[1], v[2], v[3]});
  };
  std::vector<double> const point(at.begin(), at.end());
  auto g = gradient(f, point);
  for (std::size_t i = 0; i < 4; ++i) CHECK(close(g[i], grad[i]));
  auto h = hessian(f, point);
  for (std::size_t j = 0; j < 4; ++j) {  // column j by forward over reverse, written out
    using S = dual<double>;
    tape_scope<var<S>> s;
    std::array<var<S>, 4> x;
    for (std::size_t i = 0; i < 4; ++i) x[i] = var<S>(S(at[i], i == j ? 1.0 : 0.0));
    var<S> y = long_sum<30>(x);
    backward(y);
    for (std::size_t i = 0; i < 4; ++i) CHECK(close(h[i * 4 + j], x[i].adjoint().tangent()));
  }
}

TEST_CASE("long statements: constants and variables of outer recordings in a statement") {
  tape_scope<var<double>> outer;
  var<double> w = 1.5;  // of the outer recording
  tape_scope<var<double>> inner;
  std::array<var<double>, 4> x{var<double>(at[0]), var<double>(at[1]), var<double>(at[2]), var<double>(at[3])};
  var<double> const c = var<double>::constant(2.0);  // a constant var: no place on the tape
  auto const before = tape<double>::current().stats();
  // 16 operands (more than a short statement), 5 of them constants
  var<double> y = x[0] * x[1] + c * x[2] - x[3] * c + w * x[0] + c * c + x[1] * w + c * x[3] + x[2] * x[2];
  auto const after = tape<double>::current().stats();
  CHECK(after.operands - before.operands == 11);  // 16 leaves, 5 of them the constant c
  double const want = at[0] * at[1] + 2 * at[2] - at[3] * 2 + 1.5 * at[0] + 4 + at[1] * 1.5 + 2 * at[3] + at[2] * at[2];
  CHECK(y.val() == doctest::Approx(want).epsilon(1e-15));
  backward(y);
  CHECK(close(x[0].adjoint(), at[1] + 1.5));
  CHECK(close(x[1].adjoint(), at[0] + 1.5));
  CHECK(close(x[2].adjoint(), 2 + 2 * at[2]));
  CHECK(close(x[3].adjoint(), -2 + 2));
  CHECK(close(w.adjoint(), at[0] + at[1]));
  // only constants: the statement is a constant
  var<double> k = c * c + c - c * c * c + c + c + c + c + c + c;
  CHECK(!k.is_active());
  CHECK(k.val() == 4 + 2 - 8 + 12);
}

TEST_CASE("long statements: a stale variable is refused, a non-finite partial makes the sweep careful") {
  var<double> stale;
  {
    tape_scope<var<double>> s;
    stale = var<double>(3.0);
  }
  tape_scope<var<double>> s;
  std::array<var<double>, 4> x{var<double>(at[0]), var<double>(at[1]), var<double>(at[2]), var<double>(at[3])};
  CHECK_THROWS_AS(var<double>(x[0] * x[1] + x[2] * x[3] + x[0] * x[2] + x[1] * x[3] + stale * x[0]),
                  stale_variable_error);
  // sqrt at 0: an infinite partial, in a statement of 10 operands whose gradient stays finite
  // along the other inputs (the careful sweep skips the unreached infinity's 0 * inf)
  var<double> zero = 0.0;
  var<double> y = x[0] * x[1] + x[2] * x[3] + x[0] * x[2] + x[1] * x[3] + 0.0 * sqrt(zero);
  backward(y);
  CHECK(close(x[0].adjoint(), at[1] + at[2]));
  CHECK(std::isnan(zero.adjoint()));  // 0 * inf, as PyTorch gives
}

TEST_CASE("long sums of tensors: the element statements place every leaf (positions) as the scalar form") {
  // 14 active leaves per element (more than a sum inlines): the terms push out of line with the
  // tensor writer's positions. Each element's gradient against the same sum over scalars. With
  // cos, every rule has a lane form (the lane loop where SLEEF is present); atan has none, so
  // the elements are expression nodes pushed one by one.
  tensor<double> const a{0.3, -1.2, 0.8, 2.0}, b{1.1, 0.4, -0.6, 0.9}, c{-0.2, 0.7, 1.5, -1.0};
  auto f = [](auto const& x, auto const& y, auto const& z, auto const& w, auto last) {
    if constexpr (decltype(last)::value)
      return x * y - sin(y * z) + w * x - z * z + exp(x * z) - y * w + atan(z) * x;
    else
      return x * y - sin(y * z) + w * x - z * z + exp(x * z) - y * w + cos(z) * x;
  };
  auto check = [&](auto last) {
    tape_scope<var<double>> s;
    tensor<var<double>> const ta(a), tb(b), tc(c);
    var<double> const w = 0.75;
    var<double> l = sum(f(ta, tb, tc, w, last));
    backward(l);
    tensor<double> const ga = adjoints(ta), gb = adjoints(tb), gc = adjoints(tc);
    double const gw = w.adjoint();
    double gw_scalar = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      tape_scope<var<double>> inner;
      var<double> x = a(i), y = b(i), z = c(i), v = 0.75;
      var<double> e = f(x, y, z, v, last);
      backward(e);
      CHECK(close(ga(i), x.adjoint()));
      CHECK(close(gb(i), y.adjoint()));
      CHECK(close(gc(i), z.adjoint()));
      gw_scalar += v.adjoint();
    }
    CHECK(close(gw, gw_scalar));
  };
  check(std::false_type{});
  check(std::true_type{});
}
