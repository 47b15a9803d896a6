// SPDX-License-Identifier: MIT
// adx: MindSpore's grad arguments (api/mindspore.hpp): the compile-time tags none, position<P>,
// positions<P...>, has_aux and return_ids, GradOperation's grad_options; grad_position and the
// weights as compile-time specifications; and the selected arguments made independent variables
// at the call's level, fn called on them, and what it returned recorded.
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
#include "adx/api/parameter.hpp"

namespace adx {

/// MindSpore's None for grad_position and weights.
struct none_t {
  /// Every none is the same.
  friend constexpr bool operator==(none_t, none_t) noexcept { return true; }
};
inline constexpr none_t none{};

/// grad_position = P (one gradient) and grad_position = (P...) (a tuple of gradients).
template <int P>
inline constexpr boost::hana::int_<P> position{};
template <int... P>
inline constexpr auto positions = boost::hana::tuple_c<int, P...>;

/// The type of has_aux / no_aux: a compile-time flag (it changes the result's type), of a type
/// of its own so that it cannot stand in for return_ids, or return_ids for it.
template <bool On>
struct aux_option : std::bool_constant<On> {};
/// The type of return_ids / no_ids.
template <bool On>
struct ids_option : std::bool_constant<On> {};
/// has_aux and return_ids, as compile-time flags (they change the result's type).
inline constexpr aux_option<true> has_aux{};
inline constexpr aux_option<false> no_aux{};
inline constexpr ids_option<true> return_ids{};
inline constexpr ids_option<false> no_ids{};

/// GradOperation's three flags.
struct grad_options {
  bool get_all = false;      ///< gradients of every positional input (else of the first)
  bool get_by_list = false;  ///< gradients of the weights passed beside the function
  bool sens_param = false;   ///< the last argument is the output's sensitivity (the seed)
};

namespace detail {

namespace mp = boost::mp11;

// ---- grad_position: a compile-time list of positions ---------------------------------------

template <class P>
struct position_spec {
  static_assert(sizeof(P) == 0,
                "adx: grad_position must be int or tuple: write adx::position<N>, adx::positions<N...> or adx::none "
                "(the positions are compile-time constants because they decide the result's type)");
};
template <class I, I P>
struct position_spec<std::integral_constant<I, P>> {
  static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool>, "adx: grad_position must be int or tuple");
  using list = mp::mp_list<mp::mp_int<static_cast<int>(P)>>;
  static constexpr bool single = true;
};
template <class I, I P>
struct position_spec<boost::hana::integral_constant<I, P>> : position_spec<std::integral_constant<I, P>> {};
template <class... P>
struct position_spec<boost::hana::tuple<P...>> {
  using list = mp::mp_append<typename position_spec<P>::list...>;
  static constexpr bool single = sizeof...(P) == 1;  // (p,) is the same as p
};
template <class... P>
struct position_spec<std::tuple<P...>> : position_spec<boost::hana::tuple<P...>> {};
template <>
struct position_spec<none_t> {
  using list = mp::mp_list<>;
  static constexpr bool single = false;
};

template <class L>
constexpr bool positions_nonnegative() {
  bool ok = true;
  mp::mp_for_each<L>([&](auto p) { ok = ok && decltype(p)::value >= 0; });
  return ok;
}

/// MindSpore's checks of grad_position and weights; true (evaluated in a static_assert, so that
/// its messages come before any error the arguments' later use would cause).
template <class Pos, class W>
constexpr bool check_grad_arguments() {
  using spec = position_spec<Pos>;
  static_assert(!(std::is_same_v<Pos, none_t> && std::is_same_v<W, none_t>),
                "adx: `grad_position` and `weight` can not be None at the same time.");
  static_assert(std::is_same_v<Pos, none_t> || mp::mp_size<typename spec::list>::value > 0,
                "adx: grad_position is an empty tuple: select at least one position (MindSpore: RuntimeError)");
  static_assert(positions_nonnegative<typename spec::list>(), "adx: grad_position must be >= 0.");
  static_assert(mp::mp_is_set<typename spec::list>::value,
                "adx: There are duplicate positions in `grad_position`, please check it");
  return true;
}

template <class F>
constexpr bool flag_value() {
  static_assert(
      requires { std::bool_constant<F::value>{}; },
      "adx: has_aux and return_ids are compile-time flags (they change the result's type): pass adx::has_aux "
      "or adx::no_aux, adx::return_ids or adx::no_ids");
  return F::value;
}
template <class F>
inline constexpr bool is_aux_option = false;
template <bool On>
inline constexpr bool is_aux_option<aux_option<On>> = true;
template <class F>
inline constexpr bool is_ids_option = false;
template <bool On>
inline constexpr bool is_ids_option<ids_option<On>> = true;
/// The has_aux argument's value; return_ids in its place is a compile error.
template <class F>
constexpr bool aux_value() {
  static_assert(!is_ids_option<F>,
                "adx: return_ids was passed where has_aux goes (grad(fn, grad_position, weights, has_aux, "
                "return_ids)): pass adx::no_aux (or adx::has_aux) before adx::return_ids");
  return flag_value<F>();
}
/// The return_ids argument's value; has_aux in its place is a compile error.
template <class F>
constexpr bool ids_value() {
  static_assert(!is_aux_option<F>,
                "adx: has_aux was passed where return_ids goes (grad(fn, grad_position, weights, has_aux, "
                "return_ids))");
  return flag_value<F>();
}

// ---- the weights --------------------------------------------------------------------------

template <class W>
struct weights_spec;  // none, one parameter, or a list
/// has_aux in the weights' place: a compile error at the first look at the weights.
template <bool On>
struct weights_spec<aux_option<On>> {
  static_assert(On != On,
                "adx: has_aux was passed where the weights go (grad(fn, grad_position, weights, has_aux, "
                "return_ids)): pass adx::none as the weights before it");
  static constexpr bool any = false;
};
/// return_ids in the weights' place, likewise.
template <bool On>
struct weights_spec<ids_option<On>> {
  static_assert(On != On,
                "adx: return_ids was passed where the weights go (grad(fn, grad_position, weights, has_aux, "
                "return_ids)): pass adx::none and adx::no_aux before it");
  static constexpr bool any = false;
};
template <>
struct weights_spec<none_t> {
  using element = void;
  static constexpr bool any = false;
  template <class T>
  static std::vector<parameter<T>*> all(none_t const&) {
    return {};
  }
};
template <class T>
struct weights_spec<parameter<T>> {
  using element = T;
  static constexpr bool any = true;
  template <class>
  static std::vector<parameter<T>*> all(parameter<T> const& p) {
    return {const_cast<parameter<T>*>(&p)};
  }
};
template <class T>
struct weights_spec<parameter_list<T>> {
  using element = T;
  static constexpr bool any = true;
  template <class>
  static std::vector<parameter<T>*> all(parameter_list<T> const& l) {
    std::vector<parameter<T>*> out;
    for (auto const& r : l) out.push_back(&r.get());
    return out;
  }
};

// ---- arguments: lifting the selected ones -------------------------------------------------

template <class X>
struct arg_scalar {  // a tensor's elements; a scalar, or anything grad does not lift, as it is
  using type = std::conditional_t<kind_of<X>::is_tensor, element_of<X>, X>;
};
template <class X>
requires(ad_expression<X> || (tensor_operand<X> && !tensor_type<X>)) struct arg_scalar<X> {
  using type = scalar_in_t<X>;  // an unevaluated expression: the scalar of its value
};
template <class T>
struct arg_scalar<parameter<T>> {  // not an argument grad can lift (see lift): named for its message only
  using type = T;
};
template <class X>
using arg_scalar_t = typename arg_scalar<std::remove_cvref_t<X>>::type;

template <class X>
inline constexpr bool is_parameter_v = false;
template <class T>
inline constexpr bool is_parameter_v<parameter<T>> = true;

template <class X>
constexpr bool differentiable_arg() {
  using S = arg_scalar_t<X>;
  return std::is_floating_point_v<S> || ad_scalar<S>;
}

/// The selected argument made independent variables at the call's level S: tensor<U> ->
/// tensor<var<S>> (U is S, or a lower level taken to S as a constant).
template <class S, class X>
auto lift(X const& x) {
  static_assert(!is_parameter_v<X>,
                "adx: grad_position selects a parameter: differentiate parameters as weights (grad(fn, "
                "grad_position, weights)), or pass their values (w.values()) as the argument");
  static_assert(differentiable_arg<X>(),
                "adx: grad_position selects an argument that is not floating point (only tensors and scalars of "
                "floating-point or AD type can require gradients)");
  if constexpr (is_parameter_v<X>) {
    return tensor<var<S>>(x.shape());  // not reached: the static_assert above stops the build
  } else if constexpr (tensor_operand<X> && !tensor_type<X>) {
    return lift<S>(adx::eval(x));
  } else if constexpr (tensor_type<X>) {
    tensor<var<S>> t(x.shape());
    var<S>* o = t.data();
    for (std::size_t i = 0; i < x.size(); ++i) o[i] = var<S>(to_value<S>(x.data()[i]));
    return t;
  } else {
    return var<S>(to_value<S>(x));
  }
}

template <class X>
struct is_tuple_like : std::false_type {};
template <class... X>
struct is_tuple_like<std::tuple<X...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class X>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};

