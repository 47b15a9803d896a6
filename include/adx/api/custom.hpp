// SPDX-License-Identifier: MIT
// adx: derivative rules for a user's black-box function (JAX's custom_jvp + custom_vjp, a torch
// autograd.Function).
//
//   auto f = adx::custom_function(value_fn, jvp_fn, vjp_fn);
//   value_fn(x...)            -> y                      plain numbers or tensor<double>
//   jvp_fn(x..., dx...)       -> dy                     the tangent of y (forward mode)
//   vjp_fn(x..., ybar)        -> xbar                   one cotangent per input: a value for
//                                                       one input, a std::tuple (pair, array)
//                                                       for several (reverse mode)
//
// f(args...) then works for double, dual<T>, var<T> and their nestings, with scalars or
// tensors as arguments (a tensor argument gets a tensor tangent and cotangent of its shape;
// y may be a scalar or a tensor). The arguments are taken to one AD type, the highest among
// them (a plain number next to a var is a constant).
//
//   dual<T>   y = f at the values (recursively), dy = jvp_fn(values..., tangents...)
//   var<T>    y = f at the values (recursively), and ONE tape node whose backward calls
//             vjp_fn(values..., ybar) and adds the cotangents to the inputs' adjoints
//
// The lambdas see the values one nesting level down. So first order works in every mode with
// lambdas written for double (or tensor<double>) only: double, dual<double>, var<double>,
// tensor<dual<double>>, tensor<var<double>>. Second and higher orders (var<dual<double>>,
// var<var<double>>, dual<dual<double>>, dual<var<double>>) call jvp_fn / vjp_fn with AD values,
// so they need generic lambdas (`auto` parameters, adx functions inside), whose own
// derivatives then come from adx's built-in rules. value_fn is only ever called with plain
// numbers: it may be a true black box.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/container_kind.hpp"
#include "adx/core/error.hpp"
#include "adx/core/expr.hpp"
#include "adx/forward/dual.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

/// The element type of a custom function's argument (a scalar, or a tensor's elements).
template <class X>
using custom_element_t = element_of<X>;

/// An argument evaluated: expressions into their scalar or tensor, anything else as it is.
template <class X>
auto custom_eval(X const& x) {
  if constexpr (tensor_type<X>)
    return tensor<typename X::value_type>(x);  // a parameter as its tensor
  else if constexpr (tensor_operand<X>)
    return eval(x);
  else if constexpr (ad_expression<X>)
    return ad_type_t<X>(x);
  else
    return x;
}

/// x with its elements taken to the scalar S (lower levels become constants).
template <class S, class X>
auto custom_to_level(X const& x) {
  if constexpr (std::is_same_v<X, tensor<S>> || std::is_same_v<X, S>) {
    return x;
  } else if constexpr (tensor_type<X>) {
    tensor<S> r(x.shape());
    S* o = r.data();
    for (std::size_t i = 0; i < x.size(); ++i) o[i] = to_value<S>(x.data()[i]);
    return r;
  } else {
    return to_value<S>(x);
  }
}

/// A result of a user lambda as a T or a tensor<T>.
template <class T, class Y>
auto custom_result(Y const& y) {
  if constexpr (tensor_operand<Y>)
    return custom_to_level<T>(custom_eval(y));
  else
    return to_value<T>(y);
}

template <class X>
auto custom_values(X const& x) {
  if constexpr (tensor_type<X>)
    return x.values();
  else
    return x.val();
}
template <class X>
auto custom_tangents(X const& x) {
  if constexpr (tensor_type<X>) {
    using T = value_type_t<typename X::value_type>;
    tensor<T> r(x.shape());
    T* o = r.data();
    for (std::size_t i = 0; i < x.size(); ++i) o[i] = x.data()[i].tangent();
    return r;
  } else {
    return x.tangent();
  }
}

