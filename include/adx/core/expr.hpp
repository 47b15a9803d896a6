// SPDX-License-Identifier: MIT
// adx: the one expression node. `a * b`, `sin(x)`, `pow(x, 2)` all build an expr<Rule, Ops...>
// whose value is computed when the node is built; its derivatives are produced only when the
// expression is assigned: as one tape statement (reverse, `push`) or one tangent (forward,
// `tangent`). Both walk the same tree and call the same rule (rules/).
//
// Closure policy: every operand is stored BY VALUE (AD scalars are small and trivially
// copyable, sub-expressions are moved in), so `auto e = a * b;`, a lambda or a helper returning
// `auto` can never dangle. A consequence worth knowing: an expression captures its operands'
// values when it is formed (assigning to `a` afterwards does not change `e`).
#pragma once

#include <algorithm>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "adx/config.hpp"
#include "adx/core/operand_pack.hpp"
#include "adx/core/source_location.hpp"
#include "adx/core/sum.hpp"
#include "adx/core/traits.hpp"
#include "adx/core/value.hpp"

namespace adx {
namespace detail {

// ---- the node -------------------------------------------------------------------------------

template <class Op>
inline constexpr bool is_active_op = (Op::n_active > 0);

template <class Rule, class... Ops>
class expr : public expr_tag {
  using active_ad = boost::mp11::mp_remove<boost::mp11::mp_list<typename Ops::ad_type...>, void>;
  static_assert(boost::mp11::mp_size<active_ad>::value > 0, "adx: internal: an expression needs an AD operand");

 public:
  using ad_type = boost::mp11::mp_front<active_ad>;
  using value_type = value_type_t<ad_type>;
  using rule = Rule;
  static constexpr std::size_t n_active = (Ops::n_active + ...);

  template <class... A>
  requires(sizeof...(A) == sizeof...(Ops) && (sizeof...(A) != 1 || !(std::is_same_v<std::remove_cvref_t<A>, expr> ||
                                                                     ...))) constexpr explicit expr(A&&... a)
      : ops_(std::in_place, std::forward<A>(a)...) {
    if constexpr (cached_derivative) {
      auto const vd = Rule::value_and_derivative(pack_get<0>(ops_).val());
      val_ = vd.first;
      d_ = vd.second;
    } else {
      val_ = compute(indices{});
    }
  }

  constexpr value_type const& val() const noexcept { return val_; }

  /// Reverse: adds (leaf, m * d leaf / d this) for every active leaf below into the writer.
  /// Pos is the position of this node's first active leaf among the statement's (the leaves
  /// are pushed depth first, left to right), for writers that want it at compile time.
  template <std::size_t Pos = 0, class W>
  ADX_ALWAYS_INLINE void push(W& w, value_type const& m) const {
    if constexpr (active<0>)
      pack_get<0>(ops_).template push<Pos>(w, to_value<value_type>(m * partial_at<0>(indices{})));
    if constexpr (active<1>)
      pack_get<1>(ops_).template push<leaf_position<W>(Pos + leaves_before<1>)>(
          w, to_value<value_type>(m * partial_at<1>(indices{})));
    if constexpr (active<2>)
      pack_get<2>(ops_).template push<leaf_position<W>(Pos + leaves_before<2>)>(
          w, to_value<value_type>(m * partial_at<2>(indices{})));
  }
  /// Reverse, at the root (multiplier one, so no multiplication), or as a term of a sum at the
  /// root (core/sum.hpp), whose leaves before it Pos counts.
  template <std::size_t Pos = 0, class W>
  ADX_ALWAYS_INLINE void push(W& w) const {
    if constexpr (active<0>) pack_get<0>(ops_).template push<Pos>(w, partial_at<0>(indices{}));
    if constexpr (active<1>)
      pack_get<1>(ops_).template push<leaf_position<W>(Pos + leaves_before<1>)>(w, partial_at<1>(indices{}));
    if constexpr (active<2>)
      pack_get<2>(ops_).template push<leaf_position<W>(Pos + leaves_before<2>)>(w, partial_at<2>(indices{}));
  }

