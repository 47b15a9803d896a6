// SPDX-License-Identifier: MIT
// adx: the element loops of tensor expressions over double and var<double>, lane_width elements
// at a time (core/simd.hpp), where every rule of the expression has a lane form. The loops in
// elementwise.hpp and reduce.hpp call these when lane_ready says the expression's types allow
// it and lane_readable says its operands do; otherwise they run element by element, as they
// do when SLEEF is absent (ADX_LANES == 0: lane_ready is always false).
//
// The lanes compute what the element loop computes, in the same order: the same rules, each
// operand's partial multiplied down the tree as the scalar expression's push does, values summed
// one element after the other. Only the transcendental functions differ (SLEEF's, see simd.hpp).
// A tensor's last elements (fewer than lane_width) are computed on lanes too, the unused lanes
// repeating the first one, so an element's value never depends on where it falls.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "adx/config.hpp"
#include "adx/core/expr.hpp"
#include "adx/core/simd.hpp"
#include "adx/reverse/var.hpp"

namespace adx {
template <class Rule, class... Ops>
class tensor_expr;
namespace detail {
template <class S>
struct tensor_leaf;
template <class X>
struct scalar_leaf;

/// The order in which adx adds up the elements of a sum (sum, mean, a fused sum or mean of an
/// expression, each line of an axis reduction): element i goes into partial sum i % 8, each
/// partial sum adds its elements in order, and the eight are added as
/// ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)). The order does not depend on how the
/// elements are computed (element by element, or on lanes of either width), so a value is the
/// same on every path. Eight independent sums make a long sum cost n / 8 additions' latency
/// instead of n, and round less than one running sum. Up to three elements it is the running sum.
template <class T>
struct eight_sums {
  std::array<T, 8> s = filled(constant<T>(0));
  static std::array<T, 8> filled(T const& z) { return {z, z, z, z, z, z, z, z}; }
  ADX_ALWAYS_INLINE void add(std::size_t i, T const& v) { s[i % 8] = s[i % 8] + v; }
  T total() const { return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])); }
};

/// Whether the tensor expression (or leaf) E, whose elements are of type R, can run on lanes:
/// R is double or var<double>, every rule has a lane form (`lanes = true`), and every operand
/// is a tensor of double or of R, a plain number (not a long double, which the element loop
/// would compute in) or an R.
template <class R, class E>
inline constexpr bool lane_ready = false;

#if ADX_LANES
template <class R>
inline constexpr bool lane_result = std::is_same_v<R, double> || std::is_same_v<R, var<double>>;
template <class R, class S>
inline constexpr bool lane_ready<R, tensor_leaf<S>> = lane_result<R> &&
                                                      (std::is_same_v<S, double> || std::is_same_v<S, R>);
template <class R, class X>
inline constexpr bool lane_ready<R, scalar_leaf<X>> = lane_result<R> &&
                                                      ((std::is_arithmetic_v<X> && !std::is_same_v<X, long double>) ||
                                                       std::is_same_v<X, R>);
template <class R, class Rule, class... Ops>
inline constexpr bool lane_ready<R, tensor_expr<Rule, Ops...>> = requires {
  requires Rule::lanes;
}
&&(lane_ready<R, Ops>&&...);
#endif

/// Whether E's operands, bound to a flat or row read, can be read as lanes: a tensor of vars must be
/// kept as values (a block) or have one element.
template <class S>
bool lane_readable(tensor_leaf<S> const& l) noexcept {
  if constexpr (is_reverse_v<S>)
    return l.single || l.kept.v != nullptr;
  else
    return true;
}
template <class X>
bool lane_readable(scalar_leaf<X> const&) noexcept {
  return true;
}
template <class Rule, class... Ops>
bool lane_readable(tensor_expr<Rule, Ops...> const& e) noexcept {
  return e.with_operands([](auto const&... op) { return (lane_readable(op) && ...); });
}

/// Whether the loops below run E on lanes for elements of type R: its types allow it
/// (lane_ready), it is read flat or in rows (`period`, the length of a row or all n; 0 for a
/// strided read, or no elements) and its operands can be read as lanes (lane_readable).
template <class R, class E>
bool runs_on_lanes(E const& expr, std::size_t period) noexcept {
  if constexpr (lane_ready<R, E>)
    return period != 0 && lane_readable(expr);
  else
    return (void)expr, (void)period, false;
}