template <class X>
shape custom_shape(X const& x) {
  if constexpr (tensor_type<X>)
    return x.shape();
  else
    return {};
}
template <class X>
std::size_t custom_size(X const& x) {
  if constexpr (tensor_type<X>)
    return x.size();
  else
    return 1;
}
template <class X>
auto const& custom_at(X const& x, std::size_t i) {
  if constexpr (tensor_type<X>) {
    return x.data()[i];
  } else {
    (void)i;
    return x;
  }
}

/// A derivative computed by a user lambda must have the shape of what it belongs to (a
/// one-element tensor may stand for a scalar and the other way round).
inline void check_custom_shape(char const* what, std::size_t k, shape const& got, shape const& want) {
  if (got == want || (got.size() == 1 && want.size() == 1)) return;
  throw value_error(std::string("adx: custom_function: the ") + what + " " + std::to_string(k) + " has shape " +
                    got.str() + " but should have shape " + want.str());
}

template <std::size_t I, std::size_t N, class G>
decltype(auto) cotangent_part(G const& g) {
  if constexpr (N == 1)
    return (g);
  else
    return std::get<I>(g);
}

/// The tape node of a custom function over var<T> arguments: its backward calls the user's
/// vjp with the argument values and the output's adjoint.
template <class T, class B, class Vals, bool TensorOut>
struct custom_node final : tape<T>::template node_with_inputs<custom_node<T, B, Vals, TensorOut>> {
  B vjp;
  Vals vals;                                   // std::tuple of the arguments' values (T or tensor<T>)
  std::vector<std::vector<index_type>> index;  // per argument, per element (0: a constant)
  shape out_shape;

  custom_node(B b, Vals v, std::vector<std::vector<index_type>> ix, shape sh)
      : vjp(std::move(b)), vals(std::move(v)), index(std::move(ix)), out_shape(sh) {}

  void backward(T* adj) const override {
    index_type const first = this->first;
    auto const ybar = [&] {
      if constexpr (TensorOut) {
        tensor<T> b(out_shape);
        T* o = b.data();
        for (std::size_t i = 0; i < b.size(); ++i) o[i] = adj[first + i];
        return b;
      } else {
        return adj[first];
      }
    }();
    // The user's vjp records as it would outside the sweep: a sweep without create_graph runs
    // under no_grad (api/sweep_request.hpp), and a vjp that takes a gradient with a tape_scope
    // and backward of its own must not see its recording turned into constants.
    enable_grad recording_on;
    auto const g = std::apply([&](auto const&... v) { return vjp(v..., ybar); }, vals);
    constexpr std::size_t N = std::tuple_size_v<Vals>;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (add_cotangent<I>(adj, custom_result<T>(cotangent_part<I, N>(g))), ...);
    }
    (std::make_index_sequence<N>{});
  }
  template <std::size_t I, class G>
  void add_cotangent(T* adj, G const& g) const {
    auto const& ix = index[I];
    check_custom_shape("cotangent returned by vjp_fn for argument", I, custom_shape(g),
                       custom_shape(std::get<I>(vals)));
    for (std::size_t j = 0; j < ix.size(); ++j)
      if (ix[j]) adj[ix[j]] += custom_at(g, custom_size(g) == 1 ? 0 : j);
  }
  template <class F>
  bool for_inputs(F&& f) const {
    for (auto const& ix : index)
      for (index_type i : ix)
        if (i && f(i, 1)) return true;
    return false;
  }
  /// What the vjp gives for a zero cotangent is the user's. The recording of a custom node is
  /// swept with reachability (tape::sweep_carefully), so the plain sweep never meets one; were
  /// it to, the answer makes it sweep again carefully.
  bool nonfinite() const override { return true; }
};

template <class X>
void collect_indices(X const& x, std::vector<index_type>& out, bool& active) {
  auto const& tp = tape<value_type_t<custom_element_t<X>>>::current();
  epoch_type live = 0;
  for (std::size_t i = 0; i < custom_size(x); ++i) {
    auto const& e = custom_at(x, i);
    if (e.index() != 0) tp.check_live(e.epoch(), live);
    out.push_back(e.index());
    active |= e.index() != 0;
  }
}

}  // namespace detail