  /// Forward: the directional derivative, sum over active operands of partial * tangent.
  constexpr value_type tangent() const {
    if constexpr (n_active_operands == 1)
      return tangent_term<first_active>();
    else if constexpr (n_active_operands == 2)
      return to_value<value_type>(tangent_term<first_active>() + tangent_term<last_active>());
    else
      return to_value<value_type>(tangent_term<0>() + tangent_term<1>() + tangent_term<2>());
  }

 private:
  // The member functions below are written out for one to three operands (every rule has at
  // most three) rather than generated with lambdas over the operand pack: each lambda would be
  // one more function per node type, and programs have thousands of node types.
  static constexpr std::size_t arity = sizeof...(Ops);
  static_assert(arity >= 1 && arity <= 3, "adx: internal: a rule takes one to three operands");
  using indices = std::index_sequence_for<Ops...>;
  using padded_ops = boost::mp11::mp_list<Ops..., const_leaf<int>, const_leaf<int>>;  // operands 0..2 exist
  template <std::size_t I>
  static constexpr bool active = I < arity&& is_active_op<boost::mp11::mp_at_c<padded_ops, I>>;
  static constexpr std::size_t n_active_operands = (std::size_t{is_active_op<Ops>} + ...);
  /// Active leaves of the operands before operand I.
  template <std::size_t I>
  static constexpr std::size_t leaves_before = [] {
    constexpr std::size_t n[] = {Ops::n_active...};
    std::size_t r = 0;
    for (std::size_t k = 0; k < I && k < arity; ++k) r += n[k];
    return r;
  }();
  static constexpr std::size_t first_active = active<0> ? 0 : active<1> ? 1 : 2;
  static constexpr std::size_t last_active = active<2> ? 2 : active<1> ? 1 : 0;

  template <std::size_t... I>
  constexpr value_type compute(std::index_sequence<I...>) const {
    return evaluate_rule<Rule, value_type>(pack_get<I>(ops_).val()...);
  }
  /// d(this)/d(operand J), as a value_type.
  template <std::size_t J, std::size_t... I>
  constexpr value_type partial_at(std::index_sequence<I...>) const {
    if constexpr (cached_derivative)
      return d_;
    else
      return to_value<value_type>(Rule::template partial<J>(pack_get<I>(ops_).val()..., val_));
  }
  template <std::size_t I>
  constexpr value_type tangent_term() const {
    return to_value<value_type>(partial_at<I>(indices{}) * pack_get<I>(ops_).tangent());
  }

  /// Unary rules whose value and derivative are cheaper together (sin and cos by sincos) give
  /// both at construction for floating-point values; the derivative is kept in the node.
  static constexpr bool cached_derivative =
      sizeof...(Ops) == 1 && std::is_floating_point_v<value_type> && requires(value_type x) {
    Rule::value_and_derivative(x);
  };
  struct no_cache {};

