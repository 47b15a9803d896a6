// SPDX-License-Identifier: MIT
// adx: fused elementwise tensor expressions. `a * b + sin(c) / d` over tensors builds one
// tensor_expr tree; assigning it to a tensor runs ONE loop over the (broadcast) result, and at
// each element builds the same scalar expression the scalar layer would build from the same
// rules. So every elementwise function works in every mode: for tensor<double> the loop is
// plain arithmetic; for tensor<dual<T>> each element gets its tangent; for tensor<var<T>> the
// expression is ONE tape node owning a contiguous block of adjoint slots: the loop computes
// each element's value and, from the same rules, its operands' partials, which the node keeps
// for the sweep. A broadcast operand's adjoint is summed back over the elements that read it.
// A linear expression with constant coefficients has the same partials at every element: its
// node (linear_node) keeps one per operand. sum(e) and mean(e) of an expression make no elementwise result
// (reduce.hpp).
//
// Operands are kept by value (tensors share their buffers, so this is cheap): an expression
// never dangles, and assigning it to one of its own operands is safe.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <tuple>

#include "adx/core/expr.hpp"
#include "adx/core/operand_pack.hpp"
#include "adx/reverse/var.hpp"
#include "adx/rules/elementary.hpp"
#include "adx/tensor/lanes.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

using stride_array = std::array<std::size_t, shape::max_rank>;

/// Whether an operand of shape `in` read with broadcasting over the result's shape `out` reads
/// its elements in order again and again: element i of the result reads element i % in.size()
/// (in's extents, leading 1s aside, are out's last extents: a bias row [n] over [m, n]).
inline bool reads_cyclically(adx::shape const& in, adx::shape const& out) noexcept {
  std::size_t lead = 0;
  while (lead < in.rank() && in[lead] == 1) ++lead;
  std::size_t const r = in.rank() - lead;
  if (r == 0 || r > out.rank()) return false;
  for (std::size_t d = 0; d < r; ++d)
    if (in[lead + d] != out[out.rank() - r + d]) return false;
  return true;
}

/// How an expression's element loop reads its operands over the result's shape (read_plan_for).
/// - flat: every operand is of the result's shape or has one element: element i reads their
///   element i, or 0.
/// - rows: the result is read as rows of `period` elements. Element i, at column c = i % period
///   of its row, reads element c of a *row* operand (one whose extents, leading 1s aside, are
///   the result's last extents, such as a bias [n] over [m, n]) and reads the others as flat.
/// - strided: through a multi-index and broadcast strides (any other broadcast).
struct read_plan {
  enum class mode : std::uint8_t { flat, rows, strided };
  mode how = mode::strided;
  std::size_t period = 0;  ///< rows only
};
/// What one operand needs (row_period): 0 if it is read flat (the result's shape, or one
/// element), its size if it is a row, and no_rows otherwise.
inline constexpr std::size_t no_rows = static_cast<std::size_t>(-1);
/// The common period of two operands' needs: no_rows when they disagree.
constexpr std::size_t join_rows(std::size_t a, std::size_t b) noexcept {
  if (a == 0) return b;
  if (b == 0 || a == b) return a;
  return no_rows;
}

/// A tensor operand, read with broadcasting. A tensor of vars kept as values beside its block
/// (detail::var_values) is read as it is kept: element k is the variable first + k holding
/// v[k], and no element is made.
template <class S>
struct tensor_leaf {
  tensor<S> t;
  // How the leaf is read: bind() sets these before any read (left uninitialised until then:
  // an expression's leaves are moved once per level of its tree, so every byte set here counts)
  stride_array bst;  // strided reads only
  bool single;
  bool row;    // read as a row (read_plan): element c of a row
  S const* e;  // t's elements, from bind(), unless t is kept as values
  struct kept_values {
    value_type_t<S> const* v;  // null: t is not kept as values
    index_type first;
    epoch_type epoch;
    /// For value_row (set by a linear node's evaluation): element k's value is read[k * step]
    /// (read[c] for a row).
    value_type_t<S> const* read;
    std::size_t step;
  };
  [[no_unique_address]] std::conditional_t<is_reverse_v<S>, kept_values, std::tuple<>> kept;

  explicit tensor_leaf(tensor<S> x) noexcept : t(std::move(x)) {}
  /// A copy or a move takes the tensor only: the rest is bind()'s, and evaluation binds the
  /// expression it evaluates. (An expression is moved once per level of the tree it goes into,
  /// so its leaves are: the reads' state is not carried along.)
  tensor_leaf(tensor_leaf const& o) : t(o.t) {}
  tensor_leaf(tensor_leaf&& o) noexcept : t(std::move(o.t)) {}
  tensor_leaf& operator=(tensor_leaf const&) = delete;
  tensor_leaf& operator=(tensor_leaf&&) = delete;

  adx::shape const& shape() const noexcept { return t.shape(); }
  bool flat_readable(adx::shape const& out) const noexcept { return t.size() == 1 || t.shape() == out; }
  std::size_t row_period(adx::shape const& out) const noexcept {
    if (flat_readable(out)) return 0;
    return reads_cyclically(t.shape(), out) ? t.size() : no_rows;
  }
  /// Prepares the reads for the result's shape `out` as `plan` reads it (strides only for a
  /// strided read).
  void bind(adx::shape const& out, read_plan plan) {
    single = t.size() == 1;
    row = false;
    if (plan.how == read_plan::mode::rows)
      row = !single && t.size() == plan.period;  // the others are of the result's shape
    else if (plan.how == read_plan::mode::strided)
      bst = broadcast_strides(t.shape(), out);
    if constexpr (is_reverse_v<S>) {
      if (auto const* v = tensor_access::kept_values(t)) {
        var_block const b = tensor_access::block(t);
        kept = {v, b.first, b.epoch, nullptr, 0};
        e = nullptr;
        return;
      }
      kept = {nullptr, 0, 0, nullptr, 0};
    }
    e = std::as_const(t).data();  // const: reading must not copy a shared buffer
  }
  ADX_ALWAYS_INLINE decltype(auto) at_flat(std::size_t i) const noexcept { return element(single ? 0 : i); }
  /// Element i, at column c of its row (read_plan).
  ADX_ALWAYS_INLINE decltype(auto) at_row(std::size_t i, std::size_t c) const noexcept {
    return element(single ? 0 : row ? c : i);
  }
  ADX_ALWAYS_INLINE decltype(auto) at_index(stride_array const& idx, std::size_t rank) const noexcept {
    std::size_t o = 0;
    for (std::size_t d = 0; d < rank; ++d) o += idx[d] * bst[d];
    return element(o);
  }
  /// Calls f with the recording (epoch) of each of its variables of type R (check_operands_live):
  /// once for a block kept as values, whose variables share it, so that no element is made.
  template <class R, class F>
  void for_each_epoch(F&& f) const {
    if constexpr (std::is_same_v<S, R>) {
      if (tensor_access::kept_values(t))
        f(tensor_access::block(t).epoch);
      else
        for (S const& x : std::span<S const>(t.data(), t.size())) f(x.epoch());
    }
  }
  /// The value of the element at a flat position, without its variable: for vars through the
  /// read pointer a linear node's evaluation set (no test per element).
  ADX_ALWAYS_INLINE auto value_flat(std::size_t i) const noexcept {
    if constexpr (is_reverse_v<S>)
      return kept.read[i * kept.step];
    else
      return e[single ? 0 : i];
  }
  /// The same at element i, column c of its row (read_plan).
  ADX_ALWAYS_INLINE auto value_row(std::size_t i, std::size_t c) const noexcept {
    if constexpr (is_reverse_v<S>)
      return kept.read[row ? c : i * kept.step];
    else
      return e[single ? 0 : row ? c : i];
  }

