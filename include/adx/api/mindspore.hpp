// SPDX-License-Identifier: MIT
// adx: MindSpore's functional gradient APIs.
//
//   grad(fn, grad_position, weights, has_aux, return_ids)        mindspore.grad
//   value_and_grad(fn, grad_position, weights, has_aux)           mindspore.value_and_grad
//   grad_operation<{get_all, get_by_list, sens_param}>(fn[, w])   mindspore.ops.GradOperation
//   get_grad<P>(gradients) / get_grad(gradients, parameter)       mindspore.get_grad
//
// Each returns a callable; calling it with fn's arguments runs fn once with the selected
// arguments made independent variables, differentiates the sum of fn's outputs (each weighted
// by ones, or by the sensitivity given with sens_param) in one sweep, and returns the gradients.
//
// What decides the result's type is given at compile time:
//   grad_position  adx::position<P> (one gradient), adx::positions<P...> (a std::tuple of
//                  gradients in that order; positions<P> alone is the same as position<P>), or
//                  adx::none (no input gradients).
//   has_aux, return_ids   adx::has_aux / adx::no_aux, adx::return_ids / adx::no_ids.
// weights is adx::none, one parameter<T> (its gradient is a tensor<T>) or a parameter_list<T>
// (a std::vector<tensor<T>> of gradients, like MindSpore's tuple).
//
// Result structures (MindSpore's tuples are std::tuple; a list of weights gives a vector):
//   positions only     G  or  std::tuple<G1, G2, ...>
//   weights only       tensor<T>  or  std::vector<tensor<T>>
//   both               std::tuple<positions part, weights part>
//   return_ids         each G becomes std::pair<int, G>, each weight's std::pair<std::string, tensor<T>>
//   has_aux            std::tuple<gradients, std::tuple<aux outputs...>>: only the first output of fn
//                      is differentiated; the others are returned as values
// An argument of type tensor<S> has the gradient tensor<S>; a scalar S has S. When S is itself
// an AD type (grad of grad), the gradients are differentiable.
#pragma once

#include <boost/hana/integral_constant.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/gradients.hpp"
#include "adx/api/level.hpp"
#include "adx/api/mindspore_args.hpp"
#include "adx/api/parameter.hpp"

namespace adx {

namespace detail {

// ---- assembling MindSpore's result structures ---------------------------------------------

template <class PosList, bool Single, bool Ids, class In>
auto input_part(In&& in) {
  constexpr auto pos = position_array<PosList>();
  auto with_id = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
    if constexpr (Ids)
      return std::make_pair(pos[K], std::move(std::get<K>(in)));
    else
      return std::move(std::get<K>(in));
  };
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    if constexpr (Single)
      return with_id(std::integral_constant<std::size_t, 0>{});
    else
      return std::make_tuple(with_id(std::integral_constant<std::size_t, K>{})...);
  }
  (std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<In>>>{});
}

template <class W, bool Ids, class G>
auto weight_part(std::vector<G>&& wg, std::vector<std::string> const& names) {
  if constexpr (std::is_same_v<W, none_t>) {
    return std::tuple<>{};
  } else if constexpr (!std::is_same_v<W, parameter_list<typename weights_spec<W>::element>>) {  // one parameter
    if constexpr (Ids)
      return std::make_pair(names[0], std::move(wg[0]));
    else
      return std::move(wg[0]);
  } else if constexpr (Ids) {
    std::vector<std::pair<std::string, G>> out;
    for (std::size_t i = 0; i < wg.size(); ++i) out.emplace_back(names[i], std::move(wg[i]));
    return out;
  } else {
    return std::move(wg);
  }
}

template <class Values>
auto value_part(Values&& v) {
  if constexpr (std::tuple_size_v<std::remove_cvref_t<Values>> == 1)
    return std::move(std::get<0>(v));
  else
    return std::move(v);
}
template <class Values>
auto aux_part(Values&& v) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) { return std::make_tuple(std::move(std::get<K + 1>(v))...); }
  (std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<Values>> - 1>{});
}

/// The function mindspore.grad / value_and_grad return.
template <class F, class Pos, class W, bool Aux, bool Ids, bool WithValue>
class grad_function {
 public:
  grad_function(F fn, W weights) : fn_(std::move(fn)), weights_(std::move(weights)) {}