  operand_pack<Ops...> ops_;
  value_type val_{};
  [[no_unique_address]] std::conditional_t<cached_derivative, value_type, no_cache> d_{};
};

// ---- building nodes from user operands ------------------------------------------------------

template <class... X>
inline constexpr int max_level_v = std::max({level_v<X>...});

/// The AD scalar type of the highest-level operand among X... .
template <int L, class... X>
using top_ad_t = boost::mp11::mp_front<
    boost::mp11::mp_remove<boost::mp11::mp_list<std::conditional_t<level_v<X> == L, ad_type_t<X>, void>...>, void>>;

template <class S, class X>
inline constexpr bool operand_fits = [] {
  using D = std::remove_cvref_t<X>;
  if constexpr (level_v<D> == level_v<S>)
    return std::is_same_v<ad_type_t<D>, S>;
  else if constexpr (std::is_arithmetic_v<D>)
    return true;
  else
    return std::is_constructible_v<value_type_t<S>, D>;
}();

/// Stores an operand in a node whose scalar is S: same-level operands as themselves,
/// plain numbers as constants of the innermost type, lower-level values as constants of S's
/// value type.
template <class S, class X>
constexpr auto wrap(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (level_v<D> == level_v<S>)
    return D(std::forward<X>(x));
  else if constexpr (std::is_arithmetic_v<D>)
    return const_leaf<innermost_t<S>>{static_cast<innermost_t<S>>(x)};
  else
    return const_leaf<value_type_t<S>>{to_value<value_type_t<S>>(std::forward<X>(x))};
}

/// The type a rule returns on plain numbers: their common type, double for integers.
template <class... X>
using plain_result_t = std::conditional_t<std::is_floating_point_v<std::common_type_t<std::remove_cvref_t<X>...>>,
                                          std::common_type_t<std::remove_cvref_t<X>...>, double>;

/// The AD scalar of a node over operands X... (the highest nesting level among them).
template <class... X>
struct node_scalar {
  using type = top_ad_t<max_level_v<X...>, X...>;
  static_assert((operand_fits<type, X> && ...),
                "adx: the operands of this operation are different AD scalar types at the same nesting level "
                "(e.g. var<double> with dual<double>, or var<double> with var<float>). Nest them instead "
                "(var<dual<double>> for forward-over-reverse) or convert one side explicitly.");
};
template <class... X>
using node_scalar_t = typename node_scalar<X...>::type;
/// The node of Rule over operands X....
template <class Rule, class... X>
using node_t = expr<Rule, decltype(wrap<node_scalar_t<X...>>(std::declval<X>()))...>;

template <class X, class S>
inline constexpr bool is_sum_over = false;
template <class S, class Terms>
inline constexpr bool is_sum_over<sum_expr<S, Terms>, S> = true;

/// `x + y` or `x - y` (Neg) with an AD operand: a sum node of two terms, or x's terms and y if
/// x is a sum of the same scalar; over a forward scalar, a forward_sum (core/sum.hpp).
template <bool Neg, class X, class Y>
constexpr auto make_sum(X&& x, Y&& y) {
  using S = node_scalar_t<X, Y>;
  using B = decltype(wrap<S>(std::forward<Y>(y)));
  if constexpr (!ad_traits<S>::is_reverse) {  // forward: the value and tangent so far
    return forward_sum<S>(forward_sum_t{}, std::bool_constant<Neg>{}, wrap<S>(std::forward<X>(x)),
                          wrap<S>(std::forward<Y>(y)));
  } else if constexpr (is_sum_over<std::remove_cvref_t<X>, S>) {
    using terms = typename std::remove_cvref_t<X>::terms_type;
    return sum_expr<S, sum_terms<terms, B, Neg>>(sum_extend_t{}, x.terms(), x.val(), wrap<S>(std::forward<Y>(y)));
  } else {
    using A = decltype(wrap<S>(std::forward<X>(x)));
    return sum_expr<S, sum_terms<sum_terms<no_terms, A, false>, B, Neg>>(sum_pair_t{}, wrap<S>(std::forward<X>(x)),
                                                                         wrap<S>(std::forward<Y>(y)));
  }
}

/// Builds Rule's node over the operands, or evaluates Rule on plain numbers directly. Addition
/// and subtraction make sum nodes (core/sum.hpp).
template <class Rule, class... X>
constexpr auto make_expr(X&&... x) {
  if constexpr (!(ad_operand<X> || ...))
    return evaluate_rule<Rule, plain_result_t<X...>>(x...);
  else if constexpr (requires { Rule::sum_term_negative; })
    return make_sum<Rule::sum_term_negative>(std::forward<X>(x)...);
  else
    return node_t<Rule, X...>(wrap<node_scalar_t<X...>>(std::forward<X>(x))...);
}

/// Rules to which TensorFlow gives no gradient (floor, ceil, round, trunc: unconnected_in_tf;
/// their entry points call make_unconnected). Over a reverse scalar S (one whose ad_traits
/// have note_unconnected) the result is recorded at once, as a statement of its own at the
/// caller's line over its evaluated operand (so that the operand's own partials stay on the
/// tape, for torch's retain_graph rule), and noted on its tape, so that tf.gradients can treat
/// it as unconnected from the operand; every other API sees the rule's zero derivative.
template <class S>
concept notes_unconnected = requires(S const& s) {
  ad_traits<S>::note_unconnected(s);
};
template <class Rule, class X>
constexpr auto make_unconnected(source_location where, X&& x) {
  static_assert(Rule::unconnected_in_tf);
  if constexpr (ad_operand<X> && notes_unconnected<node_scalar_t<X>>) {
    using S = node_scalar_t<X>;
    S const operand = [&]() -> S {  // an expression: its own statement
      if constexpr (std::is_same_v<std::remove_cvref_t<X>, S>)
        return x;
      else
        return S(std::forward<X>(x), where);
    }();
    S r(node_t<Rule, S const&>(operand), where);
    ad_traits<S>::note_unconnected(r);
    return r;
  } else {
    (void)where;
    return make_expr<Rule>(std::forward<X>(x));
  }
}

/// make_expr, always inlined: for the tensor element loops (tensor_expr::at_flat), so that an
/// element's expression stays in registers instead of being built in memory by a call per
/// element. Scalar code keeps make_expr, whose inlining is left to the compiler: forcing it
/// there makes scalar loops such as normal_lpdf's slower. The two bodies are the same on
/// purpose: make_expr written as a call of this one changes the compiler's inlining of scalar
/// code (normal_lpdf's forward mode runs half as fast again), so the text is kept twice.
template <class Rule, class... X>
ADX_ALWAYS_INLINE constexpr auto make_expr_inline(X&&... x) {
  if constexpr (!(ad_operand<X> || ...))
    return evaluate_rule<Rule, plain_result_t<X...>>(x...);
  else if constexpr (requires { Rule::sum_term_negative; })
    return make_sum<Rule::sum_term_negative>(std::forward<X>(x)...);
  else
    return node_t<Rule, X...>(wrap<node_scalar_t<X...>>(std::forward<X>(x))...);
}

/// Builds Rule's elementwise node over tensor operands (defined in tensor/elementwise.hpp).
template <class Rule, class... X>
auto make_tensor_expr(X&&... x);
/// make_unconnected's tensor form (defined in tensor/elementwise.hpp).
template <class Rule, class X>
auto make_unconnected_tensor(source_location where, X&& x);

}  // namespace detail

/// One level down: value(var<dual<double>>) is a dual<double>; value(2.0) is 2.0.
template <class X>
constexpr decltype(auto) value(X const& x) {
  return detail::value_of(x);
}

/// The plain number at the bottom of any nesting: primal(var<var<double>>) is a double.
template <class X>
constexpr innermost_t<X> primal(X const& x) {
  return detail::primal_of(x);
}

/// A copy of x that no derivative flows through, at every nesting level.
template <class X>
constexpr auto stop_gradient(X const& x) {
  if constexpr (ad_operand<X>) {
    using S = ad_type_t<X>;
    return ad_traits<S>::constant(stop_gradient(detail::value_of(x)));
  } else {
    return x;
  }
}

/// Evaluates an expression into its AD scalar (recording it, for reverse mode).
template <ad_operand X>
constexpr ad_type_t<X> eval(X&& x) {
  return ad_type_t<X>(std::forward<X>(x));
}
/// A plain number is its own value (so that generic code gives over double what it gives over
/// AD scalars).
template <arithmetic X>
constexpr std::remove_cvref_t<X> eval(X&& x) {
  return x;
}

}  // namespace adx
