// Every rule of adx::all_unary_rules / all_binary_rules, in every mode and nesting combination,
// against each other and against finite differences up to the 4th (unary) or 2nd (binary)
// derivative. Adding a rule to the lists is all it takes to have it tested here.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <boost/mp11/algorithm.hpp>

#include "support/check.hpp"
#include "support/modes.hpp"

namespace {

using adx_test::close;

/// 5-point central difference of g at x.
template <class G>
double fd(G const& g, double x) {
  double const h = 1e-3 * std::max(1.0, std::abs(x));
  return (-g(x + 2 * h) + 8 * g(x + h) - 8 * g(x - h) + g(x - 2 * h)) / (12 * h);
}

template <class Rule>
struct unary_fn {
  template <class X>
  auto operator()(X const& x) const {
    return adx::detail::make_expr<Rule>(x);
  }
};
template <class Rule>
struct binary_fn {
  template <class X, class Y>
  auto operator()(X const& x, Y const& y) const {
    return adx::detail::make_expr<Rule>(x, y);
  }
};

bool all_finite(std::array<double, 5> const& d) {
  for (double v : d)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("every unary rule agrees across modes and with finite differences to 4th order") {
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_unary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    unary_fn<Rule> const f;
    for (double x0 : {-0.7, 0.3, 0.8, 1.4, 2.3}) {
      auto const modes = adx_test::unary_all_modes(f, x0);
      auto const& ref = modes[1];        // dual^4 gives every order
      if (!all_finite(ref.d)) continue;  // outside the function's domain
      INFO(std::string(Rule::name) << " at x = " << x0);
      for (auto const& m : modes) {
        INFO("mode " << std::string(m.mode));
        for (int k = 0; k < 5; ++k)
          if (!std::isnan(m.d[k])) CHECK(close(m.d[k], ref.d[k], 1e-11, 1e-12));
      }
      // each order against a finite difference of the order below (from nested duals)
      auto g = [&](int order) { return [&f, order](double x) { return adx::derivative<4>(f, x)[order]; }; };
      for (int k = 1; k <= 4; ++k) {
        INFO("order " << k);
        CHECK(close(ref.d[k], fd(g(k - 1), x0), 1e-6, 1e-7));
      }
      ++checked;
    }
  });
  CHECK(checked >= 120);
}

TEST_CASE("every binary rule agrees across modes and with finite differences to 2nd order") {
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_binary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    binary_fn<Rule> const f;
    for (auto const& p : {std::pair{0.7, 1.3}, {-0.4, 0.9}, {1.8, -0.7}, {2.2, 2.9}}) {
      // plain variables, not a structured binding: the lambdas below capture them (clang 14
      // does not implement capturing structured bindings, a C++20 addition)
      double const x0 = p.first, y0 = p.second;
      auto const modes = adx_test::binary_all_modes(f, x0, y0);
      auto const& r = modes[0];
      if (!std::isfinite(r.v) || !std::isfinite(r.gx) || !std::isfinite(r.gy) || !std::isfinite(r.hxx) ||
          !std::isfinite(r.hxy) || !std::isfinite(r.hyy))
        continue;
      INFO(std::string(Rule::name) << " at (" << x0 << ", " << y0 << ")");
      for (auto const& m : modes) {
        INFO("mode " << std::string(m.mode));
        for (auto [a, b] :
             {std::pair{m.v, r.v}, {m.gx, r.gx}, {m.gy, r.gy}, {m.hxx, r.hxx}, {m.hxy, r.hxy}, {m.hyy, r.hyy}})
          if (!std::isnan(a)) CHECK(close(a, b, 1e-11, 1e-12));
      }
      auto val = [&](double x, double y) { return static_cast<double>(f(x, y)); };
      auto gx = [&](double x, double y) {
        adx::dual<double> r1 = f(adx::dual<double>(x, 1.0), adx::dual<double>(y, 0.0));
        return r1.tangent();
      };
      auto gy = [&](double x, double y) {
        adx::dual<double> r1 = f(adx::dual<double>(x, 0.0), adx::dual<double>(y, 1.0));
        return r1.tangent();
      };
      CHECK(close(r.gx, fd([&](double x) { return val(x, y0); }, x0), 1e-6, 1e-7));
      CHECK(close(r.gy, fd([&](double y) { return val(x0, y); }, y0), 1e-6, 1e-7));
      CHECK(close(r.hxx, fd([&](double x) { return gx(x, y0); }, x0), 1e-6, 1e-7));
      CHECK(close(r.hxy, fd([&](double y) { return gx(x0, y); }, y0), 1e-6, 1e-7));
      CHECK(close(r.hyy, fd([&](double y) { return gy(x0, y); }, y0), 1e-6, 1e-7));
      ++checked;
    }
  });
  CHECK(checked >= 40);
}