/// Applies f to each element of a std::tuple, std::pair or std::vector output, keeping the
/// structure (the element type of a vector may change).
template <class X, class F>
auto map_output(X const& x, F&& f) {
  if constexpr (is_pair<X>::value) {
    return std::make_pair(f(x.first), f(x.second));
  } else if constexpr (is_tuple_like<X>::value) {
    return std::apply([&](auto const&... e) { return std::make_tuple(f(e)...); }, x);
  } else {
    std::vector<std::remove_cvref_t<decltype(f(x.front()))>> r;
    r.reserve(x.size());
    for (auto const& e : x) r.push_back(f(e));
    return r;
  }
}
template <class W, std::size_t M>
constexpr bool is_tuple_of_size() {
  if constexpr (is_tuple_like<W>::value)
    return std::tuple_size_v<W> == M;
  else
    return false;
}
template <class X>
inline constexpr bool is_output_structure = is_tuple_like<X>::value || is_std_vector<X>::value;

/// An output of fn with every expression in it evaluated (recorded), also inside nested
/// tuples, pairs and std::vectors.
template <class X>
auto active_output(X const& x) {
  if constexpr (is_output_structure<X>)
    return map_output(x, [](auto const& e) { return active_output(e); });
  else
    return to_active(x);
}

/// The AD nesting level of a tensor's elements (0 for anything else).
template <class Y>
constexpr int element_level() {
  if constexpr (tensor_type<Y>)
    return level_v<typename Y::value_type>;
  else
    return 0;
}