 private:
  ADX_ALWAYS_INLINE decltype(auto) element(std::size_t k) const noexcept {
    if constexpr (is_reverse_v<S>)
      return kept.v ? S::recorded_active(kept.v[k], kept.first + static_cast<index_type>(k), kept.epoch) : S(e[k]);
    else
      return e[k];  // a reference
  }
};

/// A scalar operand (a number or an AD scalar), the same for every element.
template <class X>
struct scalar_leaf {
  X v;
  adx::shape shape() const noexcept { return {}; }
  bool flat_readable(adx::shape const&) const noexcept { return true; }
  std::size_t row_period(adx::shape const&) const noexcept { return 0; }
  void bind(adx::shape const&, read_plan) noexcept {}
  ADX_ALWAYS_INLINE X const& at_flat(std::size_t) const noexcept { return v; }
  ADX_ALWAYS_INLINE X const& at_row(std::size_t, std::size_t) const noexcept { return v; }
  ADX_ALWAYS_INLINE X const& at_index(stride_array const&, std::size_t) const noexcept { return v; }
  template <class R, class F>
  void for_each_epoch(F&& f) const {
    if constexpr (std::is_same_v<std::remove_cvref_t<X>, R>) f(v.epoch());
  }
  ADX_ALWAYS_INLINE decltype(auto) value_flat(std::size_t) const noexcept { return value_of(v); }
  ADX_ALWAYS_INLINE decltype(auto) value_row(std::size_t, std::size_t) const noexcept { return value_of(v); }
};

template <class E>
concept tensor_node = requires {
  typename std::remove_cvref_t<E>::is_tensor_expr;
};

/// The scalar an element expression evaluates to (an AD scalar, or the plain number).
template <class X>
using element_result_t = std::conditional_t<ad_operand<X>, ad_type_t<X>, std::remove_cvref_t<X>>;

}  // namespace detail

/// An elementwise expression over tensors (what `a * b` returns for tensors). It lives in
/// namespace adx, not detail, so that argument-dependent lookup finds adx's operators and
/// functions for it in user code: its operands alone (tensor_leaf<double>) would not.
template <class Rule, class... Ops>
class tensor_expr : public detail::tensor_tag {
 public:
  using is_tensor_expr = void;

  explicit tensor_expr(Ops... ops) : ops_(std::in_place, std::move(ops)...) { set_shape(); }
  /// Each operand made in place by one of `make` (make_tensor_expr: nothing is moved).
  template <class... M>
  explicit tensor_expr(detail::from_makers_t tag, M&&... make) : ops_(tag, std::forward<M>(make)...) {
    set_shape();
  }

  adx::shape const& shape() const noexcept { return shape_; }
  bool flat_readable(adx::shape const& out) const noexcept {
    return ops_.apply([&](auto const&... op) { return (op.flat_readable(out) && ...); });
  }
  std::size_t row_period(adx::shape const& out) const noexcept {
    return ops_.apply([&](auto const&... op) {
      std::size_t p = 0;
      ((p = detail::join_rows(p, op.row_period(out))), ...);
      return p;
    });
  }
  void bind(adx::shape const& out, detail::read_plan plan) {
    ops_.apply([&](auto&... op) { (op.bind(out, plan), ...); });
  }
  /// The element's scalar expression (or plain value), read at a flat position.
  /// (Always inlined, with the leaves' reads: the element loop then keeps the expression in
  /// registers instead of building it in memory through a call per element.)
  ADX_ALWAYS_INLINE auto at_flat(std::size_t i) const {
    return ops_.apply([&](auto const&... op)
                          ADX_INLINE_LAMBDA { return detail::make_expr_inline<Rule>(op.at_flat(i)...); });
  }
  /// Element i, at column c of its row (detail::read_plan).
  ADX_ALWAYS_INLINE auto at_row(std::size_t i, std::size_t c) const {
    return ops_.apply([&](auto const&... op)
                          ADX_INLINE_LAMBDA { return detail::make_expr_inline<Rule>(op.at_row(i, c)...); });
  }
  ADX_ALWAYS_INLINE auto at_index(detail::stride_array const& idx, std::size_t rank) const {
    return ops_.apply([&](auto const&... op)
                          ADX_INLINE_LAMBDA { return detail::make_expr_inline<Rule>(op.at_index(idx, rank)...); });
  }
  /// The element's value at a flat position (value_flat), or at element i, column c of its row
  /// (value_row), from the operands' values by the rules' value functions: the same numbers as
  /// at_flat(i).val() without building the element. (For element types var<T>, T a plain
  /// number, as the linear node uses them: an element expression holds its plain-number
  /// operands as T, detail::wrap, so they are converted here too.)
  ADX_ALWAYS_INLINE auto value_flat(std::size_t i) const {
    return values_by([i](auto const& op) ADX_INLINE_LAMBDA { return op.value_flat(i); });
  }
  ADX_ALWAYS_INLINE auto value_row(std::size_t i, std::size_t c) const {
    return values_by([i, c](auto const& op) ADX_INLINE_LAMBDA { return op.value_row(i, c); });
  }
  /// f(operands...): what f returns.
  template <class F>
  ADX_ALWAYS_INLINE decltype(auto) with_operands(F&& f) const {
    return ops_.apply(std::forward<F>(f));
  }
  /// Calls f on each operand (a leaf or a sub-expression), left to right.
  template <class F>
  void visit_operands(F&& f) const {
    ops_.apply([&](auto const&... op) { (f(op), ...); });
  }
  template <class F>
  void visit_operands(F&& f) {
    ops_.apply([&](auto&... op) { (f(op), ...); });
  }
  /// Calls f with the recording of every variable of type R among the operands (tensor_leaf).
  template <class R, class F>
  void for_each_epoch(F&& f) const {
    ops_.apply([&](auto const&... op) { (op.template for_each_epoch<R>(f), ...); });
  }

  using element_type =
      detail::element_result_t<decltype(detail::make_expr<Rule>(std::declval<Ops const&>().at_flat(0)...))>;

 private:
  void set_shape() {
    ops_.apply([&](auto const&... op) {
      // rank-0 operands (scalars) change nothing, operands of the same shape neither, and the
      // first of rank > 0 is taken as it is: the broadcast is computed only where shapes differ
      auto fold = [&](adx::shape const& s) {
        if (s.rank() == 0 || s == shape_) return;
        shape_ = shape_.rank() == 0 ? s : broadcast_shapes(shape_, s, Rule::name);
      };
      (fold(op.shape()), ...);
    });
  }
  template <class Read>
  ADX_ALWAYS_INLINE auto values_by(Read read) const {
    if constexpr (ad_operand<element_type>) {
      using V = value_type_t<element_type>;
      return ops_.apply([&](auto const&... op)
                            ADX_INLINE_LAMBDA { return detail::evaluate_rule<Rule, V>(static_cast<V>(read(op))...); });
    } else {
      return ops_.apply([&](auto const&... op)
                            ADX_INLINE_LAMBDA { return detail::evaluate_rule<Rule, element_type>(read(op)...); });
    }
  }
  detail::operand_pack<Ops...> ops_;
  adx::shape shape_;
};

namespace detail {

/// Stores a user operand in a tensor expression.
template <class X>
auto wrap_tensor_operand(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (tensor_node<D>)
    return D(std::forward<X>(x));
  else if constexpr (tensor_type<D>)
    return tensor_leaf<typename D::value_type>(tensor<typename D::value_type>(std::forward<X>(x)));
  else if constexpr (ad_expression<D>)
    return scalar_leaf<ad_type_t<D>>{ad_type_t<D>(std::forward<X>(x))};  // evaluated (recorded) once
  else
    return scalar_leaf<D>{std::forward<X>(x)};
}

}  // namespace detail