  template <class... Args>
  auto operator()(Args const&... args) const {
    using spec = position_spec<Pos>;
    using PosList = typename spec::list;
    auto r =
        differentiate<PosList, W, Aux, F, void>(fn_, weights_, nullptr, std::index_sequence_for<Args...>{}, args...);
    auto grads = [&] {
      if constexpr (std::is_same_v<Pos, none_t>)
        return weight_part<W, Ids>(std::move(r.weights), r.names);
      else if constexpr (std::is_same_v<W, none_t>)
        return input_part<PosList, spec::single, Ids>(std::move(r.inputs));
      else
        return std::make_tuple(input_part<PosList, spec::single, Ids>(std::move(r.inputs)),
                               weight_part<W, Ids>(std::move(r.weights), r.names));
    }();
    if constexpr (WithValue)
      return std::make_tuple(value_part(std::move(r.values)), std::move(grads));
    else if constexpr (Aux)
      return std::make_tuple(std::move(grads), aux_part(std::move(r.values)));
    else
      return grads;
  }

 private:
  F fn_;
  W weights_;
};

/// The function GradOperation(...)(fn[, weights]) returns.
template <grad_options O, class F, class W>
class grad_operation_function {
 public:
  grad_operation_function(F fn, W weights) : fn_(std::move(fn)), weights_(std::move(weights)) {}

  template <class... A>
  auto operator()(A const&... a) const {
    constexpr std::size_t n_args = sizeof...(A) - (O.sens_param ? 1 : 0);
    static_assert(!O.sens_param || sizeof...(A) >= 1,
                  "adx: GradOperation with sens_param takes the sensitivity as the last argument");
    auto const all = std::forward_as_tuple(a...);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      // get_all: every input; get_by_list alone: none (only the weights' gradients are
      // returned, so an input need not even be differentiable); neither: the first input
      using PosList =
          std::conditional_t<O.get_all, mp::mp_list<mp::mp_int<static_cast<int>(I)>...>,
                             std::conditional_t<O.get_by_list, mp::mp_list<>,
                                                mp::mp_take_c<mp::mp_list<mp::mp_int<0>>, (n_args > 0 ? 1 : 0)>>>;
      using Wc = std::conditional_t<O.get_by_list, W, none_t>;
      if constexpr (mp::mp_empty<PosList>::value && std::is_same_v<Wc, none_t>) {
        return std::tuple<>{};  // nothing to differentiate: MindSpore's ()
      } else {
        Wc const& w = [&]() -> Wc const& {
          if constexpr (O.get_by_list)
            return weights_;
          else
            return none;
        }();
        using SensT = mp::mp_eval_if_c<!O.sens_param, void, mp::mp_back, mp::mp_list<A...>>;
        SensT const* sens = nullptr;
        if constexpr (O.sens_param) sens = &std::get<sizeof...(A) - 1>(all);
        auto r =
            differentiate<PosList, Wc, false, F, SensT>(fn_, w, sens, std::index_sequence<I...>{}, std::get<I>(all)...);
        if constexpr (!O.get_by_list)
          return input_part<PosList, !O.get_all, false>(std::move(r.inputs));
        else if constexpr (!O.get_all)
          return weight_part<W, false>(std::move(r.weights), r.names);
        else
          return std::make_tuple(input_part<PosList, false, false>(std::move(r.inputs)),
                                 weight_part<W, false>(std::move(r.weights), r.names));
      }
    }
    (std::make_index_sequence<n_args>{});
  }

 private:
  F fn_;
  W weights_;
};

template <grad_options O>
struct grad_operation_t {
  /// Without weights (MindSpore's weights=None): get_by_list gives () for the weights' part.
  template <class F>
  auto operator()(F fn) const {
    return grad_operation_function<O, F, none_t>(std::move(fn), none);
  }
  template <class F, class W>
  auto operator()(F fn, W weights) const {
    (void)weights_spec<W>::any;
    return grad_operation_function<O, F, W>(std::move(fn), std::move(weights));
  }
};

}  // namespace detail