/// A value with the tape level S taken off (outputs returned as values, aux outputs), also
/// inside nested tuples, pairs and std::vectors: nothing returned refers to the call's
/// recording, which has ended.
template <class S, class X>
auto output_value(X const& x0) {
  if constexpr (is_output_structure<X>) {
    return map_output(x0, [](auto const& e) { return output_value<S>(e); });
  } else {
    auto const x = to_active(x0);
    using A = std::remove_cvref_t<decltype(x)>;
    if constexpr (std::is_same_v<A, var<S>>)
      return x.value();
    else if constexpr (std::is_same_v<A, tensor<var<S>>>)
      return x.values();
    else if constexpr (ad_scalar<A> && (level_v<A> > level_v<var<S>>))
      return output_value<S>(x.value());  // made with a captured variable of a higher level
    else if constexpr (element_level<A>() > level_v<var<S>>)
      return output_value<S>(x.values());
    else
      return x;
  }
}

/// fn's outputs as a std::tuple (one entry per top-level output).
template <class O>
auto outputs_tuple(O&& o) {
  if constexpr (is_tuple_like<std::remove_cvref_t<O>>::value)
    return std::apply([](auto&&... e) { return std::make_tuple(active_output(e)...); }, o);
  else
    return std::make_tuple(active_output(o));
}