/// An unevaluated elementwise tensor expression.
template <class E>
concept tensor_expression = detail::tensor_node<E>;

namespace detail {

template <class Rule, class... X>
auto make_tensor_expr(X&&... x) {
  // each operand is wrapped straight into its place in the node: a sub-expression is moved once
  return tensor_expr<Rule, decltype(wrap_tensor_operand(std::forward<X>(x)))...>(
      from_makers, [&x]() -> decltype(auto) { return wrap_tensor_operand(std::forward<X>(x)); }...);
}

/// What a tensor node keeps for its backward pass per (element, operand) pair: the operand's
/// index and its partial, `count` of each (the elementwise and reduction nodes), in the tape's
/// node memory.
template <class T>
struct stored_operands {
  std::size_t count;
  index_type* index;
  T* partial;
  /// `with_indices` false: partials only (the node knows its operands' indices otherwise).
  stored_operands(tape<T>& tp, std::size_t c, bool with_indices = true)
      : count(c),
        index(with_indices ? tp.template node_array<index_type>(c) : nullptr),
        partial(tp.template node_array<T>(c)) {}
  /// for_inputs (tape<T>::node_with_inputs) over the stored indices (index 0 is a constant).
  template <class F>
  bool for_inputs(F&& f) const {
    for (std::size_t k = 0; k < count; ++k)
      if (f(index[k], 1)) return true;
    return false;
  }
  std::size_t bytes() const noexcept { return count * ((index ? sizeof(index_type) : 0) + sizeof(T)); }
  bool nonfinite() const { return any_nonfinite(partial, count); }
};

/// Which of an element expression's active operands, in the order its push writes them, are
/// a scalar operand of the tensor expression (one AD scalar read by every element): an
/// mp_list of mp_true (scalar) and mp_false (a tensor's element) for element scalar S.
template <class S, class Op>
struct active_leaves {
  using type = boost::mp11::mp_list<>;
};
template <class S, class X>
inline constexpr bool at_level_of = ad_operand<X>&& level_v<X> == level_v<S>;
template <class S, class X>
struct active_leaves<S, tensor_leaf<X>> {
  using type =
      boost::mp11::mp_if_c<at_level_of<S, X>, boost::mp11::mp_list<boost::mp11::mp_false>, boost::mp11::mp_list<>>;
};
template <class S, class X>
struct active_leaves<S, scalar_leaf<X>> {
  using type =
      boost::mp11::mp_if_c<at_level_of<S, X>, boost::mp11::mp_list<boost::mp11::mp_true>, boost::mp11::mp_list<>>;
};
template <class S, class Rule, class... Ops>
struct active_leaves<S, tensor_expr<Rule, Ops...>> {
  using type =
      boost::mp11::mp_if_c<at_level_of<S, typename tensor_expr<Rule, Ops...>::element_type>,
                           boost::mp11::mp_append<boost::mp11::mp_list<>, typename active_leaves<S, Ops>::type...>,
                           boost::mp11::mp_list<>>;
};

/// For each active leaf of E at S's level, in push order (as active_leaves): mp_true if its
/// partial is +1 or -1 whatever the values, every node above it an addition, a subtraction or
/// a negation (tape<T>::node::keeps_values).
template <class S, class E>
struct unit_leaves {
  using type = boost::mp11::mp_list<>;
};
template <class>
using as_false = boost::mp11::mp_false;
template <class S, class X>
struct unit_leaves<S, tensor_leaf<X>> {
  using type =
      boost::mp11::mp_if_c<at_level_of<S, X>, boost::mp11::mp_list<boost::mp11::mp_true>, boost::mp11::mp_list<>>;
};
template <class S, class X>
struct unit_leaves<S, scalar_leaf<X>> : unit_leaves<S, tensor_leaf<X>> {};
template <class S, class Rule, class... Ops>
struct unit_leaves<S, tensor_expr<Rule, Ops...>> {
  using below = boost::mp11::mp_append<boost::mp11::mp_list<>, typename unit_leaves<S, Ops>::type...>;
  static constexpr bool passes =
      std::is_same_v<Rule, add_rule> || std::is_same_v<Rule, sub_rule> || std::is_same_v<Rule, neg_rule>;
  using type = boost::mp11::mp_if_c<at_level_of<S, typename tensor_expr<Rule, Ops...>::element_type>,
                                    boost::mp11::mp_if_c<passes, below, boost::mp11::mp_transform<as_false, below>>,
                                    boost::mp11::mp_list<>>;
};

/// Calls f(x) for every scalar operand x at S's level in E, in push order (the true positions
/// of active_leaves, in order).
template <class S, class X, class F>
void for_each_scalar_operand(tensor_leaf<X> const&, F&) {}
template <class S, class X, class F>
void for_each_scalar_operand(scalar_leaf<X> const& l, F& f) {
  if constexpr (at_level_of<S, X>) f(l.v);
}
template <class S, class Rule, class... Ops, class F>
void for_each_scalar_operand(tensor_expr<Rule, Ops...> const& e, F& f) {
  if constexpr (at_level_of<S, typename tensor_expr<Rule, Ops...>::element_type>)
    e.visit_operands([&](auto const& op) { for_each_scalar_operand<S>(op, f); });
}

/// The scalar-operand positions of E's element expression as an array (see active_leaves).
template <class S, class E, template <class, class> class Leaves = active_leaves>
constexpr auto scalar_positions() {
  using flags = typename Leaves<S, E>::type;
  std::array<bool, boost::mp11::mp_size<flags>::value> r{};
  boost::mp11::mp_for_each<boost::mp11::mp_iota<boost::mp11::mp_size<flags>>>(
      [&](auto j) { r[j] = boost::mp11::mp_at_c<flags, j>::value; });
  return r;
}

/// Non-zero iff epoch e is neither `current` nor 0 (a constant's): an operand from another
/// recording, to be checked for liveness. e * (e ^ current) in 64 bits, where neither factor
/// exceeds 32 bits, so the product is zero only if one of them is; OR-ed over the operands, it
/// takes three instructions per operand where two compares, two sets and the logic take six.
constexpr std::uint64_t stray_epoch_bits(epoch_type e, epoch_type current) noexcept {
  return std::uint64_t{e} * (e ^ current);
}

/// The tape node of an elementwise expression over var<T> elements. The forward pass stores,
/// per element, what a scalar statement would: each active operand's index and partial (the
/// expression's rules computed them with the value, e.g. sin and cos from one sincos). They
/// are kept operand by operand, so that the backward pass is one streaming loop per operand:
/// a broadcast operand (one variable read by every element) is summed in a register and added
/// once, and an operand that is one block of variables is a contiguous multiply-add.
///
/// When every operand is a block read in order or one variable (known from the operands'
/// tensors before the loop: block_operands), the node is made without per-element indices:
/// `operand_first` holds each operand's first index, and the forward pass stores the partials
/// only.
///
/// A reduced node (sum or mean of the expression: one output, the same adjoint for every
/// element) over plain numbers does not keep the partials of a scalar operand per element: the
/// forward pass sums them (`summed` operands, one index and one sum each). The backward pass
/// then adds (sum of p_i) * a instead of the sum of p_i * a: equal up to rounding, except that
/// the sum of the partials can overflow where the products would not (partials summing past
/// 1.8e308 under a small adjoint, e.g. a mean over huge values).
template <class T>
struct elementwise_node final : tape<T>::template node_with_inputs<elementwise_node<T>> {
  /// How an operand's indices run over the elements: one variable (broadcast), a block read in
  /// order (first + i), a block read again and again (first + i % period: a bias row read by
  /// every row of the result), or anything else (general: indices kept per element).
  enum class operand_kind : std::uint8_t { general, broadcast, block, cyclic };
  std::size_t n = 0;          ///< elements
  std::size_t operands = 0;   ///< active operands kept per element
  stored_operands<T> stored;  ///< operand j of element i at [j * n + i]
  operand_kind* kind;
  index_type* operand_first = nullptr;    ///< without per-element indices: operand j's block or variable
  std::size_t* operand_period = nullptr;  ///< without per-element indices: a cyclic operand's period
  std::size_t summed = 0;                 ///< scalar operands whose partials are summed over the elements
  index_type* summed_index;
  T* summed_partial;
  /// A reduced node (sum or mean of the expression) has one output, whose adjoint times
  /// `scale` (the reduction's partial, 1 or 1/n) is every element's adjoint.
  bool reduced = false;
  double scale = 1;
  /// Bit s: whether summed operand s's partials keep values (see unit_leaves; from s = 64 on,
  /// all do). In `sum(t * c + s)`, s's do not: torch's add and sum keep no tensors.
  std::uint64_t summed_keeps = ~std::uint64_t{0};