/// A function with user-given derivative rules; see the file comment.
template <class V, class J, class B>
class custom_function {
 public:
  /// value_fn(x...) on plain numbers; jvp_fn(x..., dx...) the tangent; vjp_fn(x..., ybar) the
  /// cotangents, one per input (a tuple for several).
  custom_function(V value_fn, J jvp_fn, B vjp_fn)
      : value_(std::move(value_fn)), jvp_(std::move(jvp_fn)), vjp_(std::move(vjp_fn)) {}

  /// The function at x... (numbers, AD scalars or tensors of them): value_fn on the values, and
  /// the derivative through jvp_fn (forward) or vjp_fn (reverse), at every nesting level.
  template <class... X>
  requires(sizeof...(X) > 0) auto operator()(X const&... x) const { return call(detail::custom_eval(x)...); }

 private:
  template <class... X>
  auto call(X const&... x) const {
    constexpr int L = std::max({level_v<detail::custom_element_t<X>>...});
    if constexpr (L == 0) {
      auto y = value_(x...);
      if constexpr (tensor_operand<decltype(y)>)
        return detail::custom_eval(y);
      else
        return y;
    } else {
      using S = detail::top_ad_t<L, detail::custom_element_t<X>...>;
      return at_level<S>(detail::custom_to_level<S>(x)...);
    }
  }

  template <class S, class... X>
  auto at_level(X const&... x) const {
    using T = value_type_t<S>;
    auto const y0 = call(detail::custom_values(x)...);  // f one level down (recursively)
    auto const y = detail::custom_result<T>(y0);
    constexpr bool tensor_out = tensor_type<decltype(y)>;
    if constexpr (!is_reverse_v<S>) {  // dual<T>
      auto const t = detail::custom_result<T>(jvp_(detail::custom_values(x)..., detail::custom_tangents(x)...));
      detail::check_custom_shape("tangent returned by jvp_fn for output", 0, detail::custom_shape(t),
                                 detail::custom_shape(y));
      if constexpr (tensor_out) {
        tensor<S> r(y.shape());
        S* o = r.data();
        for (std::size_t i = 0; i < y.size(); ++i) o[i] = S(y.data()[i], detail::custom_at(t, t.size() == 1 ? 0 : i));
        return r;
      } else {
        return S(y, detail::custom_at(t, 0));
      }
    } else {  // var<T>: one node whose backward calls vjp_fn
      std::vector<std::vector<index_type>> index(sizeof...(X));
      bool active = false;
      std::size_t k = 0;
      ((detail::collect_indices(x, index[k++], active)), ...);
      std::size_t const m = detail::custom_size(y);
      auto constant_result = [&] {
        if constexpr (tensor_out) {
          tensor<S> r(y.shape());
          for (std::size_t i = 0; i < m; ++i) r.data()[i] = S::constant(y.data()[i]);
          return r;
        } else {
          return S::constant(y);
        }
      };
      if (!active || m == 0 || !detail::grad_enabled()) return constant_result();
      auto vals = std::make_tuple(detail::custom_values(x)...);
      using node = detail::custom_node<T, B, decltype(vals), tensor_out>;
      auto& tp = tape<T>::current();
      index_type const first =
          tp.record_node(std::make_unique<node>(vjp_, std::move(vals), std::move(index), detail::custom_shape(y)),
                         static_cast<index_type>(m), "custom_function");
      tp.sweep_carefully();
      epoch_type const ep = tp.epoch();
      if constexpr (tensor_out) {
        tensor<S> r(y.shape());
        for (std::size_t i = 0; i < m; ++i)
          r.data()[i] = S::recorded(y.data()[i], first + static_cast<index_type>(i), ep);
        return r;
      } else {
        return S::recorded(y, first, ep);
      }
    }
  }

  V value_;
  J jvp_;
  B vjp_;
};

}  // namespace adx