/// The sens of an output when sens_param is off: ones.
struct no_sens {};

/// The sens of element J of a tuple output whose sens is *w (none for no_sens).
template <std::size_t J, class Wt>
auto sens_element(Wt const* w) {
  if constexpr (std::is_same_v<Wt, no_sens>)
    return w;
  else
    return &std::get<J>(*w);
}

/// Seeds the sweep with output y weighted by w (ones for no_sens); y not active at level S (a
/// constant of fn) adds nothing. A tuple, pair or std::vector output contributes each of its
/// elements (nested too), and its sens has the same structure. k: the top-level output, for
/// messages.
template <class S, class Y, class Wt>
void seed_output(sweep_request<S>& request, Y const& y, Wt const* w, std::size_t k) {
  constexpr bool weighted = !std::is_same_v<Wt, no_sens>;
  if constexpr (is_tuple_like<Y>::value) {
    constexpr std::size_t m = std::tuple_size_v<Y>;
    if constexpr (weighted)
      static_assert(is_tuple_of_size<Wt, m>(),
                    "adx: the sens for a tuple (or pair) output must be a std::tuple (or std::pair) with one entry "
                    "per element of the output");
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (seed_output<S, std::tuple_element_t<J, Y>>(request, std::get<J>(y), sens_element<J>(w), k), ...);
    }
    (std::make_index_sequence<m>{});
  } else if constexpr (is_std_vector<Y>::value) {
    if constexpr (weighted) {
      static_assert(is_std_vector<Wt>::value, "adx: the sens for a std::vector output must be a std::vector");
      if (w->size() != y.size())
        throw value_error("adx: sens for output " + std::to_string(k) + " is a list of " + std::to_string(w->size()) +
                          " entries and the output a list of " + std::to_string(y.size()));
      for (std::size_t i = 0; i < y.size(); ++i)
        seed_output<S, typename Y::value_type, typename Wt::value_type>(request, y[i], &(*w)[i], k);
    } else {
      for (auto const& e : y) seed_output<S, typename Y::value_type, no_sens>(request, e, nullptr, k);
    }
  } else if constexpr (std::is_same_v<Y, var<S>>) {
    S wk = constant<S>(1);
    if constexpr (weighted) {
      if constexpr (tensor_type<Wt>) {
        if (w->size() != 1)
          throw value_error("adx: sens for output " + std::to_string(k) + " has shape " + w->shape().str() +
                            " and the output is a scalar");
        wk = S(w->data()[0]);
      } else {
        wk = S(*w);
      }
    }
    if (y.index()) request.seed(y, wk);
  } else if constexpr (std::is_same_v<Y, tensor<var<S>>>) {
    if constexpr (weighted) {
      // a sens of plain numbers (or of a lower level) inside a nested call is a constant there
      if constexpr (tensor_type<Wt> && std::is_constructible_v<S, typename Wt::value_type>) {
        if (w->shape() != y.shape())
          throw value_error("adx: sens for output " + std::to_string(k) + " has shape " + w->shape().str() +
                            " and the output has shape " + y.shape().str());
      } else {
        static_assert(sizeof(Wt) == 0, "adx: the sens for a tensor output must be a tensor of the output's shape");
      }
    }
    for (std::size_t i = 0; i < y.size(); ++i)
      if (y.data()[i].index()) {
        S wk = constant<S>(1);
        if constexpr (weighted) wk = S(w->data()[i]);
        request.seed(y.data()[i], wk);
      }
  } else if constexpr (ad_scalar<Y> && (level_v<Y> > level_v<var<S>>)) {
    // fn mixed the call's variables with a variable of a higher nesting level it captured (a
    // constant at this call's level): what depends on the arguments is the output's value at
    // level S
    seed_output<S, std::remove_cvref_t<decltype(y.value())>, Wt>(request, y.value(), w, k);
  } else if constexpr (element_level<Y>() > level_v<var<S>>) {
    seed_output<S, std::remove_cvref_t<decltype(y.values())>, Wt>(request, y.values(), w, k);
  } else {
    static_assert(std::is_arithmetic_v<Y> || tensor_type<Y> || ad_scalar<Y>,
                  "adx: grad: fn returned an output that is not a number, a tensor, an AD scalar, or a std::tuple, "
                  "std::pair or std::vector of them; such an output cannot be differentiated");
    // a constant of fn (a number, a tensor of numbers, an argument passed through) adds nothing
  }
}