  elementwise_node(tape<T>& tp, std::size_t elements, std::size_t k, std::size_t k_summed = 0, bool with_indices = true)
      : n(elements),
        operands(k),
        stored(tp, elements * k, with_indices),
        kind(tp.template node_array<operand_kind>(k)),
        operand_first(with_indices ? nullptr : tp.template node_array<index_type>(k)),
        operand_period(with_indices ? nullptr : tp.template node_array<std::size_t>(k)),
        summed(k_summed),
        summed_index(tp.template node_array<index_type>(k_summed)),
        summed_partial(tp.template node_array<T>(k_summed)) {
    std::fill_n(kind, k, operand_kind::general);
  }

  /// Receives one element's (index, partial) pairs from its expression's push. The partial of
  /// push position J is added into sum if Summed[J] (the caller copies the sums in and out, so
  /// that they stay in registers, and notes these operands' indices and epochs once), else
  /// stored for element `element`.
  /// With per-element indices (`index` not null) it stores the index too, and notes whether
  /// any operand is active and whether any comes from another recording than the current one
  /// (checked afterwards: no call on this path, so that the expression stays in registers).
  /// Without (a node whose operands block_operands described), the caller has noted both from
  /// the operands already, and the element's indices and epochs are not looked at.
  /// One loop serves both kinds of node: the test is the same at every element, so it is
  /// predicted; GCC takes it out of small loops (unswitching) but not out of a large element
  /// loop such as sin's. Two compiled loops would make every file that uses tensors slower to
  /// build.
  template <std::size_t K, std::array<bool, K> Summed = std::array<bool, K>{}>
  struct writer {
    static constexpr bool takes_positions = true;
    static constexpr std::array<bool, K> summed = Summed;
    static constexpr std::size_t n_summed = static_cast<std::size_t>(std::count(Summed.begin(), Summed.end(), true));
    /// Position J's slot among the stored (or among the summed) operands.
    static constexpr std::array<std::size_t, K> slot = [] {
      std::array<std::size_t, K> r{};
      std::size_t s = 0, k = 0;
      for (std::size_t j = 0; j < K; ++j) r[j] = Summed[j] ? s++ : k++;
      return r;
    }();
    index_type* index;
    T* partial;
    std::size_t n, element;
    epoch_type epoch;
    std::array<T, n_summed> sum{};
    /// The OR of the indices: non-zero iff an operand is active.
    index_type any_index = 0;
    /// The OR of stray_epoch_bits: non-zero iff an operand is from another recording.
    std::uint64_t stray_epoch = 0;
    template <std::size_t J>
    ADX_ALWAYS_INLINE void add_at(index_type i, epoch_type e, T const& p) {
      static_assert(J < K, "adx: internal: a push position beyond the expression's active leaves");
      if constexpr (Summed[J]) {  // the caller has seen its index and epoch once
        std::get<slot[J]>(sum) += p;
      } else {
        partial[slot[J] * n + element] = p;
        tape<T>::note_outer_partial(p);  // a var<var<T>> node: its partials are var<T>s
        if (index) {
          index[slot[J] * n + element] = i;  // a constant (index 0) is kept too: slot 0 is never read
          any_index |= i;
          stray_epoch |= stray_epoch_bits(e, epoch);
        }
      }
    }
  };

  /// After the forward pass: how each operand's indices run over the elements (loops the
  /// compiler vectorises). Nothing to do for a node without per-element indices.
  void classify() {
    if (!stored.index) return;
    for (std::size_t j = 0; j < operands; ++j) {
      index_type const* ix = stored.index + j * n;
      index_type const i0 = ix[0];
      index_type diff = 0;
      for (std::size_t i = 1; i < n; ++i) diff |= ix[i] ^ i0;
      if (diff == 0) {
        kind[j] = operand_kind::broadcast;
        continue;
      }
      if (i0 == 0) continue;
      diff = 0;
      for (std::size_t i = 1; i < n; ++i) diff |= ix[i] ^ (i0 + static_cast<index_type>(i));
      if (diff == 0) kind[j] = operand_kind::block;
    }
  }

