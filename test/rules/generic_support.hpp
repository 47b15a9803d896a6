// Shared by test_rules_unary.cpp and test_rules_binary.cpp (two translation units so that the
// heavy nested instantiations build in parallel): finite differences and rule call wrappers.
#pragma once

#include <doctest/doctest.h>
#include <adx/adx.hpp>
#include <boost/mp11/algorithm.hpp>

#include "support/check.hpp"
#include "support/modes.hpp"

namespace adx_test::rules {

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

/// A first derivative as each level of a nested number gives it, for f(x, y) along x: the inner
/// level (the value's own derivative) and the outer level (the partials), in dual<dual>,
/// var<dual>, var<var> and dual<var>, after plain dual and var (one level, given as both). y is
/// a plain number: a nested constant's zero tangent times an infinite partial would be NaN in
/// forward mode at the inner level only (docs/derivative_rules.md documents it). Every level of
/// every mode must give the same number, also at the edges (ties, zeros, poles, infinities),
/// where a value that is one operand whole, or a formula with another derivative, would make
/// the inner level disagree.
struct level_derivs {
  char const* mode;
  double inner, outer;
};
template <class F>
std::vector<level_derivs> first_derivative_by_level(F const& f, double x0, double y0) {
  using namespace adx;
  std::vector<level_derivs> out;
  {  // the two plain modes: one level each
    dual<double> const r = f(dual<double>(x0, 1.0), y0);
    out.push_back({"dual", r.tangent(), r.tangent()});
    tape_scope<var<double>> s;
    var<double> x = x0;
    var<double> v = f(x, y0);
    backward(v);
    out.push_back({"var", x.adjoint(), x.adjoint()});
  }
  {
    using D2 = dual<dual<double>>;
    D2 const r = f(detail::seed_all_levels<2>(x0), y0);
    out.push_back({"dual<dual>", r.value().tangent(), r.tangent().value()});
  }
  {
    tape_scope<var<dual<double>>> s;
    var<dual<double>> x = dual<double>(x0, 1.0);
    var<dual<double>> r = f(x, y0);
    backward(r);
    out.push_back({"var<dual>", r.value().tangent(), x.adjoint().value()});
  }
  {
    tape_scope<var<var<double>>> s;
    var<var<double>> x = x0;
    var<var<double>> r = f(x, y0);
    backward(r);
    double const outer = primal(x.adjoint());
    var<double> v = r.value();
    backward(v);
    out.push_back({"var<var>", x.value().adjoint(), outer});
  }
  {  // the tangent (outer) against the inner tape's gradient of the value
    tape_scope<dual<var<double>>> s;
    dual<var<double>> x(var<double>(x0), 1.0);
    dual<var<double>> r = f(x, y0);
    var<double> v = r.value();
    backward(v);
    out.push_back({"dual<var>", x.value().adjoint(), primal(r.tangent())});
  }
  return out;
}

/// Checks that every level gives the same first derivative of f along x at (x0, y0); returns
/// the number of comparisons.
template <class F>
int check_levels_agree(F const& f, double x0, double y0, char const* along) {
  int n = 0;
  auto const levels = first_derivative_by_level(f, x0, y0);
  double const ref = levels.front().outer;  // plain dual
  for (auto const& l : levels) {
    INFO(along << ", mode " << std::string(l.mode) << ": inner " << l.inner << ", outer " << l.outer << ", dual "
               << ref);
    CHECK(close(l.inner, l.outer, 1e-14, 1e-300));  // NaN only with NaN (support/check.hpp)
    CHECK(close(l.outer, ref, 1e-14, 1e-300));
    ++n;
  }
  return n;
}

inline bool all_finite(std::array<double, 5> const& d) {
  for (double v : d)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace adx_test::rules