/// Pushes a recording on tape<S> alone for the call (the tapes below keep what the sweep
/// records there, so gradients of nested types stay differentiable after it).
template <class S>
struct frame_guard {
  frame_guard() { tape<S>::current().push_frame(); }
  frame_guard(frame_guard const&) = delete;
  frame_guard& operator=(frame_guard const&) = delete;
  ~frame_guard() { tape<S>::current().pop_frame(); }
};

template <class A, class B>
using higher_level = std::conditional_t<(level_v<B> > level_v<A>), B, A>;

/// The tape level S of a call: the scalar type of the selected arguments (or of the weights),
/// raised to the highest AD level among all arguments, so that inside grad(grad(f)) an argument
/// the outer call made active is differentiated at its own level and the inner gradient stays
/// differentiable.
template <class PosList, class W, class... Args>
struct call_level {
  template <class P>
  using arg_at = arg_scalar_t<mp::mp_at_c<mp::mp_list<Args...>, P::value>>;
  using from_args = mp::mp_transform<arg_at, PosList>;
  using from_weights =
      std::conditional_t<weights_spec<W>::any, mp::mp_list<typename weights_spec<W>::element>, mp::mp_list<>>;
  using selected = mp::mp_append<from_args, from_weights>;
  using type = mp::mp_fold<mp::mp_list<arg_scalar_t<Args>...>,
                           mp::mp_fold<selected, mp::mp_front<selected>, higher_level>, higher_level>;
  template <class X>
  using fits = mp::mp_bool < std::is_same_v<X, type> ||
               level_v<X><level_v<type> || (std::is_arithmetic_v<X> && std::is_arithmetic_v<type>)>;
  static_assert(mp::mp_all_of<from_args, fits>::value,
                "adx: the differentiated arguments mix AD types of one nesting level (say dual<double> and "
                "var<double>); make them one type");
  template <class X>
  using same_precision = std::is_same<innermost_t<X>, innermost_t<type>>;
  static_assert(mp::mp_all_of<selected, same_precision>::value,
                "adx: the differentiated arguments (and weights) mix precisions (say float and double), with each "
                "other or with an AD argument: one call differentiates on one tape type; convert them to one "
                "floating-point type");
  static_assert(!weights_spec<W>::any || std::is_same_v<typename weights_spec<W>::element, type>,
                "adx: weights are parameter<T> with T the scalar type of the arguments (parameters are not lifted "
                "to a nested level: differentiate nested calls with respect to arguments)");
};

template <int I, class L>
constexpr bool is_selected() {
  return mp::mp_contains<L, mp::mp_int<I>>::value;
}

/// The scalar S of a call (its variables are var<S>): call_level's, raised to the level of the
/// variables fn captures (api/level.hpp), so that a grad inside a grad through a closure
/// differentiates the composition. With weights the call is at the weights' level.
template <class PosList, class F, class W, class... Args>
struct grad_level {
  using base = typename call_level<PosList, W, Args...>::type;
  template <class S, int K, class X>
  using arg_as =
      std::conditional_t<is_selected<K, PosList>(), std::conditional_t<tensor_operand<X>, tensor<var<S>>, var<S>>, X>;
  template <class S, std::size_t... K>
  static auto callable_with(std::index_sequence<K...>)
      -> std::is_invocable<F const&, arg_as<S, static_cast<int>(K), Args> const&...>;
  template <class S>
  using callable_at = decltype(callable_with<S>(std::index_sequence_for<Args...>{}));
  using type = std::conditional_t<weights_spec<W>::any, base,
                                  lift_scalar_t<base, typename captured_scalar<F, Args...>::type, callable_at>>;
};

