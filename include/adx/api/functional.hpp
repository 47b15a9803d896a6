// SPDX-License-Identifier: MIT
// adx: function transforms in the manner of torch.func / torch.autograd.functional and JAX
// (namespace adx::functional), and MindSpore's jvp and vjp (namespace adx, beside adx::grad).
//
//   functional::jacobian(f, x[, strategy])   shape out.shape + in.shape; forward or reverse mode
//   functional::jacfwd(f, x), jacrev(f, x)   the same with the mode fixed
//   functional::hessian(f, x)                shape in.shape + in.shape; forward-over-reverse
//   functional::jvp(f, x, v)                 (f(x), J v), one forward pass
//   functional::vjp(f, x)                    (f(x), vjp_fn); vjp_fn(v) = v^T J, one sweep per call
//   functional::hvp(f, x, v)                 (f(x), H v), one forward-over-reverse sweep
//   jvp(fn, inputs, v[, has_aux])            mindspore.jvp
//   vjp(fn, inputs...[, has_aux])            mindspore.vjp
//
// x is a floating-point scalar R, a std::vector<R> or a tensor<R>, or a std::tuple of them (then
// f takes them as separate arguments, and jacobian gives a std::tuple, hessian a tuple of
// tuples H[i][j]). f is written over a generic scalar (a lambda taking `auto const&`): it is
// called with dual<R>, var<R> or var<dual<R>> in the same containers, and returns a scalar, a
// std::vector or a tensor (or an expression of them). R may itself be an AD type, so the
// transforms nest (jacobian of a jacobian).
//
// Each call opens its own recording (on tape<R> only, so that what a nested sweep records on
// the tapes below stays usable) and holds an enable_grad: an outer no_grad does not apply to it.
// vjp keeps its recording in a private tape owned by vjp_fn (shared by its copies), so vjp_fn
// may be called any number of times, later, after other recordings; f must then use only its
// arguments and plain constants (a var captured from another recording is a stale_variable_error).
// vjp_fn is used by one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/containers.hpp"
#include "adx/api/gradients.hpp"
#include "adx/api/level.hpp"
#include "adx/api/mindspore.hpp"
#include "adx/core/error.hpp"
#include "adx/forward/dual.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace functional {

/// How jacobian computes: automatic takes forward mode (one pass per input element) when the
/// inputs have fewer elements than the output, reverse mode (one sweep per output element)
/// otherwise.
enum class jacobian_strategy { automatic, forward, reverse };

}  // namespace functional

namespace detail {

// ---- jacobian ------------------------------------------------------------------------------

template <class R, class Tup>
auto jacobian_tensors(Tup const& xs, shape const& out, std::vector<std::vector<R>>& blocks) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(
        tensor<R>(concat(out, kind_of<std::tuple_element_t<I, Tup>>::shape_of(std::get<I>(xs))), blocks[I])...);
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

/// Reverse mode: one recording, one sweep per output element.
template <class R, class F, class Tup>
auto jacobian_reverse_at(F const& f, Tup const& xs) {
  using S = var<R>;
  enable_grad recording_on;
  frame_guard<R> frame;
  auto const xv = map_inputs<S>(xs, [](std::size_t, std::size_t, auto const& r) { return S(to_value<R>(r)); });
  auto const y = evaluated(call_unpacked(f, xv));
  using YK = kind_of<decltype(y)>;
  std::size_t const m = YK::size(y);
  auto const n = input_sizes(xs);
  std::vector<std::vector<R>> blocks(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) blocks[i].assign(m * n[i], constant<R>(0));
  for (std::size_t k = 0; k < m; ++k) {
    S const yk = output_element<S>(YK::at(y, k));
    if (yk.index() == 0) continue;  // a constant output: its row is zero
    sweep_from(yk);                 // from this element alone (through the tensor operation that made it)
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            auto const& x = std::get<I>(xv);
            using XK = kind_of<decltype(x)>;
            for (std::size_t j = 0; j < n[I]; ++j) blocks[I][k * n[I] + j] = XK::at(x, j).adjoint();
          }(),
          ...);
    }
    (std::make_index_sequence<std::tuple_size_v<Tup>>{});
  }
  return jacobian_tensors<R>(xs, YK::shape_of(y), blocks);
}