#if ADX_LANES
inline namespace ADX_LANES_NAMESPACE {  // see core/simd.hpp

/// Lanes from p[0..count): all of them if Full, else count < lane_width of them and the rest
/// repeat p[0] (computed, never used).
template <bool Full>
ADX_ALWAYS_INLINE lanes load_lanes(double const* p, std::size_t count) noexcept {
  if constexpr (Full) {
    (void)count;
    return lanes::load(p);
  } else {
    alignas(32) double b[lane_width];
    for (std::size_t k = 0; k < lane_width; ++k) b[k] = p[k < count ? k : 0];
    return lanes::load(b);
  }
}
/// Stores the first count lanes (all if Full) at p.
template <bool Full>
ADX_ALWAYS_INLINE void store_lanes(lanes const& v, double* p, std::size_t count) noexcept {
  if constexpr (Full) {
    (void)count;
    v.store(p);
  } else {
    alignas(32) double b[lane_width];
    v.store(b);
    for (std::size_t k = 0; k < count; ++k) p[k] = b[k];
  }
}

// ---- values ------------------------------------------------------------------------------

/// Where a loop on lanes is: elements i..i+count of the result, which are columns c..c+count of
/// a row (read_plan::mode::rows; c = i for a flat read).
struct lane_at {
  std::size_t i, c, count;
};

/// What the loops below read of an expression, taken before the loop (lane_view): per leaf its
/// values' address and how it is read, per node its operands' views. The loops store vectors,
/// and a vector store may alias anything (the intrinsics' vector types are may_alias), so fields
/// read from the expression's leaves inside a loop are read again at every step: six loads and
/// three branches per four elements in matmul_grad_32's fused sum. A view is a
/// local whose address never escapes, so its fields stay in registers.
/// A tensor operand; Active: its elements are the variables the loop records (type R).
template <bool Active>
struct lane_leaf_view {
  static constexpr bool active = Active;
  double const* p = nullptr;  ///< the values (unless single)
  double s = 0;               ///< the one value every element reads (single)
  bool single = false;
  bool row = false;  ///< read at the columns of a row (tensor_leaf::row)
};
/// A scalar operand.
template <bool Active>
struct lane_scalar_view {
  static constexpr bool active = Active;
  double v;
};
/// An expression node: its operands' views.
template <class Rule, class... V>
struct lane_expr_view {
  std::tuple<V...> ops;
};

/// The view of a leaf or an expression bound for a flat or row read (runs_on_lanes), for
/// elements of type R.
template <class R, class S>
lane_leaf_view<std::is_same_v<S, R> && is_reverse_v<R>> lane_view(tensor_leaf<S> const& l) noexcept {
  lane_leaf_view<std::is_same_v<S, R> && is_reverse_v<R>> v;
  v.single = l.single;
  v.row = l.row;
  if constexpr (is_reverse_v<S>) {
    if (!l.kept.v) {  // one element (lane_readable)
      v.single = true;
      v.s = l.e[0].val();
      return v;
    }
    v.p = l.kept.v;
  } else {
    v.p = l.e;
  }
  if (v.single) v.s = v.p[0];
  return v;
}
template <class R, class X>
lane_scalar_view<std::is_same_v<X, R> && is_reverse_v<R>> lane_view(scalar_leaf<X> const& l) noexcept {
  return {static_cast<double>(value_of(l.v))};
}
template <class R, class Rule, class... Ops>
auto lane_view(tensor_expr<Rule, Ops...> const& e) noexcept {
  return e.with_operands(
      [](auto const&... op) { return lane_expr_view<Rule, decltype(lane_view<R>(op))...>{{lane_view<R>(op)...}}; });
}

/// The values at `at` of a leaf or an expression: a row operand is read at the columns, the
/// others at the elements.
template <bool Full, bool A>
ADX_ALWAYS_INLINE lanes lane_value(lane_leaf_view<A> const& l, lane_at at) noexcept {
  return l.single ? lanes(l.s) : load_lanes<Full>(l.p + (l.row ? at.c : at.i), at.count);
}
template <bool Full, bool A>
ADX_ALWAYS_INLINE lanes lane_value(lane_scalar_view<A> const& l, lane_at) noexcept {
  return lanes(l.v);
}
template <bool Full, class Rule, class... V>
ADX_ALWAYS_INLINE lanes lane_value(lane_expr_view<Rule, V...> const& e, lane_at at) {
  return std::apply([&](auto const&... op)
                        ADX_INLINE_LAMBDA { return evaluate_rule<Rule, lanes>(lane_value<Full>(op, at)...); },
                    e.ops);
}

// ---- values and partials: the element expression on lanes ------------------------------

/// A constant operand: a tensor of double, a plain number.
struct lane_constant {
  static constexpr std::size_t n_active = 0;
  lanes v;
  lanes const& val() const noexcept { return v; }
};
/// An active operand: variables of a block, or one variable read by every element.
struct lane_variable {
  static constexpr std::size_t n_active = 1;
  lanes v;
  lanes const& val() const noexcept { return v; }
  template <std::size_t Pos, class W>
  ADX_ALWAYS_INLINE void push(W& w, lanes const& m) const {
    w.template add_lanes<Pos>(m);
  }
};

/// A unary rule's node (expr, with a lane for each element). As there, a rule that gives value
/// and derivative together (sin, cos) gives both when its operand is active.
template <class Rule, class A>
struct lane_node1 {
  static constexpr std::size_t n_active = A::n_active;
  static constexpr bool cached = n_active > 0 && requires(lanes x) { Rule::value_and_derivative(x); };
  A a;
  lanes v, d;
  ADX_ALWAYS_INLINE explicit lane_node1(A const& x) : a(x) {
    if constexpr (cached) {
      auto const vd = Rule::value_and_derivative(a.val());
      v = vd.first;
      d = vd.second;
    } else {
      v = evaluate_rule<Rule, lanes>(a.val());
    }
  }
  lanes const& val() const noexcept { return v; }
  ADX_ALWAYS_INLINE lanes partial() const {
    if constexpr (cached)
      return d;
    else
      return to_value<lanes>(Rule::template partial<0>(a.val(), v));
  }
  template <std::size_t Pos, class W>
  ADX_ALWAYS_INLINE void push(W& w, lanes const& m) const {
    if constexpr (n_active > 0) a.template push<Pos>(w, m * partial());
  }
  template <class W>
  ADX_ALWAYS_INLINE void push(W& w) const {
    if constexpr (n_active > 0) a.template push<0>(w, partial());
  }
};
/// A binary rule's node.
template <class Rule, class A, class B>
struct lane_node2 {
  static constexpr std::size_t n_active = A::n_active + B::n_active;
  A a;
  B b;
  lanes v;
  ADX_ALWAYS_INLINE lane_node2(A const& x, B const& y) : a(x), b(y), v(evaluate_rule<Rule, lanes>(a.val(), b.val())) {}
  lanes const& val() const noexcept { return v; }
  template <std::size_t J>
  ADX_ALWAYS_INLINE lanes partial() const {
    return to_value<lanes>(Rule::template partial<J>(a.val(), b.val(), v));
  }
  template <std::size_t Pos, class W>
  ADX_ALWAYS_INLINE void push(W& w, lanes const& m) const {
    if constexpr (A::n_active > 0) a.template push<Pos>(w, m * partial<0>());
    if constexpr (B::n_active > 0) b.template push<Pos + A::n_active>(w, m * partial<1>());
  }
  template <class W>
  ADX_ALWAYS_INLINE void push(W& w) const {
    if constexpr (A::n_active > 0) a.template push<0>(w, partial<0>());
    if constexpr (B::n_active > 0) b.template push<A::n_active>(w, partial<1>());
  }
};

template <class Rule, class A>
ADX_ALWAYS_INLINE auto make_lane_node(A const& a) {
  return lane_node1<Rule, A>(a);
}
template <class Rule, class A, class B>
ADX_ALWAYS_INLINE auto make_lane_node(A const& a, B const& b) {
  return lane_node2<Rule, A, B>(a, b);
}

/// The element expression at `at` on lanes: an active leaf is a variable, any other a
/// constant.
template <bool Full, class L>
requires requires { L::active; }  // a leaf's or a scalar's view
ADX_ALWAYS_INLINE auto lane_tree(L const& l, lane_at at) {
  if constexpr (L::active)
    return lane_variable{lane_value<Full>(l, at)};
  else
    return lane_constant{lane_value<Full>(l, at)};
}
template <bool Full, class Rule, class... V>
ADX_ALWAYS_INLINE auto lane_tree(lane_expr_view<Rule, V...> const& e, lane_at at) {
  return std::apply(
      [&](auto const&... op) ADX_INLINE_LAMBDA { return make_lane_node<Rule>(lane_tree<Full>(op, at)...); }, e.ops);
}

/// Receives the partials of elements i..i+count from a lane tree's push, for an
/// elementwise_node without per-element indices whose element writer is Writer (its slots and
/// which positions are summed): a stored operand's partials go to partial[slot * n + i...], a
/// summed operand's are added to its sum one element after the other, as Writer adds them.
template <class Writer, bool Full>
struct lane_writer {
  double* partial;
  std::size_t n, i, count;
  std::array<double, Writer::n_summed> sum{};
  template <std::size_t J>
  ADX_ALWAYS_INLINE void add_lanes(lanes const& p) {
    if constexpr (Writer::summed[J]) {
      alignas(32) double b[lane_width];
      p.store(b);
      for (std::size_t k = 0; k < (Full ? lane_width : count); ++k) std::get<Writer::slot[J]>(sum) += b[k];
    } else {
      store_lanes<Full>(p, partial + Writer::slot[J] * n + i, count);
    }
  }
};

/// Calls f(std::bool_constant<Full>, lane_at) over n elements in rows of `period` (n for a flat
/// read): full lanes along each row, then its last count < lane_width elements, if any.
template <class F>
ADX_ALWAYS_INLINE void for_each_lanes(std::size_t n, std::size_t period, F&& f) {
  for (std::size_t r = 0; r < n; r += period) {
    std::size_t c = 0;
    for (; c + lane_width <= period; c += lane_width) f(std::true_type{}, lane_at{r + c, c, lane_width});
    if (c < period) f(std::false_type{}, lane_at{r + c, c, period - c});
  }
}

// ---- the loops -------------------------------------------------------------------------------
// Each runs when runs_on_lanes says so and returns whether it ran (the caller then runs the
// element loop instead); without lanes they are stubs that return false.

/// eight_sums<double> on lanes: partial sums k .. k + lane_width - 1 as one lanes, kept in
/// registers. A full lanes at an index that is a multiple of lane_width goes to one of them
/// whole; any other (a row whose length is not a multiple, the last partly used lanes) adds its
/// values one by one into their partial sums, in order, as eight_sums::add does.
struct lane_sums {
  static constexpr std::size_t m = 8 / lane_width;
  static_assert(8 % lane_width == 0, "adx: internal: eight_sums' partial sums do not fill whole lanes");
  std::array<lanes, m> v;
  explicit lane_sums(eight_sums<double> const& s) noexcept {
    for (std::size_t k = 0; k < m; ++k) v[k] = lanes::load(s.s.data() + k * lane_width);
  }
  void store(eight_sums<double>& s) const noexcept {
    for (std::size_t k = 0; k < m; ++k) v[k].store(s.s.data() + k * lane_width);
  }
  template <bool Full>
  ADX_ALWAYS_INLINE void add(lane_at at, lanes x) noexcept {
    if (Full && at.i % lane_width == 0) {
      std::size_t const g = at.i / lane_width % m;
      [&]<std::size_t... k>(std::index_sequence<k...>) {  // constant indices: v stays in registers
        ((g == k ? (void)(v[k] = v[k] + x) : void()), ...);
      }
      (std::make_index_sequence<m>{});
    } else {
      eight_sums<double> s;
      store(s);
      alignas(32) double val[lane_width];
      x.store(val);
      for (std::size_t k = 0; k < (Full ? lane_width : at.count); ++k) s.add(at.i + k, val[k]);
      *this = lane_sums(s);
    }
  }
};

/// An elementwise node's forward pass (evaluate_recorded): each element's value into v, its
/// stored operands' partials into partial (the node's Writer slots).
template <class R, class Writer, class E, class T>
bool record_on_lanes(E const& expr, std::size_t period, T* partial, T* v, std::size_t n) {
  if constexpr (lane_ready<R, E>) {
    if (!runs_on_lanes<R>(expr, period)) return false;
    auto const view = lane_view<R>(expr);
    for_each_lanes(n, period, [&](auto full, lane_at at) ADX_INLINE_LAMBDA {
      constexpr bool Full = decltype(full)::value;
      auto const e = lane_tree<Full>(view, at);
      lane_writer<Writer, Full> w{partial, n, at.i, at.count};
      e.push(w);
      store_lanes<Full>(e.val(), v + at.i, at.count);
    });
    return true;
  } else {
    return (void)expr, (void)period, (void)partial, (void)v, (void)n, false;
  }
}
/// A reduced elementwise node's forward pass (reduce_expression): partials as record_on_lanes,
/// summed operands' partials added to sums, the elements' values added to s.
template <class R, class Writer, class E, class T, class Sums>
bool reduce_on_lanes(E const& expr, std::size_t period, T* partial, std::size_t n, Sums& sums, eight_sums<T>& s) {
  if constexpr (lane_ready<R, E>) {
    if (!runs_on_lanes<R>(expr, period)) return false;
    auto local = sums;  // in registers through the loop
    lane_sums acc(s);
    auto const view = lane_view<R>(expr);
    for_each_lanes(n, period, [&](auto full, lane_at at) ADX_INLINE_LAMBDA {
      constexpr bool Full = decltype(full)::value;
      auto const e = lane_tree<Full>(view, at);
      lane_writer<Writer, Full> w{partial, n, at.i, at.count, local};
      e.push(w);
      local = w.sum;
      acc.template add<Full>(at, e.val());
    });
    sums = local;
    acc.store(s);
    return true;
  } else {
    return (void)expr, (void)period, (void)partial, (void)n, (void)sums, (void)s, false;
  }
}
/// The values of the n elements of an expression into out (the caller has asked
/// runs_on_lanes: it allocates out only then).
template <class R, class E, class T>
void fill_on_lanes(E const& expr, std::size_t period, T* out, std::size_t n) {
  if constexpr (lane_ready<R, E>) {
    auto const view = lane_view<R>(expr);
    for_each_lanes(n, period, [&](auto full, lane_at at) ADX_INLINE_LAMBDA {
      constexpr bool Full = decltype(full)::value;
      store_lanes<Full>(lane_value<Full>(view, at), out + at.i, at.count);
    });
  } else {
    (void)expr, (void)period, (void)out, (void)n;
  }
}
/// Adds the values of an expression's n elements to s (in eight_sums' order).
template <class R, class E, class T>
bool sum_on_lanes(E const& expr, std::size_t period, std::size_t n, eight_sums<T>& s) {
  if constexpr (lane_ready<R, E>) {
    if (!runs_on_lanes<R>(expr, period)) return false;
    lane_sums acc(s);
    auto const view = lane_view<R>(expr);
    for_each_lanes(n, period, [&](auto full, lane_at at) ADX_INLINE_LAMBDA {
      constexpr bool Full = decltype(full)::value;
      acc.template add<Full>(at, lane_value<Full>(view, at));
    });
    acc.store(s);
    return true;
  } else {
    return (void)expr, (void)period, (void)n, (void)s, false;
  }
}
}  // namespace ADX_LANES_NAMESPACE
#else
// Without lanes (runs_on_lanes is always false) the loops never run.
template <class R, class Writer, class E, class T>
bool record_on_lanes(E const&, std::size_t, T*, T*, std::size_t) {
  return false;
}
template <class R, class Writer, class E, class T, class Sums>
bool reduce_on_lanes(E const&, std::size_t, T*, std::size_t, Sums&, eight_sums<T>&) {
  return false;
}
template <class R, class E, class T>
void fill_on_lanes(E const&, std::size_t, T*, std::size_t) {}
template <class R, class E, class T>
bool sum_on_lanes(E const&, std::size_t, std::size_t, eight_sums<T>&) {
  return false;
}
#endif

}  // namespace detail
}  // namespace adx