  void backward(T* adj) const override {
    if (!reduced) {
      T const* a = adj + this->first;
      pass(adj, [a](std::size_t i) { return a[i]; });
    } else {  // every element's adjoint is the one output's, times the reduction's partial
      T const a = scale == 1 ? adj[this->first] : to_value<T>(scale * adj[this->first]);
      pass(adj, [a](std::size_t) { return a; });
      for (std::size_t s = 0; s < summed; ++s) adj[summed_index[s]] += summed_partial[s] * a;
    }
  }
  /// Adds p * a(i) into each operand's adjoints, operand by operand.
  template <class A>
  ADX_ALWAYS_INLINE void pass(T* adj, A a) const {
    for (std::size_t j = 0; j < operands; ++j) {
      index_type const* ix = stored.index ? stored.index + j * n : nullptr;
      index_type const i0 = ix ? ix[0] : operand_first[j];
      T const* p = stored.partial + j * n;
      switch (kind[j]) {
        case operand_kind::broadcast:
          adj[i0] += dot(p, a);
          break;
        case operand_kind::block: {
          T* d = adj + i0;
          for (std::size_t i = 0; i < n; ++i) d[i] += p[i] * a(i);
          break;
        }
        case operand_kind::cyclic: {
          T* d = adj + i0;
          std::size_t const period = operand_period[j];
          for (std::size_t r = 0; r < n; r += period)
            for (std::size_t c = 0; c < period; ++c) d[c] += p[r + c] * a(r + c);
          break;
        }
        case operand_kind::general:
          for (std::size_t i = 0; i < n; ++i) adj[ix[i]] += p[i] * a(i);
          break;
      }
    }
  }
  /// sum_i p[i] a(i); for plain numbers in four independent sums (no single dependency chain).
  template <class A>
  T dot(T const* p, A a) const {
    if constexpr (std::is_arithmetic_v<T>) {
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      std::size_t i = 0;
      for (; i + 4 <= n; i += 4) {
        s0 += p[i] * a(i);
        s1 += p[i + 1] * a(i + 1);
        s2 += p[i + 2] * a(i + 2);
        s3 += p[i + 3] * a(i + 3);
      }
      for (; i < n; ++i) s0 += p[i] * a(i);
      return (s0 + s1) + (s2 + s3);
    } else {
      T s = constant<T>(0);
      for (std::size_t i = 0; i < n; ++i) s += p[i] * a(i);
      return s;
    }
  }
  /// for_inputs over the inputs of kept operand j.
  template <class F>
  bool operand_inputs(std::size_t j, F&& f) const {
    if (stored.index) {
      for (std::size_t i = 0; i < n; ++i)
        if (f(stored.index[j * n + i], 1)) return true;
      return false;
    }
    if (kind[j] == operand_kind::block || kind[j] == operand_kind::cyclic)
      return f(operand_first[j], kind[j] == operand_kind::block ? n : operand_period[j]);
    return f(operand_first[j], 1);
  }
  template <class F>
  bool for_inputs(F&& f) const {
    for (std::size_t j = 0; j < operands; ++j)
      if (operand_inputs(j, f)) return true;
    for (std::size_t s = 0; s < summed; ++s)
      if (f(summed_index[s], 1)) return true;
    return false;
  }
  /// Judged by the partials toward the used operands: each element's, or, for a summed
  /// operand, the expression's form (`summed_keeps`).
  bool keeps_values(std::uint8_t const* used) const override {
    auto const is_used = [used](index_type first, std::size_t count) { return any_marked(used, first, count); };
    for (std::size_t j = 0; j < operands; ++j)
      if (operand_inputs(j, is_used) && !unit_partials(stored.partial + j * n, n)) return true;
    for (std::size_t s = 0; s < summed; ++s)
      if ((s >= 64 || (summed_keeps >> s & 1)) && is_used(summed_index[s], 1)) return true;
    return false;
  }
  bool nonfinite() const override { return stored.nonfinite() || any_nonfinite(summed_partial, summed); }
  std::size_t bytes() const noexcept override {
    return stored.bytes() + operands + (operand_first ? operands * (sizeof(index_type) + sizeof(std::size_t)) : 0) +
           summed * (sizeof(index_type) + sizeof(T));
  }
};

// ---- linear expressions: one partial per operand ----------------------------------------------

/// Whether the element expression of E is linear in its operands at S's level with constant
/// coefficients: built from +, -, unary -, and * or / by a plain number, so that every element's
/// partials are the same numbers (`0.5 * c * (l + r + c * (l - r))`). Its node then keeps one
/// partial per operand instead of one per element and operand.
template <class S, class E>
struct linear_in : std::false_type {};
template <class S, class X>
struct linear_in<S, tensor_leaf<X>> : std::true_type {};
template <class S, class X>
struct linear_in<S, scalar_leaf<X>> : std::true_type {};
/// A coefficient: a plain number, the same for every element.
template <class X>
inline constexpr bool coefficient_leaf = false;
template <class X>
inline constexpr bool coefficient_leaf<scalar_leaf<X>> = std::is_arithmetic_v<X>;
template <class S, class A>
struct linear_in<S, tensor_expr<neg_rule, A>> : linear_in<S, A> {};
template <class S, class A, class B>
struct linear_in<S, tensor_expr<add_rule, A, B>>
    : std::bool_constant<linear_in<S, A>::value && linear_in<S, B>::value> {};
template <class S, class A, class B>
struct linear_in<S, tensor_expr<sub_rule, A, B>>
    : std::bool_constant<linear_in<S, A>::value && linear_in<S, B>::value> {};
template <class S, class A, class B>
struct linear_in<S, tensor_expr<mul_rule, A, B>> : std::bool_constant<(coefficient_leaf<A> && linear_in<S, B>::value) ||
                                                                      (linear_in<S, A>::value && coefficient_leaf<B>)> {
};
template <class S, class A, class B>
struct linear_in<S, tensor_expr<div_rule, A, B>> : std::bool_constant<linear_in<S, A>::value && coefficient_leaf<B>> {};

/// Calls f(leaf) for every operand leaf at S's level in E, in push order (active_leaves' order).
template <class S, class X, class F>
void for_each_active_leaf(tensor_leaf<X>& l, F& f) {
  if constexpr (at_level_of<S, X>) f(l);
}
template <class S, class X, class F>
void for_each_active_leaf(scalar_leaf<X>& l, F& f) {
  if constexpr (at_level_of<S, X>) f(l);
}
template <class S, class Rule, class... Ops, class F>
void for_each_active_leaf(tensor_expr<Rule, Ops...>& e, F& f) {
  if constexpr (at_level_of<S, typename tensor_expr<Rule, Ops...>::element_type>)
    e.visit_operands([&](auto& op) { for_each_active_leaf<S>(op, f); });
}

/// The tape node of a linear elementwise expression (linear_in) over var<T> elements, T a plain
/// number: per operand one partial and how its indices run over the elements, which the
/// operand's tensor tells before the loop: a block of variables read in order (index first + i),
/// one variable read by every element (broadcast), or otherwise its indices element by element
/// (general). Operands that are the same block or the same variable are merged (their partials
/// added). The forward pass computes the values only; the backward pass is one multiply-add
/// loop per operand.
template <class T>
struct linear_node final : tape<T>::template node_with_inputs<linear_node<T>> {
  using operand_kind = typename elementwise_node<T>::operand_kind;
  struct operand {
    operand_kind kind;
    index_type first;     ///< block, cyclic: the index of element 0; broadcast: the variable's index
    index_type* indices;  ///< general: each element's index
    std::size_t period;   ///< cyclic: element i reads first + i % period
    T partial;
  };
  std::size_t n = 0;
  std::size_t count = 0;
  operand* ops;

  linear_node(tape<T>& tp, std::size_t elements, std::size_t k)
      : n(elements), ops(tp.template node_array<operand>(k)) {}

  /// Adds an operand; a block or a variable seen before gets its partial added instead.
  void add(operand_kind kind, index_type first, index_type* indices, T partial, std::size_t period = 0) {
    if (kind != operand_kind::general)
      for (std::size_t j = 0; j < count; ++j)
        if (ops[j].kind == kind && ops[j].first == first && ops[j].period == period) {
          ops[j].partial += partial;
          return;
        }
    ops[count++] = operand{kind, first, indices, period, partial};
  }