template <class F, class Tup>
auto jacobian_reverse(F const& f, Tup const& xs) {
  return jacobian_reverse_at<transform_scalar_t<F, Tup, call_var>>(f, xs);
}

/// Forward mode: one pass per input element (column); `c` numbers the elements of all inputs
/// in order, and c == npos seeds nothing (to learn the output's shape).
template <class R, class F, class Tup>
auto forward_column(F const& f, Tup const& xs, std::size_t c) {
  using D = dual<R>;
  auto const n = input_sizes(xs);
  std::vector<std::size_t> offset(n.size() + 1, 0);
  for (std::size_t i = 0; i < n.size(); ++i) offset[i + 1] = offset[i] + n[i];
  auto const xd = map_inputs<D>(xs, [&](std::size_t i, std::size_t j, auto const& r) {
    return D(to_value<R>(r), constant<R>(offset[i] + j == c ? 1 : 0));
  });
  return evaluated(call_unpacked(f, xd));
}

template <class F, class Tup>
auto jacobian_impl(F const& f, Tup const& xs, functional::jacobian_strategy strategy) {
  using R = transform_scalar_t<F, Tup, call_var>;
  using D = dual<R>;
  using functional::jacobian_strategy;
  if (strategy == jacobian_strategy::reverse) return jacobian_reverse_at<R>(f, xs);
  enable_grad recording_on;  // for nested R (dual<var<...>>)
  auto const n = input_sizes(xs);
  std::size_t n_total = 0;
  for (std::size_t k : n) n_total += k;
  // the first column tells the output's size, which decides the automatic strategy
  auto const y0 = forward_column<R>(f, xs, n_total > 0 ? 0 : static_cast<std::size_t>(-1));
  using YK = kind_of<decltype(y0)>;
  std::size_t const m = YK::size(y0);
  if (strategy == jacobian_strategy::automatic && !(n_total < m)) return jacobian_reverse_at<R>(f, xs);
  std::vector<std::vector<R>> blocks(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) blocks[i].assign(m * n[i], constant<R>(0));
  std::size_t i = 0, j = 0;
  for (std::size_t c = 0; c < n_total; ++c) {
    while (j == n[i]) ++i, j = 0;
    auto const y = c == 0 ? y0 : forward_column<R>(f, xs, c);
    if (YK::size(y) != m) throw error("adx: functional::jacobian: f returned outputs of different sizes");
    for (std::size_t k = 0; k < m; ++k) blocks[i][k * n[i] + j] = output_element<D>(YK::at(y, k)).tangent();
    ++j;
  }
  return jacobian_tensors<R>(xs, YK::shape_of(y0), blocks);
}

template <class Tup, class Out>
auto unpack_if_single(Out&& o) {
  if constexpr (as_tuple_t<Tup>::packed)
    return std::forward<Out>(o);
  else
    return std::get<0>(std::forward<Out>(o));
}

// ---- hessian -------------------------------------------------------------------------------

/// Second derivatives of every element of f's output by forward over reverse: one recording per
/// input element (the column whose tangent is one), one sweep per output element.
/// blocks[k][i][j]: d^2 y_k / dx_i dx_j, row-major (elements of x_i) x (elements of x_j). f must
/// give m output elements; `single` says that m is 1 because hessian asks (its message then).
template <class R>
using hessian_blocks = std::vector<std::vector<std::vector<std::vector<R>>>>;