/// mindspore.grad: a function computing the gradients of fn (see the file comment for the
/// result structures). grad(fn) differentiates with respect to the first argument.
template <class F, class Pos = boost::hana::int_<0>, class W = none_t, class Aux = std::false_type,
          class Ids = std::false_type>
auto grad(F fn, Pos = {}, W weights = {}, Aux = {}, Ids = {}) {
  static_assert(detail::check_grad_arguments<Pos, W>());
  (void)detail::weights_spec<W>::any;
  return detail::grad_function<F, Pos, W, detail::aux_value<Aux>(), detail::ids_value<Ids>(), false>(
      std::move(fn), std::move(weights));
}

/// mindspore.value_and_grad: like grad, returning std::tuple(fn's outputs as values, gradients);
/// with several outputs (has_aux) the value is the tuple of all of them.
template <class F, class Pos = boost::hana::int_<0>, class W = none_t, class Aux = std::false_type>
auto value_and_grad(F fn, Pos = {}, W weights = {}, Aux = {}) {
  static_assert(detail::check_grad_arguments<Pos, W>());
  (void)detail::weights_spec<W>::any;
  return detail::grad_function<F, Pos, W, detail::aux_value<Aux>(), false, true>(std::move(fn), std::move(weights));
}

/// mindspore.ops.GradOperation: grad_operation<grad_options{.get_all = true}>(fn)(x, y).
template <grad_options O = grad_options{}>
inline constexpr detail::grad_operation_t<O> grad_operation{};

/// mindspore.get_grad for a return_ids result: the gradient of input `position`.
template <class Grads>
auto get_grad(Grads const& grads, int position);
/// mindspore.get_grad for a return_ids result: the gradient of parameter p.
template <class Grads, class T>
tensor<T> get_grad(Grads const& grads, parameter<T> const& p);

namespace detail {

template <class X>
struct id_pairs {
  using positions = mp::mp_list<>;  // the G of every pair<int, G>
};
template <class G>
struct id_pairs<std::pair<int, G>> {
  using positions = mp::mp_list<G>;
};
template <class... X>
struct id_pairs<std::tuple<X...>> {
  using positions = mp::mp_append<typename id_pairs<X>::positions...>;
};

template <class G, class X, class Found>
void find_position(X const& x, int position, Found& found) {
  if constexpr (std::is_same_v<X, std::pair<int, G>>) {
    if (!found && x.first == position) found = x.second;
  } else if constexpr (is_tuple_like<X>::value) {
    std::apply([&](auto const&... e) { (find_position<G>(e, position, found), ...); }, x);
  }
}
template <class T, class X>
void find_parameter(X const& x, std::string const& name, std::optional<tensor<T>>& found) {
  if constexpr (std::is_same_v<X, std::pair<std::string, tensor<T>>>) {
    if (!found && x.first == name) found = x.second;
  } else if constexpr (std::is_same_v<X, std::vector<std::pair<std::string, tensor<T>>>>) {
    for (auto const& e : x) find_parameter<T>(e, name, found);
  } else if constexpr (is_tuple_like<X>::value) {
    std::apply([&](auto const&... e) { (find_parameter<T>(e, name, found), ...); }, x);
  }
}

}  // namespace detail

template <class Grads>
auto get_grad(Grads const& grads, int position) {
  using found_types = detail::mp::mp_unique<typename detail::id_pairs<Grads>::positions>;
  static_assert(detail::mp::mp_size<found_types>::value == 1,
                "adx: get_grad by position needs a return_ids result whose input gradients all have one type");
  using G = detail::mp::mp_front<found_types>;
  std::optional<G> found;
  detail::find_position<G>(grads, position, found);
  if (!found)
    throw value_error("adx: get_grad: position " + std::to_string(position) +
                      " is not in the gradients (they must come from grad(..., return_ids))");
  return *found;
}

template <class Grads, class T>
tensor<T> get_grad(Grads const& grads, parameter<T> const& p) {
  std::optional<tensor<T>> found;
  detail::find_parameter<T>(grads, p.name(), found);
  if (!found)
    throw value_error("adx: get_grad: parameter '" + p.name() +
                      "' is not in the gradients (they must come from grad(..., weights, ..., return_ids))");
  return *found;
}

}  // namespace adx