  void backward(T* adj) const override {
    T const* a = adj + this->first;
    for (std::size_t j = 0; j < count; ++j) {
      operand const& o = ops[j];
      T const p = o.partial;
      switch (o.kind) {
        case operand_kind::broadcast: {
          T s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four sums: no single dependency chain
          std::size_t i = 0;
          for (; i + 4 <= n; i += 4) {
            s0 += a[i];
            s1 += a[i + 1];
            s2 += a[i + 2];
            s3 += a[i + 3];
          }
          for (; i < n; ++i) s0 += a[i];
          adj[o.first] += p * ((s0 + s1) + (s2 + s3));
          break;
        }
        case operand_kind::block: {
          T* d = adj + o.first;
          for (std::size_t i = 0; i < n; ++i) d[i] += p * a[i];
          break;
        }
        case operand_kind::cyclic: {
          T* d = adj + o.first;
          for (std::size_t r = 0; r < n; r += o.period)
            for (std::size_t c = 0; c < o.period; ++c) d[c] += p * a[r + c];
          break;
        }
        case operand_kind::general:
          for (std::size_t i = 0; i < n; ++i) adj[o.indices[i]] += p * a[i];
          break;
      }
    }
  }
  /// for_inputs over the inputs of operand j.
  template <class F>
  bool operand_inputs(std::size_t j, F&& f) const {
    operand const& o = ops[j];
    if (o.kind == operand_kind::general) {
      for (std::size_t i = 0; i < n; ++i)
        if (f(o.indices[i], 1)) return true;
      return false;
    }
    return f(o.first, o.kind == operand_kind::block ? n : o.kind == operand_kind::cyclic ? o.period : 1);
  }
  template <class F>
  bool for_inputs(F&& f) const {
    for (std::size_t j = 0; j < count; ++j)
      if (operand_inputs(j, f)) return true;
    return false;
  }
  bool keeps_values(std::uint8_t const* used) const override {
    auto const is_used = [used](index_type first, std::size_t c) { return any_marked(used, first, c); };
    for (std::size_t j = 0; j < count; ++j)
      if (!unit_partials(&ops[j].partial, 1) && operand_inputs(j, is_used)) return true;
    return false;
  }
  bool nonfinite() const override {
    return std::any_of(ops, ops + count, [](operand const& o) { return !all_finite(o.partial); });
  }
  std::size_t bytes() const noexcept override {
    std::size_t b = count * sizeof(operand);
    for (std::size_t j = 0; j < count; ++j)
      if (ops[j].kind == operand_kind::general) b += n * sizeof(index_type);
    return b;
  }
};

/// Receives the partials of one element of a linear expression, by push position.
template <class T, std::size_t K>
struct partial_writer {
  static constexpr bool takes_positions = true;
  std::array<T, K> partial{};
  template <std::size_t J>
  ADX_ALWAYS_INLINE void add_at(index_type, epoch_type, T const& p) {
    std::get<J>(partial) = p;
  }
};

/// Steps a row-major multi-index over shape sh (the last axis fastest).
inline void next_index(stride_array& idx, adx::shape const& sh) noexcept {
  for (std::size_t d = sh.rank(); d-- > 0;) {
    if (++idx[d] < sh[d]) return;
    idx[d] = 0;
  }
}

/// The length of the rows a loop on lanes runs along (tensor/lanes.hpp): a row's for a read
/// in rows, all n for a flat read, and 0 (no lanes) for a strided one.
inline std::size_t lane_period(read_plan plan, std::size_t n) noexcept {
  if (plan.how == read_plan::mode::strided) return 0;
  return plan.how == read_plan::mode::rows ? plan.period : n;
}

/// How expr (or one leaf) is read over the result's shape sh; bind(sh, plan) then prepares it.
template <class E>
read_plan read_plan_for(E const& expr, adx::shape const& sh) noexcept {
  using mode = read_plan::mode;
  if (expr.flat_readable(sh)) return {mode::flat};  // the common case first: one test per operand
  std::size_t const p = expr.row_period(sh);
  return p == no_rows ? read_plan{mode::strided} : read_plan{mode::rows, p};
}

/// The result tensor of shape sh whose element i is make(i, element expression i), each made
/// in place, in row-major order.
template <class R, class E, class F>
tensor<R> generate_elements(E const& expr, adx::shape const& sh, read_plan plan, F&& make) {
  if (plan.how == read_plan::mode::flat)
    return tensor<R>::generate(sh, [&](std::size_t i) ADX_INLINE_LAMBDA { return make(i, expr.at_flat(i)); });
  if (plan.how == read_plan::mode::rows) {
    std::size_t c = 0;
    return tensor<R>::generate(sh, [&](std::size_t i) ADX_INLINE_LAMBDA {
      R r = make(i, expr.at_row(i, c));
      if (++c == plan.period) c = 0;
      return r;
    });
  }
  stride_array idx{};
  std::size_t const rank = sh.rank();
  return tensor<R>::generate(sh, [&](std::size_t i) ADX_INLINE_LAMBDA {
    R r = make(i, expr.at_index(idx, rank));
    next_index(idx, sh);
    return r;
  });
}

/// Calls f(i, element expression i) for every element of shape sh, in row-major order, reading
/// expr (or one leaf) as plan says.
/// Always inlined: the caller's accumulators then stay in registers (through a reference they
/// would be stored and reloaded per element, since the node's partial stores may alias them).
template <class E, class F>
ADX_ALWAYS_INLINE void visit_elements(E const& expr, adx::shape const& sh, read_plan plan, F&& f) {
  std::size_t const n = sh.size();
  if (plan.how == read_plan::mode::flat) {
    for (std::size_t i = 0; i < n; ++i) f(i, expr.at_flat(i));
    return;
  }
  if (plan.how == read_plan::mode::rows) {
    for (std::size_t r = 0; r < n; r += plan.period)
      for (std::size_t c = 0; c < plan.period; ++c) f(r + c, expr.at_row(r + c, c));
    return;
  }
  stride_array idx{};
  std::size_t const rank = sh.rank();
  for (std::size_t i = 0; i < n; ++i) {
    f(i, expr.at_index(idx, rank));
    next_index(idx, sh);
  }
}

/// After an element loop whose writers saw an operand of another recording than the current
/// one: operands of outer recordings are fine, of ended ones an error (stale_variable_error).
template <class R, class E, class Tape>
void check_operands_live(E const& expr, Tape const& tp) {
  epoch_type live = 0;
  expr.template for_each_epoch<R>([&](epoch_type e) { tp.check_live(e, live); });
}

template <class X>
inline constexpr bool is_scalar_leaf = false;
template <class X>
inline constexpr bool is_scalar_leaf<scalar_leaf<X>> = true;

/// evaluate_elementwise for a linear expression (linear_in) over var<T>, T a plain number: a
/// linear_node. Element 0's push gives the partials; each operand's tensor tells how its
/// indices run; the loop over the elements computes the values only. (Read in rows, it takes
/// the values through pointers set here; strided, through the elements.)
template <class R, class E, class T>
tensor<R> evaluate_linear(E& expr, adx::shape const& sh, read_plan plan, tape<T>& tp) {
  using element_expr = std::remove_cvref_t<decltype(expr.at_flat(0))>;
  using node_type = linear_node<T>;
  using kind = typename node_type::operand_kind;
  constexpr std::size_t K = element_expr::n_active;
  std::size_t const n = sh.size();
  std::size_t const rank = sh.rank();
  partial_writer<T, K> pw;
  if (plan.how != read_plan::mode::strided) {
    expr.at_flat(0).push(pw);  // element 0 reads every operand's element 0
  } else {
    stride_array const origin{};
    expr.at_index(origin, rank).push(pw);
  }
  auto const cp = tp.checkpoint();
  auto nd = tp.template make_node<node_type>(tp, n, K);
  auto& node = *nd;  // the node does not move once the tape owns it
  epoch_type const ep = tp.epoch();
  auto made = make_var_values<R>(n, 0, ep);  // the outputs' values and block, one allocation
  auto& block = made.first;
  T* const v = made.second;
  block->first = tp.record_node(std::move(nd), n, describe_expression<E>());
  index_type any_index = 0;
  std::uint64_t stray_epoch = 0;
  std::vector<std::unique_ptr<T[]>> gathered;  // the values of operands read element by element
  try {
    std::size_t j = 0;
    auto leaf = [&](auto& l) {
      T const p = pw.partial[j++];
      auto note = [&](kind k, index_type i, epoch_type e, index_type* ix, std::size_t period = 0) {
        any_index |= i;
        stray_epoch |= stray_epoch_bits(e, ep);
        node.add(k, i, ix, p, period);
      };
      if constexpr (is_scalar_leaf<std::remove_cvref_t<decltype(l)>>) {
        note(kind::broadcast, l.v.index(), l.v.epoch(), nullptr);
      } else if (l.single) {
        auto const x = l.at_flat(0);
        note(kind::broadcast, x.index(), x.epoch(), nullptr);
        l.kept.read = l.kept.v ? l.kept.v : &l.e[0].val();
        l.kept.step = 0;
      } else if (l.kept.v && l.shape() == sh) {
        note(kind::block, l.kept.first, l.kept.epoch, nullptr);
        l.kept.read = l.kept.v;
        l.kept.step = 1;
      } else if (l.kept.v && reads_cyclically(l.shape(), sh)) {
        note(kind::cyclic, l.kept.first, l.kept.epoch, nullptr, l.t.size());
        l.kept.read = l.kept.v;  // read at the column (a row operand), or through at_index
        l.kept.step = 0;
      } else {
        index_type* const ix = tp.template node_array<index_type>(n);
        T* const xv = gathered.emplace_back(std::make_unique_for_overwrite<T[]>(n)).get();
        index_type any = 0;
        std::uint64_t stray = 0;
        auto take = [&](std::size_t i, auto const& x) {
          ix[i] = x.index();
          xv[i] = x.val();
          any |= x.index();
          stray |= stray_epoch_bits(x.epoch(), ep);
        };
        visit_elements(l, sh, plan, take);
        any_index |= any;
        stray_epoch |= stray;
        node.add(kind::general, 0, ix, p);
        l.kept.read = xv;  // gathered: element i at i, a row operand too
        l.kept.step = 1;
        l.row = false;
      }
    };
    for_each_active_leaf<R>(expr, leaf);
    if (plan.how == read_plan::mode::flat) {
      for (std::size_t i = 0; i < n; ++i) v[i] = expr.value_flat(i);
    } else if (plan.how == read_plan::mode::rows) {
      for (std::size_t r = 0; r < n; r += plan.period)
        for (std::size_t c = 0; c < plan.period; ++c) v[r + c] = expr.value_row(r + c, c);
    } else {
      visit_elements(expr, sh, plan, [&](std::size_t i, auto const& e) ADX_INLINE_LAMBDA { v[i] = e.val(); });
    }
    if (stray_epoch != 0) check_operands_live<R>(expr, tp);
  } catch (...) {
    tp.rollback(cp);
    throw;
  }
  if (any_index == 0) {  // constants only: no node, constant results
    tp.rollback(cp);
    return tensor<R>::generate(sh, [&](std::size_t i) { return R::constant(v[i]); });
  }
  return tensor_access::from_block<R>(sh, std::move(block));
}

/// How the active operands of expr (at R's level, in push order) are read, if each is a block
/// of variables read in order (a tensor kept as values, of the result's shape) or one variable
/// (a size-1 tensor, a scalar): then the node needs no per-element indices. Returns false
/// otherwise. Notes the OR of the indices and of stray_epoch_bits (see the writer).
template <class R, class Kind, std::size_t K, class E>
bool block_operands(E& expr, adx::shape const& sh, std::array<Kind, K>& kind, std::array<index_type, K>& first,
                    std::array<std::size_t, K>& period, index_type& any_index, std::uint64_t& stray_epoch,
                    epoch_type ep) {
  std::size_t j = 0;
  bool blocks = true;
  auto leaf = [&](auto& l) {
    std::size_t const J = j++;
    auto note = [&](Kind k, index_type i, epoch_type e, std::size_t per = 0) {
      kind[J] = k;
      first[J] = i;
      period[J] = per;
      any_index |= i;
      stray_epoch |= stray_epoch_bits(e, ep);
    };
    if constexpr (is_scalar_leaf<std::remove_cvref_t<decltype(l)>>) {
      note(Kind::broadcast, l.v.index(), l.v.epoch());
    } else if (l.single) {
      auto const x = l.at_flat(0);
      note(Kind::broadcast, x.index(), x.epoch());
    } else if (l.kept.v && l.shape() == sh) {
      note(Kind::block, l.kept.first, l.kept.epoch);
    } else if (l.kept.v && reads_cyclically(l.shape(), sh)) {
      note(Kind::cyclic, l.kept.first, l.kept.epoch, l.t.size());
    } else {
      blocks = false;
    }
  };
  for_each_active_leaf<R>(expr, leaf);
  return blocks;
}

/// evaluate_elementwise over var<T> elements: ONE elementwise_node. The node is recorded first
/// (its outputs' indices are needed) and filled in one pass. If an operand turns out to be
/// stale, or none is active, the node is dropped again. When block_operands can tell every
/// operand's indices, the node keeps partials only.
template <class R, class E, class T>
tensor<R> evaluate_recorded(E& expr, adx::shape const& sh, read_plan plan, tape<T>& tp) {
  using element_expr = std::remove_cvref_t<decltype(expr.at_flat(0))>;
  using node_type = elementwise_node<T>;
  constexpr std::size_t K = element_expr::n_active;
  std::size_t const n = sh.size();
  epoch_type const ep = tp.epoch();
  index_type any_index = 0;
  std::uint64_t stray_epoch = 0;
  std::array<typename node_type::operand_kind, K> kinds{};
  std::array<index_type, K> firsts{};
  std::array<std::size_t, K> periods{};
  bool const blocks = block_operands<R>(expr, sh, kinds, firsts, periods, any_index, stray_epoch, ep);
  if (!blocks) any_index = 0, stray_epoch = 0;
  auto const cp = tp.checkpoint();
  auto nd = tp.template make_node<node_type>(tp, n, K, 0, !blocks);
  if (blocks) {
    std::copy(kinds.begin(), kinds.end(), nd->kind);
    std::copy(firsts.begin(), firsts.end(), nd->operand_first);
    std::copy(periods.begin(), periods.end(), nd->operand_period);
  }
  index_type* const index = nd->stored.index;
  T* const partial = nd->stored.partial;
  // the outputs are one block: kept as their values beside it (detail::var_values), which
  // share one allocation
  auto made = make_var_values<R>(n, 0, ep);
  auto& block = made.first;
  T* const v = made.second;
  auto& node = *nd;  // the node does not move once the tape owns it
  block->first = tp.record_node(std::move(nd), n, describe_expression<E>());
  try {
    using writer = typename node_type::template writer<element_expr::n_active>;
    if (!(blocks && record_on_lanes<R, writer>(expr, lane_period(plan, n), partial, v, n)))
      visit_elements(expr, sh, plan, [&](std::size_t i, auto const& e) ADX_INLINE_LAMBDA {
        // a writer per element, whose address never escapes: it stays in registers
        writer w{index, partial, n, i, ep};
        e.push(w);
        any_index |= w.any_index;
        stray_epoch |= w.stray_epoch;
        v[i] = e.val();
      });
    if (stray_epoch != 0) check_operands_live<R>(expr, tp);
  } catch (...) {
    tp.rollback(cp);
    throw;
  }
  if (any_index == 0) {  // constants only: no node, constant results
    tp.rollback(cp);
    return tensor<R>::generate(sh, [&](std::size_t i) { return R::constant(v[i]); });
  }
  node.classify();
  return tensor_access::from_block<R>(sh, std::move(block));
}

/// Runs the loop: one pass over the result. For var<T> elements the expression becomes ONE
/// tape node (values now, partials in the sweep); otherwise each element is built from its
/// scalar expression (plain values, or value and tangent for dual).
template <class E>
auto evaluate_elementwise(E& expr) {
  using R = typename E::element_type;
  adx::shape const sh = expr.shape();
  read_plan const plan = read_plan_for(expr, sh);
  expr.bind(sh, plan);
  if constexpr (is_reverse_v<R>) {
    using T = value_type_t<R>;
    auto& tp = tape<T>::current();
    if (sh.size() == 0 || !grad_enabled()) {
      std::size_t const period = lane_period(plan, sh.size());
      if (runs_on_lanes<R>(expr, period)) {  // the values the recorded loop would give
        auto const v = std::make_unique_for_overwrite<T[]>(sh.size());
        fill_on_lanes<R>(expr, period, v.get(), sh.size());
        return tensor<R>::generate(sh, [&](std::size_t i) { return R::constant(v[i]); });
      }
      return generate_elements<R>(expr, sh, plan, [](std::size_t, auto const& e) { return R::constant(e.val()); });
    }
    if constexpr (std::is_arithmetic_v<T> && linear_in<R, E>::value)
      return evaluate_linear<R>(expr, sh, plan, tp);
    else
      return evaluate_recorded<R>(expr, sh, plan, tp);
  } else {
    if constexpr (lane_ready<R, E>) {  // R is double: a buffer of numbers
      std::size_t const period = lane_period(plan, sh.size());
      if (runs_on_lanes<R>(expr, period))
        return tensor<R>::fill(sh, [&](R* out) { fill_on_lanes<R>(expr, period, out, sh.size()); });
    }
    return generate_elements<R>(expr, sh, plan, [](std::size_t, auto&& e) { return R(e); });
  }
}

}  // namespace detail