template <class F, class Tup>
auto output_hessians(F const& f, Tup const& xs, std::size_t m, bool single) {
  using R = transform_scalar_t<F, Tup, call_var_dual>;
  using D = dual<R>;
  using S = var<D>;
  constexpr std::size_t N = std::tuple_size_v<Tup>;
  enable_grad recording_on;
  auto const n = input_sizes(xs);
  hessian_blocks<R> blocks(m, std::vector<std::vector<std::vector<R>>>(N, std::vector<std::vector<R>>(N)));
  for (auto& bk : blocks)
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < N; ++j) bk[i][j].assign(n[i] * n[j], constant<R>(0));
  for (std::size_t jb = 0; jb < N; ++jb) {
    for (std::size_t e = 0; e < n[jb]; ++e) {  // column e of input jb: tangent one there
      frame_guard<D> frame;
      auto const xv = map_inputs<S>(xs, [&](std::size_t i, std::size_t j, auto const& r) {
        return S(D(to_value<R>(r), constant<R>(i == jb && j == e ? 1 : 0)));
      });
      auto const y = evaluated(call_unpacked(f, xv));
      using YK = kind_of<decltype(y)>;
      if (YK::size(y) != m) {
        if (single)
          throw value_error(
              "adx: functional::hessian: The Tensor returned by the function given to hessian should contain a "
              "single element (it has shape " +
              YK::shape_of(y).str() + ")");
        throw error("adx: check_grad: f returned outputs of different sizes");
      }
      for (std::size_t k = 0; k < m; ++k) {
        S const yk = output_element<S>(YK::at(y, k));
        if (yk.index() == 0) continue;  // a constant: zero Hessian
        sweep_from(yk);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          (
              [&] {
                auto const& x = std::get<I>(xv);
                using XK = kind_of<decltype(x)>;
                for (std::size_t a = 0; a < n[I]; ++a)
                  blocks[k][I][jb][a * n[jb] + e] = XK::at(x, a).adjoint().tangent();
              }(),
              ...);
        }
        (std::make_index_sequence<N>{});
      }
    }
  }
  return blocks;
}

template <class F, class Tup>
auto hessian_impl(F const& f, Tup const& xs) {
  using R = transform_scalar_t<F, Tup, call_var_dual>;
  constexpr std::size_t N = std::tuple_size_v<Tup>;
  auto const blocks = output_hessians(f, xs, 1, true);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto row = [&]<std::size_t Ii>(std::integral_constant<std::size_t, Ii>) {
      auto const si = kind_of<std::tuple_element_t<Ii, Tup>>::shape_of(std::get<Ii>(xs));
      return std::make_tuple(
          tensor<R>(concat(si, kind_of<std::tuple_element_t<I, Tup>>::shape_of(std::get<I>(xs))), blocks[0][Ii][I])...);
    };
    return std::make_tuple(row(std::integral_constant<std::size_t, I>{})...);
  }
  (std::make_index_sequence<N>{});
}

// ---- jvp -----------------------------------------------------------------------------------

/// f's result at level D = dual<R> as (values, tangents), each in f's container.
template <class D, class Y>
auto split_dual(Y const& y) {
  using R = value_type_t<D>;
  using K = kind_of<Y>;
  return std::make_pair(
      K::template map<R>(y, [](std::size_t, auto const& e) { return output_element<D>(e).val(); }),
      K::template map<R>(y, [](std::size_t, auto const& e) { return output_element<D>(e).tangent(); }));
}

template <class R, class Tup, class VTup>
auto lift_with_tangents(Tup const& xs, VTup const& vs) {
  using D = dual<R>;
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(
        kind_of<std::tuple_element_t<I, Tup>>::template map<D>(std::get<I>(xs), [&](std::size_t j, auto const& r) {
          return D(to_value<R>(r), to_value<R>(kind_of<std::tuple_element_t<I, VTup>>::at(std::get<I>(vs), j)));
        })...);
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

// ---- vjp: a recording kept in a private tape -----------------------------------------------

/// Records fn on a fresh private tape. Returns the state and every output of fn (a tuple).
template <class R, class F, class Tup>
auto record_private(F const& fn, Tup const& xs) {
  using S = var<R>;
  enable_grad recording_on;
  auto tp = std::make_unique<tape<R>>();
  tape_activation<R> active(*tp);
  auto xv = map_inputs<S>(xs, [](std::size_t, std::size_t, auto const& r) { return S(to_value<R>(r)); });
  auto outs = outputs_tuple(call_unpacked(fn, xv));
  return std::make_tuple(std::move(tp), std::move(xv), std::move(outs));
}

/// Sweeps the private tape with cotangents vs (one per differentiated output) and returns the
/// inputs' cotangents as a tuple of containers of R.
template <class R, class XV, class YV, class VTup>
auto sweep_private(tape<R>& tp, XV const& xv, YV const& ys, VTup const& vs, char const* api) {
  using S = var<R>;
  enable_grad recording_on;
  tape_activation<R> active(tp);
  constexpr std::size_t M = std::tuple_size_v<YV>;
  static_assert(std::tuple_size_v<VTup> == M, "adx: vjp_fn needs one cotangent per differentiated output");
  sweep_request<R> request;
  request.track_reached = false;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (
        [&] {
          auto const& y = std::get<K>(ys);
          auto const& v = std::get<K>(vs);
          using YK = kind_of<decltype(y)>;
          using VK = kind_of<decltype(v)>;
          std::string const vname = M > 1 ? "v[" + std::to_string(K) + "]" : "v";
          std::string const oname = M > 1 ? "output " + std::to_string(K) : "the output";
          check_direction(api, vname, VK::shape_of(v), oname, YK::shape_of(y));
          for (std::size_t i = 0; i < YK::size(y); ++i) {
            S const e = output_element<S>(YK::at(y, i));
            request.seed(e, to_value<R>(VK::at(v, i)));
          }
        }(),
        ...);
  }
  (std::make_index_sequence<M>{});
  request.run();  // on tp, the active tape
  return std::apply(
      [&](auto const&... x) {
        return std::make_tuple(kind_of<decltype(x)>::template map<R>(
            x, [&](std::size_t, S const& e) { return tp.adjoint(e.index(), e.epoch()); })...);
      },
      xv);
}

