// SPDX-License-Identifier: MIT
// adx: the inputs and outputs the function transforms (api/functional.hpp) take: a scalar, a
// std::vector or a tensor, alone or in a tuple, with their element type, shapes and sizes; how
// they are made into AD variables and read back.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/container_kind.hpp"
#include "adx/api/level.hpp"
#include "adx/api/mindspore.hpp"
#include "adx/core/error.hpp"
#include "adx/forward/dual.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx::detail {

/// An input of a transform: a floating-point or AD scalar, or a std::vector / tensor of one.
template <class X>
inline constexpr bool transform_input = std::is_floating_point_v<element_of<X>> || ad_scalar<element_of<X>>;

template <class X>
struct as_tuple_t {
  using type = std::tuple<X>;
  static constexpr bool packed = false;
};
template <class... X>
struct as_tuple_t<std::tuple<X...>> {
  using type = std::tuple<X...>;
  static constexpr bool packed = true;
};

/// The inputs as a std::tuple (one input becomes a 1-tuple).
template <class X>
auto inputs_tuple(X const& x) {
  if constexpr (as_tuple_t<X>::packed)
    return x;
  else
    return std::tuple<X>(x);
}

/// The common element type R of a tuple of inputs (all must share it).
template <class Tup>
struct inputs_element;
template <class X0, class... X>
struct inputs_element<std::tuple<X0, X...>> {
  using type = element_of<X0>;
  static_assert((transform_input<X0> && ... && transform_input<X>),
                "adx: an input of a transform must be a floating-point (or AD) scalar, or a std::vector or tensor of "
                "one");
  static_assert((std::is_same_v<element_of<X>, type> && ...),
                "adx: the inputs of a transform must have one element type (say all double)");
};
template <class Tup>
using inputs_element_t = typename inputs_element<std::remove_cvref_t<Tup>>::type;

/// The scalar R a transform of f at the inputs Tup perturbs over (api/level.hpp): the inputs'
/// element type, or the scalar of the variables f captures if that is deeper. Call<R> is the
/// element type the transform calls f with: a function that cannot take it at the captured
/// level (fixed parameter types) is differentiated at the inputs' level.
template <class F, class Tup, template <class> class Call>
struct transform_scalar;
template <class F, class... X, template <class> class Call>
struct transform_scalar<F, std::tuple<X...>, Call> {
  template <class R>
  using callable_at = std::is_invocable<F const&, typename kind_of<X>::template with<Call<R>> const&...>;
  using type = lift_scalar_t<inputs_element_t<std::tuple<X...>>, typename captured_scalar<F, X...>::type, callable_at>;
};
template <class F, class Tup, template <class> class Call>
using transform_scalar_t = typename transform_scalar<F, std::remove_cvref_t<Tup>, Call>::type;

template <class R>
using call_dual = dual<R>;
template <class R>
using call_var = var<R>;
template <class R>
using call_var_dual = var<dual<R>>;

template <class F, class Tup>
decltype(auto) call_unpacked(F const& f, Tup const& t) {
  return std::apply([&](auto const&... x) -> decltype(auto) { return f(x...); }, t);
}

/// Every input mapped to element type E by g(input number, element number, element).
template <class E, class Tup, class G>
auto map_inputs(Tup const& xs, G const& g) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(kind_of<std::tuple_element_t<I, Tup>>::template map<E>(
        std::get<I>(xs), [&](std::size_t j, auto const& e) { return g(I, j, e); })...);
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

template <class Tup>
std::vector<std::size_t> input_sizes(Tup const& xs) {
  return std::apply([](auto const&... x) { return std::vector<std::size_t>{kind_of<decltype(x)>::size(x)...}; }, xs);
}

/// An output element taken to the scalar S (a constant if f returned something inactive).
template <class S, class E>
S output_element(E const& e) {
  if constexpr (std::is_same_v<E, S>)
    return e;
  else
    return to_value<S>(e);
}

/// f's result evaluated: expressions recorded or computed into their scalar or tensor.
template <class Y>
auto evaluated(Y&& y) {
  using A = std::remove_cvref_t<decltype(to_active(y))>;
  static_assert(std::is_arithmetic_v<element_of<A>> || ad_scalar<element_of<A>>,
                "adx: the functional transforms (jacobian, hessian, jvp, hvp, jacfwd, jacrev) take a function "
                "with one output: a scalar, or a std::vector or tensor of scalars (for several outputs, one call "
                "per output, or adx::vjp / adx::jvp for MindSpore's tuples)");
  return to_active(y);
}

/// The output at level S taken one level down (its values), in the same container.
template <class S, class Y>
auto output_values(Y const& y) {
  using K = kind_of<Y>;
  using R = value_type_t<S>;
  return K::template map<R>(y, [](std::size_t, auto const& e) { return output_element<S>(e).val(); });
}

inline shape concat(shape a, shape const& b) {
  for (std::size_t d : b) a.push_back(d);
  return a;
}

/// "adx: functional::jvp: v has shape [3] but x has shape [2]"
inline void check_direction(char const* api, std::string const& v_name, shape const& v, std::string const& x_name,
                            shape const& x) {
  if (!(v == x))
    throw shape_error(std::string("adx: ") + api + ": " + v_name + " has shape " + v.str() + " but " + x_name +
                      " has shape " + x.str());
}

template <class Tup, class VTup>
void check_directions(char const* api, Tup const& xs, VTup const& vs, bool packed, char const* v_name = "v",
                      char const* x_name = "x") {
  static_assert(std::tuple_size_v<Tup> == std::tuple_size_v<VTup>, "adx: the direction needs one entry per input");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto name = [&](char const* base, std::size_t i) {
      return packed ? std::string(base) + "[" + std::to_string(i) + "]" : std::string(base);
    };
    (check_direction(api, name(v_name, I), kind_of<std::tuple_element_t<I, VTup>>::shape_of(std::get<I>(vs)),
                     name(x_name, I), kind_of<std::tuple_element_t<I, Tup>>::shape_of(std::get<I>(xs))),
     ...);
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

}  // namespace adx::detail