template <class L>
constexpr auto position_array() {
  std::array<int, mp::mp_size<L>::value> a{};
  std::size_t k = 0;
  mp::mp_for_each<L>([&](auto p) { a[k++] = decltype(p)::value; });
  return a;
}

template <class Values, class In, class G>
struct call_result {
  Values values;
  In inputs;
  std::vector<G> weights;
  std::vector<std::string> names;
};

/// One call of a gradient function. Returns (fn's outputs as values, input gradients as a
/// tuple in position order, weight gradients).
template <class PosList, class W, bool Aux, class F, class SensT, class... Args, std::size_t... I>
auto differentiate(F const& fn, W const& weights, SensT const* sens, std::index_sequence<I...>, Args const&... args) {
  mp::mp_for_each<PosList>([](auto p) {
    static_assert(decltype(p)::value < static_cast<int>(sizeof...(Args)),
                  "adx: grad_position selects a position beyond fn's arguments (MindSpore: IndexError)");
  });
  using S = typename grad_level<PosList, F, W, Args...>::type;
  parameter_registry<S>::refresh_all();
  std::vector<parameter<S>*> const wlist = weights_spec<W>::template all<S>(weights);
  enable_grad recording_on;  // a transform records its own graph even inside no_grad
  frame_guard<S> frame;

  auto const arg_tuple = std::forward_as_tuple(args...);
  auto pick = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) -> decltype(auto) {
    if constexpr (is_selected<static_cast<int>(K), PosList>())
      return lift<S>(std::get<K>(arg_tuple));
    else
      return std::cref(std::get<K>(arg_tuple));
  };
  auto lifted = std::make_tuple(pick(std::integral_constant<std::size_t, I>{})...);
  auto unwrap = []<class X>(X const& x) -> decltype(auto) {
    if constexpr (requires { x.get(); } && !tensor_type<X> && !ad_scalar<X>)
      return x.get();
    else
      return (x);
  };
  (void)pick;  // fn may take no arguments (only weights)
  (void)unwrap;
  auto outs = outputs_tuple(fn(unwrap(std::get<I>(lifted))...));
  constexpr std::size_t n_out = std::tuple_size_v<decltype(outs)>;
  static_assert(!Aux || n_out >= 2, "adx: When 'has_aux' is True, origin 'fn' requires more than one outputs.");

  sweep_request<S> request;
  mp::mp_for_each<mp::mp_iota_c<Aux ? 1 : n_out>>([&](auto k) {
    constexpr std::size_t K = decltype(k)::value;
    using Y = std::tuple_element_t<K, decltype(outs)>;
    if constexpr (std::is_same_v<SensT, void>) {
      seed_output<S, Y, no_sens>(request, std::get<K>(outs), nullptr, K);
    } else if constexpr (is_tuple_like<SensT>::value) {
      static_assert(std::tuple_size_v<SensT> == n_out, "adx: sens must have one entry per output of fn");
      auto const& w = std::get<K>(*sens);
      seed_output<S, Y, std::remove_cvref_t<decltype(w)>>(request, std::get<K>(outs), &w, K);
    } else {
      static_assert(n_out == 1, "adx: fn has several outputs: sens must be a std::tuple with one entry per output");
      seed_output<S, Y, SensT>(request, std::get<K>(outs), sens, K);
    }
  });
  request.run();  // with no active output, every gradient reads zero (not the tape's last sweep)

  auto in = [&]<class... P>(mp::mp_list<P...>) {
    return std::make_tuple(adjoints(std::get<P::value>(lifted))...);
  }(PosList{});
  std::vector<tensor<S>> wg;
  for (auto* p : wlist) wg.push_back(adjoints(static_cast<tensor<var<S>> const&>(*p)));
  auto values = std::apply([](auto const&... o) { return std::make_tuple(output_value<S>(o)...); }, outs);
  std::vector<std::string> names;
  for (auto* p : wlist) names.push_back(p->name());
  // spelled out: clang 14 has no class template argument deduction for aggregates
  return call_result<decltype(values), decltype(in), tensor<S>>{std::move(values), std::move(in), std::move(wg),
                                                                std::move(names)};
}

}  // namespace detail
}  // namespace adx