/// vjp_fn: holds the recording; calling it sweeps once. Single: one input, one output (the
/// torch.func shape returns the bare cotangent); otherwise tuples.
template <class R, class XV, class YV, bool SingleIn, bool SingleOut>
class vjp_function {
 public:
  vjp_function(std::shared_ptr<tape<R>> tp, XV xv, YV ys, char const* api)
      : tp_(std::move(tp)), xv_(std::move(xv)), ys_(std::move(ys)), api_(api) {}

  template <class V>
  auto operator()(V const& v) const {
    auto vs = [&] {
      if constexpr (SingleOut)
        return std::tuple<V const&>(v);
      else
        return v;
    }();
    auto g = sweep_private(*tp_, xv_, ys_, vs, api_);
    if constexpr (SingleIn)
      return std::move(std::get<0>(g));
    else
      return g;
  }

 private:
  std::shared_ptr<tape<R>> tp_;
  XV xv_;
  YV ys_;
  char const* api_;
};

template <bool SingleIn, bool SingleOut, class R, class XV, class YV>
auto make_vjp_function(std::unique_ptr<tape<R>> tp, XV xv, YV ys, char const* api) {
  return vjp_function<R, XV, YV, SingleIn, SingleOut>(std::shared_ptr<tape<R>>(std::move(tp)), std::move(xv),
                                                      std::move(ys), api);
}

template <class S, class Outs>
auto outputs_values(Outs const& outs) {
  return std::apply([](auto const&... o) { return std::make_tuple(output_values<S>(o)...); }, outs);
}

/// MindSpore's aux for jvp and vjp: the 2nd output itself if there are exactly two, else the
/// tuple of outputs 2..n.
template <class Values>
auto ms_aux(Values&& v) {
  constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<Values>>;
  if constexpr (n == 2)
    return std::move(std::get<1>(v));
  else
    return aux_part(std::forward<Values>(v));
}

template <class A>
constexpr bool aux_flag() {
  return aux_value<A>();
}

}  // namespace detail