/// Evaluates a tensor expression (or copies a tensor: a class derived from tensor<S>, such as
/// parameter<T>, gives its tensor<S>).
template <class E>
requires tensor_operand<E>
auto eval(E const& e) {
  if constexpr (tensor_type<E>)
    return tensor<typename E::value_type>(e);
  else {
    E c = e;  // evaluation binds the operands to the result's shape
    return detail::evaluate_elementwise(c);
  }
}

namespace detail {

/// make_unconnected over tensors: the elements of a rule flagged unconnected_in_tf over var
/// elements are evaluated, as one node over the evaluated operand recorded at the caller's
/// line, and noted on their tape; over other elements the expression stays unevaluated.
template <class Rule, class X>
auto make_unconnected_tensor(source_location where, X&& x) {
  static_assert(Rule::unconnected_in_tf);
  using S = typename decltype(make_tensor_expr<Rule>(std::forward<X>(x)))::element_type;
  if constexpr (notes_unconnected<S>) {
    anomaly_site_guard const site(where);
    tensor<S> const operand = eval(std::forward<X>(x));  // an expression: its own node
    tensor<S> r = eval(make_tensor_expr<Rule>(operand));
    if (var_block const b = tensor_access::block(r); b.first != 0)
      tape<value_type_t<S>>::current().mark_unconnected(b.first, static_cast<index_type>(r.size()));
    else
      for (S const& v : std::span<S const>(std::as_const(r).data(), r.size())) ad_traits<S>::note_unconnected(v);
    return r;
  } else {
    (void)where;
    return make_tensor_expr<Rule>(std::forward<X>(x));
  }
}

}  // namespace detail

