// SPDX-License-Identifier: MIT
// adx: scalar entry points built on nesting. Each opens its own nested recording, so they may
// be called while the caller is recording (the caller's tape is left as it was).
//
//   derivative<3>(f, x)      {f, f', f'', f'''} at x, by dual<dual<dual<double>>>
//   gradient(f, x)           reverse mode, x a std::vector<double>; f takes the vector of vars
//   hessian(f, x)            functional::hessian as a row-major std::vector
//   hvp(f, x, v)             functional::hvp's H v
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "adx/api/functional.hpp"
#include "adx/api/level.hpp"
#include "adx/core/error.hpp"
#include "adx/forward/dual.hpp"
#include "adx/reverse/var.hpp"

namespace adx {

namespace detail {
template <std::size_t N, class R>
struct nested_dual {
  using type = dual<typename nested_dual<N - 1, R>::type>;
};
template <class R>
struct nested_dual<0, R> {
  using type = R;
};

/// x as an N-level dual whose every first-order tangent is 1.
template <std::size_t N, class R>
auto seed_all_levels(R x) {
  if constexpr (N == 0) {
    return x;
  } else {
    using inner = typename nested_dual<N - 1, R>::type;
    return dual<inner>(seed_all_levels<N - 1>(x), detail::constant<inner>(1));
  }
}
/// The k-th derivative in an N-level nested dual, as its base scalar (k tangent steps, N - k
/// value steps, in any order).
template <std::size_t N, class D>
auto extract(D const& d, std::size_t k) {
  if constexpr (N == 0)
    return d;
  else
    return k > 0 ? extract<N - 1>(d.tangent(), k - 1) : extract<N - 1>(d.value(), 0);
}

/// Whether f takes an N-level nested dual over R (derivative's lift_scalar question).
template <class F, std::size_t N>
struct takes_nested_dual {
  template <class R>
  using at = std::is_invocable<F&, typename nested_dual<N, R>::type const&>;
};
/// Whether f takes a std::vector<var<R>> (value_and_gradient's lift_scalar question).
template <class F>
struct takes_var_vector {
  template <class R>
  using at = std::is_invocable<F&, std::vector<var<R>> const&>;
};

/// The scalar a derivative's point is taken as: numbers (integers as double), AD scalars, the
/// scalar of an unevaluated expression.
template <class X>
using point_scalar_t = std::conditional_t<ad_operand<X>, ad_type_t<X>, argument_scalar_t<std::remove_cvref_t<X>>>;

inline void check_same_size(char const* op, std::size_t a, std::size_t b) {
  if (a != b)
    throw value_error(std::string("adx: ") + op + ": the direction has " + std::to_string(b) + " entries but x has " +
                      std::to_string(a));
}
}  // namespace detail

/// An N-level nested dual of R (nested_dual_t<2> = dual<dual<double>>).
template <std::size_t N, class R = double>
using nested_dual_t = typename detail::nested_dual<N, R>::type;

/// {f(x), f'(x), ..., f^(N)(x)} for f: R -> R written over a generic scalar. x is a number
/// (an integer is taken as double) or an AD scalar or expression, say of an enclosing transform:
/// the derivatives are then of that type, and differentiable. The duals are made one level
/// above x and above what f captures (api/level.hpp).
template <std::size_t N, class F, class X>
requires(arithmetic<X> || ad_operand<X>) auto derivative(F&& f, X const& x) {
  using P = detail::point_scalar_t<X>;
  using C = typename detail::captured_scalar<F, P>::type;
  using R = detail::lift_scalar_t<P, C, detail::takes_nested_dual<F, N>::template at>;
  auto y = nested_dual_t<N, R>(f(detail::seed_all_levels<N>(detail::to_value<R>(x))));
  std::array<R, N + 1> out{};
  for (std::size_t k = 0; k <= N; ++k) out[k] = detail::extract<N>(y, k);
  return out;
}

/// Value and gradient of f: R^n -> R by one reverse sweep. f takes a
/// `std::vector<var<B>> const&`, where B is R or, if f captures variables of a deeper level (an
/// enclosing transform's), their scalar: the results are then B and differentiable.
template <class F, class R = double>
auto value_and_gradient(F&& f, std::span<R const> x) {
  static_assert(std::is_floating_point_v<R> || ad_scalar<R>,
                "adx: value_and_gradient takes a span of floating-point or AD scalars (integers: convert them to "
                "double first, or call adx::gradient, which does)");
  using C = typename detail::captured_scalar<F, std::vector<R>>::type;
  using B = detail::lift_scalar_t<R, C, detail::takes_var_vector<F>::template at>;
  detail::frame_guard<B> frame;  // on tape<B> alone: what the sweep records below stays
  enable_grad recording_on;
  std::vector<var<B>> xs(x.size());
  if constexpr (std::is_same_v<B, R>) {
    make_independent(xs, x);
  } else {
    std::vector<B> values(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) values[i] = detail::to_value<B>(x[i]);
    make_independent(xs, values);
  }
  var<B> const y = detail::output_element<var<B>>(detail::evaluated(f(std::as_const(xs))));
  detail::sweep_from(y);
  std::vector<B> g(x.size());
  adjoints(xs, g);
  return std::pair<B, std::vector<B>>{y.value(), std::move(g)};
}

namespace detail {
/// A std::vector argument of the scalar helpers with integers taken as double.
template <class R>
decltype(auto) as_floating(std::vector<R> const& x) {
  static_assert(std::is_arithmetic_v<R> || ad_scalar<R>,
                "adx: gradient, hessian and hvp take a std::vector of numbers or AD scalars");
  if constexpr (std::is_integral_v<R>)
    return std::vector<double>(x.begin(), x.end());
  else
    return (x);
}
}  // namespace detail

/// The gradient of f: R^n -> R at x (integers are taken as double), by one reverse sweep.
template <class F, class R>
auto gradient(F&& f, std::vector<R> const& x) {
  auto const& xf = detail::as_floating(x);
  using E = typename std::remove_cvref_t<decltype(xf)>::value_type;
  return value_and_gradient(std::forward<F>(f), std::span<E const>(xf)).second;
}

/// The Hessian of f: R^n -> R, row-major n x n: functional::hessian over a std::vector.
template <class F, class R>
auto hessian(F const& f, std::vector<R> const& x) {
  auto const h = functional::hessian(f, detail::as_floating(x));
  return std::vector<typename decltype(h)::value_type>(h.data(), h.data() + h.size());
}

/// The Hessian-vector product H(x) v: functional::hvp's second part.
template <class F, class R, class V>
auto hvp(F const& f, std::vector<R> const& x, std::vector<V> const& v) {
  detail::check_same_size("hvp", x.size(), v.size());
  return functional::hvp(f, detail::as_floating(x), detail::as_floating(v)).second;
}

}  // namespace adx