namespace functional {

/// The Jacobian of f at x: a tensor<R> of shape out.shape + in.shape (a std::tuple of them,
/// one per input, for a tuple x). Forward mode (one pass per input element) when the inputs
/// have fewer elements than the output, reverse mode (one sweep per output element) otherwise,
/// unless a strategy is given. Scalars have shape [], std::vectors [n].
template <class F, class X>
auto jacobian(F const& f, X const& x, jacobian_strategy strategy = jacobian_strategy::automatic) {
  auto const xs = detail::inputs_tuple(x);
  return detail::unpack_if_single<X>(detail::jacobian_impl(f, xs, strategy));
}
/// jax.jacfwd: the Jacobian by forward mode.
template <class F, class X>
auto jacfwd(F const& f, X const& x) {
  return jacobian(f, x, jacobian_strategy::forward);
}
/// jax.jacrev: the Jacobian by reverse mode.
template <class F, class X>
auto jacrev(F const& f, X const& x) {
  return jacobian(f, x, jacobian_strategy::reverse);
}

/// The Hessian of f at x: shape in.shape + in.shape, by forward-over-reverse (one recording
/// and sweep of var<dual<R>> per input element). f must return one element (a scalar or a
/// one-element tensor), else value_error. A tuple x gives a tuple of tuples H[i][j].
template <class F, class X>
auto hessian(F const& f, X const& x) {
  auto const xs = detail::inputs_tuple(x);
  auto h = detail::hessian_impl(f, xs);
  if constexpr (detail::as_tuple_t<X>::packed)
    return h;
  else
    return std::get<0>(std::get<0>(std::move(h)));
}

/// (f(x), J v) by one forward pass; v has x's structure and shapes (else shape_error naming v).
template <class F, class X, class V>
auto jvp(F const& f, X const& x, V const& v) {
  auto const xs = detail::inputs_tuple(x);
  auto const vs = detail::inputs_tuple(v);
  using R = detail::transform_scalar_t<F, decltype(xs), detail::call_dual>;
  detail::check_directions("functional::jvp", xs, vs, detail::as_tuple_t<X>::packed);
  enable_grad recording_on;
  auto const y = detail::evaluated(detail::call_unpacked(f, detail::lift_with_tangents<R>(xs, vs)));
  return detail::split_dual<dual<R>>(y);
}

/// (f(x), vjp_fn) where vjp_fn(v) = v^T J (x's structure: one cotangent, or a tuple for a
/// tuple x), v shaped like f(x). The recording is kept (in a private tape) for vjp_fn's life;
/// each call is one sweep.
template <class F, class X>
auto vjp(F const& f, X const& x) {
  auto const xs = detail::inputs_tuple(x);
  using R = detail::transform_scalar_t<F, decltype(xs), detail::call_var>;
  auto [tp, xv, outs] = detail::record_private<R>(f, xs);
  static_assert(std::tuple_size_v<decltype(outs)> == 1,
                "adx: functional::vjp takes a function with one output (use adx::vjp for MindSpore's tuples)");
  auto value = detail::output_values<var<R>>(std::get<0>(outs));
  return std::make_pair(std::move(value), detail::make_vjp_function<!detail::as_tuple_t<X>::packed, true>(
                                              std::move(tp), std::move(xv), std::move(outs), "functional::vjp"));
}

/// (f(x), H v) by one forward-over-reverse sweep; f returns one element, v has x's structure.
template <class F, class X, class V>
auto hvp(F const& f, X const& x, V const& v) {
  auto const xs = detail::inputs_tuple(x);
  auto const vs = detail::inputs_tuple(v);
  using R = detail::transform_scalar_t<F, decltype(xs), detail::call_var_dual>;
  using D = dual<R>;
  using S = var<D>;
  detail::check_directions("functional::hvp", xs, vs, detail::as_tuple_t<X>::packed);
  enable_grad recording_on;
  detail::frame_guard<D> frame;
  auto const xd = detail::lift_with_tangents<R>(xs, vs);
  auto const xv = std::apply(
      [](auto const&... e) {
        return std::make_tuple(
            detail::kind_of<decltype(e)>::template map<S>(e, [](std::size_t, D const& d) { return S(d); })...);
      },
      xd);
  auto const y = detail::evaluated(detail::call_unpacked(f, xv));
  using YK = detail::kind_of<decltype(y)>;
  if (YK::size(y) != 1)
    throw value_error("adx: functional::hvp: the function must return a single element (it has shape " +
                      YK::shape_of(y).str() + ")");
  S const y0 = detail::output_element<S>(YK::at(y, 0));
  detail::sweep_from(y0);
  auto hv = std::apply(
      [&](auto const&... e) {
        return std::make_tuple(detail::kind_of<decltype(e)>::template map<R>(e, [&](std::size_t, S const& s) {
          return y0.index() ? s.adjoint().tangent() : detail::constant<R>(0);
        })...);
      },
      xv);
  return std::make_pair(y0.value().value(), detail::unpack_if_single<X>(std::move(hv)));
}

}  // namespace functional

