// Shared by test_rules_unary.cpp and test_rules_binary.cpp (two translation units so that the
// heavy nested instantiations build in parallel): finite differences and rule call wrappers.
#pragma once

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

inline bool all_finite(std::array<double, 5> const& d) {
  for (double v : d)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace adx_test::rules