// ---- operators ----------------------------------------------------------------------------

template <tensor_operand X>
auto operator-(X&& x) {
  return detail::make_tensor_expr<detail::neg_rule>(std::forward<X>(x));
}
template <class X, class Y>
requires tensor_operands2<X, Y>
auto operator+(X&& x, Y&& y) {
  return detail::make_tensor_expr<detail::add_rule>(std::forward<X>(x), std::forward<Y>(y));
}
template <class X, class Y>
requires tensor_operands2<X, Y>
auto operator-(X&& x, Y&& y) {
  return detail::make_tensor_expr<detail::sub_rule>(std::forward<X>(x), std::forward<Y>(y));
}
template <class X, class Y>
requires tensor_operands2<X, Y>
auto operator*(X&& x, Y&& y) {
  return detail::make_tensor_expr<detail::mul_rule>(std::forward<X>(x), std::forward<Y>(y));
}
template <class X, class Y>
requires tensor_operands2<X, Y>
auto operator/(X&& x, Y&& y) {
  return detail::make_tensor_expr<detail::div_rule>(std::forward<X>(x), std::forward<Y>(y));
}

template <class X, class L, class H>
requires tensor_operand<X> || tensor_operand<L> || tensor_operand<H>
auto clamp(X&& x, L&& lo, H&& hi) {
  return detail::make_tensor_expr<detail::clamp_rule>(std::forward<X>(x), std::forward<L>(lo), std::forward<H>(hi));
}
/// where(mask, a, b) elementwise; the mask is a tensor<bool> (or any tensor read as != 0).
template <class C, class A, class B>
requires tensor_operand<C> || tensor_operand<A> || tensor_operand<B>
auto where(C&& c, A&& a, B&& b) {
  return detail::make_tensor_expr<detail::select_rule>(std::forward<C>(c), std::forward<A>(a), std::forward<B>(b));
}

// ---- comparisons: masks -------------------------------------------------------------------

namespace detail {
template <class Cmp>
struct compare_rule {
  static constexpr char const* name = Cmp::name;
  template <class X, class Y>
  static bool value(X const& x, Y const& y) {
    return Cmp{}(primal_of(x), primal_of(y));
  }
};
struct less_op {
  static constexpr char const* name = "less";
  bool operator()(double a, double b) const { return a < b; }
};
struct greater_op {
  static constexpr char const* name = "greater";
  bool operator()(double a, double b) const { return a > b; }
};
struct less_equal_op {
  static constexpr char const* name = "less_equal";
  bool operator()(double a, double b) const { return a <= b; }
};
struct greater_equal_op {
  static constexpr char const* name = "greater_equal";
  bool operator()(double a, double b) const { return a >= b; }
};
struct equal_op {
  static constexpr char const* name = "equal";
  bool operator()(double a, double b) const { return a == b; }
};
struct not_equal_op {
  static constexpr char const* name = "not_equal";
  bool operator()(double a, double b) const { return a != b; }
};

template <class X>
auto eval_operand(X const& x) {
  if constexpr (tensor_operand<X>)
    return eval(x);
  else
    return x;
}
template <class X>
adx::shape shape_of(X const& x) {
  if constexpr (tensor_type<X>)
    return x.shape();
  else
    return {};
}
template <class X>
stride_array strides_for(X const& x, adx::shape const& out) {
  if constexpr (tensor_type<X>)
    return broadcast_strides(x.shape(), out);
  else
    return {};
}
template <class X>
decltype(auto) element(X const& x, std::size_t o) {
  if constexpr (tensor_type<X>)
    return x.data()[o];
  else
    return (x);
}
/// Compares the primal values of two tensor operands elementwise into a tensor<bool>.
template <class Op, class X, class Y>
tensor<bool> compare(X const& x, Y const& y) {
  auto ex = eval_operand(x);
  auto ey = eval_operand(y);
  adx::shape const sh = broadcast_shapes(shape_of(ex), shape_of(ey), Op::name);
  tensor<bool> out(sh);
  bool* o = out.data();
  std::array<stride_array, 2> const st{strides_for(ex, sh), strides_for(ey, sh)};
  multi_index<2> at{sh, st};
  for (std::size_t i = 0; i < out.size(); ++i) {
    o[i] = Op{}(static_cast<double>(primal_of(element(ex, at.off[0]))),
                static_cast<double>(primal_of(element(ey, at.off[1]))));
    at.next();
  }
  return out;
}
}  // namespace detail

#define ADX_TENSOR_COMPARISON(op, cls)         \
  template <class X, class Y>                  \
  requires tensor_operands2<X, Y> tensor<bool> \
  operator op(X const& x, Y const& y) { return detail::compare<detail::cls>(x, y); }
ADX_TENSOR_COMPARISON(<, less_op)
ADX_TENSOR_COMPARISON(>, greater_op)
ADX_TENSOR_COMPARISON(<=, less_equal_op)
ADX_TENSOR_COMPARISON(>=, greater_equal_op)
ADX_TENSOR_COMPARISON(==, equal_op)
ADX_TENSOR_COMPARISON(!=, not_equal_op)
#undef ADX_TENSOR_COMPARISON

}  // namespace adx