/// mindspore.jvp: (fn(inputs), J v) by forward mode. inputs is a tensor (or scalar) or a
/// std::tuple of them, passed to fn as separate arguments; v has the same structure and shapes.
/// With several outputs both parts are std::tuples. With has_aux only fn's first output is
/// differentiated and the result is (out1, jvp1, aux), aux being the second output itself when
/// fn returns exactly two, else the tuple of outputs 2..n.
template <class F, class X, class V, class Aux = std::false_type>
auto jvp(F const& fn, X const& inputs, V const& v, Aux = {}) {
  constexpr bool aux = detail::aux_flag<Aux>();
  auto const xs = detail::inputs_tuple(inputs);
  auto const vs = detail::inputs_tuple(v);
  static_assert(std::tuple_size_v<decltype(xs)> == std::tuple_size_v<decltype(vs)>,
                "adx: jvp: The inputs type must be a Tensor, tuple or list of Tensors: v must have the structure of "
                "inputs (one direction per input)");
  using R = detail::transform_scalar_t<F, decltype(xs), detail::call_dual>;
  using D = dual<R>;
  detail::check_directions("jvp", xs, vs, detail::as_tuple_t<X>::packed, "v", "inputs");
  enable_grad recording_on;
  auto const outs = detail::outputs_tuple(detail::call_unpacked(fn, detail::lift_with_tangents<R>(xs, vs)));
  constexpr std::size_t n_out = std::tuple_size_v<decltype(outs)>;
  static_assert(!aux || n_out >= 2, "adx: When 'has_aux' is True, origin 'fn' requires more than one outputs.");
  auto split = std::apply([](auto const&... o) { return std::make_tuple(detail::split_dual<D>(o)...); }, outs);
  auto values = std::apply([](auto&... p) { return std::make_tuple(std::move(p.first)...); }, split);
  auto tangents = std::apply([](auto&... p) { return std::make_tuple(std::move(p.second)...); }, split);
  if constexpr (aux)
    return std::make_tuple(std::move(std::get<0>(values)), std::move(std::get<0>(tangents)),
                           detail::ms_aux(std::move(values)));
  else if constexpr (n_out == 1)
    return std::make_tuple(std::move(std::get<0>(values)), std::move(std::get<0>(tangents)));
  else
    return std::make_tuple(std::move(values), std::move(tangents));
}

namespace detail {
template <bool Aux, class F, class... X>
auto ms_vjp(F const& fn, X const&... inputs) {
  auto const xs = std::tuple<X...>(inputs...);
  using R = transform_scalar_t<F, std::tuple<X...>, call_var>;
  auto [tp, xv, outs] = record_private<R>(fn, xs);
  constexpr std::size_t n_out = std::tuple_size_v<decltype(outs)>;
  static_assert(!Aux || n_out >= 2, "adx: When 'has_aux' is True, origin 'fn' requires more than one outputs.");
  auto values = outputs_values<var<R>>(outs);
  if constexpr (Aux) {
    auto first = std::make_tuple(std::get<0>(outs));
    auto f = make_vjp_function<false, true>(std::move(tp), std::move(xv), std::move(first), "vjp");
    return std::make_tuple(std::move(std::get<0>(values)), std::move(f), ms_aux(std::move(values)));
  } else {
    auto f = make_vjp_function<false, n_out == 1>(std::move(tp), std::move(xv), std::move(outs), "vjp");
    if constexpr (n_out == 1)
      return std::make_tuple(std::move(std::get<0>(values)), std::move(f));
    else
      return std::make_tuple(std::move(values), std::move(f));
  }
}
template <class A>
inline constexpr bool is_aux_tag =
    is_aux_option<A> || std::is_same_v<A, std::true_type> || std::is_same_v<A, std::false_type>;
}  // namespace detail

/// mindspore.vjp: (fn(inputs...), vjp_fn) by reverse mode; vjp_fn(v) returns a std::tuple with
/// one gradient per input (v shaped like fn's output; a std::tuple of them for several outputs).
/// A last argument adx::has_aux differentiates only the first output and returns
/// (out1, vjp_fn, aux) with aux as for jvp. The recording lives as long as vjp_fn.
template <class F, class... X>
requires(sizeof...(X) > 0) auto vjp(F const& fn, X const&... inputs) {
  using Last = std::tuple_element_t<sizeof...(X) - 1, std::tuple<X...>>;
  if constexpr (detail::is_aux_tag<Last>) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto const all = std::forward_as_tuple(inputs...);
      return detail::ms_vjp<Last::value>(fn, std::get<I>(all)...);
    }
    (std::make_index_sequence<sizeof...(X) - 1>{});
  } else {
    return detail::ms_vjp<false>(fn, inputs...);
  }
}

}  // namespace adx
