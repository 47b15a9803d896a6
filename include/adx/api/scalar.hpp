// adx: scalar entry points built on nesting. Each opens its own nested recording, so they may
// be called while the caller is recording (the caller's tape is left as it was).
//
//   derivative<3>(f, x)      {f, f', f'', f'''} at x, by dual<dual<dual<double>>>
//   gradient(f, x)           reverse mode, x a std::vector<double>; f takes the vector of vars
//   hessian(f, x)            forward-over-reverse (var<dual<double>>), n sweeps
//   hvp(f, x, v)             H v in one forward-over-reverse sweep
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

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
/// The k-th derivative in a nested dual: k tangent steps, N - k value steps (any order).
template <std::size_t N, class D>
auto extract(D const& d, std::size_t k) -> innermost_t<D> {
  if constexpr (N == 0)
    return d;
  else
    return k > 0 ? extract<N - 1>(d.tangent(), k - 1) : extract<N - 1>(d.value(), 0);
}

inline void check_same_size(char const* op, std::size_t a, std::size_t b) {
  if (a != b)
    throw value_error(std::string("adx: ") + op + ": the direction has " + std::to_string(b) + " entries but x has " +
                      std::to_string(a));
}
}  // namespace detail

/// An N-level nested dual of R (nested_dual_t<2> = dual<dual<double>>).
template <std::size_t N, class R = double>
using nested_dual_t = typename detail::nested_dual<N, R>::type;

/// {f(x), f'(x), ..., f^(N)(x)} for f: R -> R written over a generic scalar.
template <std::size_t N, class F, class R>
requires std::is_floating_point_v<R> std::array<R, N + 1> derivative(F&& f, R x) {
  auto y = nested_dual_t<N, R>(f(detail::seed_all_levels<N>(x)));
  std::array<R, N + 1> out{};
  for (std::size_t k = 0; k <= N; ++k) out[k] = detail::extract<N>(y, k);
  return out;
}

/// Value and gradient of f: R^n -> R by one reverse sweep.
template <class F, class R = double>
std::pair<R, std::vector<R>> value_and_gradient(F&& f, std::span<R const> x) {
  tape_scope<var<R>> scope;
  enable_grad recording_on;
  std::vector<var<R>> xs(x.size());
  make_independent(xs, x);
  var<R> y = f(std::as_const(xs));
  backward(y);
  std::vector<R> g(x.size());
  adjoints(xs, g);
  return {y.value(), std::move(g)};
}
template <class F, class R>
std::vector<R> gradient(F&& f, std::vector<R> const& x) {
  return value_and_gradient(std::forward<F>(f), std::span<R const>(x)).second;
}

/// The Hessian of f: R^n -> R, row-major n x n, by n forward-over-reverse sweeps.
template <class F, class R>
std::vector<R> hessian(F&& f, std::vector<R> const& x) {
  std::size_t const n = x.size();
  std::vector<R> h(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    tape_scope<var<dual<R>>> scope;
    enable_grad recording_on;
    std::vector<var<dual<R>>> xs;
    xs.reserve(n);
    for (std::size_t j = 0; j < n; ++j) xs.emplace_back(dual<R>(x[j], R(i == j)));
    var<dual<R>> y = f(std::as_const(xs));
    backward(y);
    for (std::size_t j = 0; j < n; ++j) h[j * n + i] = xs[j].adjoint().tangent();
  }
  return h;
}

/// The Hessian-vector product H(x) v in one forward-over-reverse sweep.
template <class F, class R>
std::vector<R> hvp(F&& f, std::vector<R> const& x, std::vector<R> const& v) {
  detail::check_same_size("hvp", x.size(), v.size());
  tape_scope<var<dual<R>>> scope;
  enable_grad recording_on;
  std::vector<var<dual<R>>> xs;
  xs.reserve(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) xs.emplace_back(dual<R>(x[j], v[j]));
  var<dual<R>> y = f(std::as_const(xs));
  backward(y);
  std::vector<R> out(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) out[j] = xs[j].adjoint().tangent();
  return out;
}

}  // namespace adx
