// SPDX-License-Identifier: MIT
// adx: the one place that decides at which nesting level a transform differentiates.
//
// A transform (grad, derivative, jacobian, hessian, jvp, vjp, gradient, ...) makes its own
// perturbation one level above the highest level among
//   - the scalars of its arguments (a var<double> argument: the call is at var<double>), and
//   - the scalars that the function brings in by itself: the variables it captures, which the
//     type of f(plain arguments) tells at compile time.
// So `grad([&](auto y) { return x * y * y; })(2.0)` with x a var<double> of an outer grad lifts
// y to var<var<double>>: x is a constant of the inner call whose value stays differentiable at
// the outer level, and the inner gradient is the derivative of the composition, as in JAX.
//
// Two different AD types at the highest level (a var<double> argument and a captured
// dual<double>) cannot be told apart: that does not compile. A function whose parameters have a
// fixed AD type (not `auto`) is called with that type; it must not capture variables of that
// same level (their perturbations would be the call's own). Local variables of f are best
// declared with its arguments' type (`auto`, or decltype of an argument): a local `var<double>`
// makes f(plain arguments) a var<double>, which reads as a captured variable. A module (a
// function object with trainable_params(): nn layers, a user's net) is not lifted by its own
// parameters; a lambda that calls one is.
#pragma once

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/parameter.hpp"
#include "adx/core/traits.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx::detail {

/// Nothing differentiable found (the bottom of `deeper`).
struct no_scalar {};

/// The deeper (higher-level) of two scalars; no_scalar is below everything. Two different AD
/// types at one level are refused.
template <class A, class B>
struct deeper {
  static_assert(std::is_same_v<A, B> || level_v<A> != level_v<B> || level_v<A> == 0,
                "adx: a transform sees two different AD types at one nesting level (say a var<double> argument and "
                "a captured dual<double>): their perturbations cannot be told apart. Make them one type, or nest "
                "them (var<dual<double>>)");
  using type = std::conditional_t<(level_v<B> > level_v<A>), B, A>;
};
template <class B>
struct deeper<no_scalar, B> {
  using type = B;
};
template <class A>
struct deeper<A, no_scalar> {
  using type = A;
};
template <>
struct deeper<no_scalar, no_scalar> {
  using type = no_scalar;
};
template <class A, class B>
using deeper_t = typename deeper<A, B>::type;

/// The highest-level scalar in a value of type Y: a number, an AD scalar or expression, a
/// tensor or tensor expression (its elements), a parameter, or a std::vector, std::tuple or
/// std::pair of them; no_scalar for anything else (an aux output that is a string, say).
template <class Y, class = void>
struct scalar_in {
  using type = no_scalar;
};
template <class Y>
using scalar_in_t = typename scalar_in<std::remove_cvref_t<Y>>::type;

template <class Y>
struct scalar_in<Y, std::enable_if_t<std::is_arithmetic_v<Y>>> {
  using type = std::conditional_t<std::is_floating_point_v<Y>, Y, double>;
};
template <class Y>
struct scalar_in<Y, std::enable_if_t<ad_operand<Y>>> {
  using type = ad_type_t<Y>;
};
template <class Y>
struct scalar_in<Y, std::enable_if_t<tensor_operand<Y> && !ad_operand<Y>>> {
  using type = scalar_in_t<typename decltype(adx::eval(std::declval<Y const&>()))::value_type>;
};
template <class X, class A>
struct scalar_in<std::vector<X, A>> {
  using type = scalar_in_t<X>;
};
template <class X>
struct scalar_in<std::reference_wrapper<X>> {
  using type = scalar_in_t<X>;
};
template <class... X>
struct scalar_in<std::tuple<X...>> {
  using type = boost::mp11::mp_fold<boost::mp11::mp_list<scalar_in_t<X>...>, no_scalar, deeper_t>;
};
template <class A, class B>
struct scalar_in<std::pair<A, B>> {
  using type = deeper_t<scalar_in_t<A>, scalar_in_t<B>>;
};

/// The scalar the variables of f bring in when f is called with the plain arguments Args (no
/// capture, or a function that cannot be called with them: no_scalar). A module (a function
/// object with trainable_params()) brings in none: its parameters are its weights, constants of
/// a transform unless it differentiates them as weights.
template <class F, class... Args>
struct captured_scalar {
  using type = no_scalar;
};
template <class F, class... Args>
requires(std::is_invocable_v<F const&, Args const&...> &&
         !requires(F & f) { f.trainable_params(); }) struct captured_scalar<F, Args...> {
  using type = scalar_in_t<std::invoke_result_t<F const&, Args const&...>>;
};

/// An argument's scalar for a transform: integers are taken as double.
template <class X>
using argument_scalar_t = std::conditional_t<std::is_integral_v<X>, double, X>;

/// The scalar a transform perturbs over: the deeper of the arguments' scalar Arg and Captured
/// (captured_scalar), unless f cannot be called there and can at Arg (a function whose
/// parameters have a fixed AD type is called with that type). CallableAt<R>::value says
/// whether f takes the transform's arguments made at scalar R; it is asked at Arg only when f
/// cannot be called at the deeper scalar (asked needlessly, it may not compile).
template <class Arg, class Captured, template <class> class CallableAt>
struct lift_scalar {
  using deep = deeper_t<Arg, Captured>;
  static constexpr bool lift() {
    if constexpr (std::is_same_v<deep, Arg>)
      return false;
    else if constexpr (CallableAt<deep>::value)
      return true;
    else
      return !CallableAt<Arg>::value;
  }
  using type = std::conditional_t<lift(), deep, Arg>;
};
template <class Arg, class Captured, template <class> class CallableAt>
using lift_scalar_t = typename lift_scalar<Arg, Captured, CallableAt>::type;

}  // namespace adx::detail
