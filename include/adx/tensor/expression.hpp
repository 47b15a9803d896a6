// SPDX-License-Identifier: MIT
// adx: the elementwise tensor expression. `a * b + sin(c) / d` over tensors builds one
// tensor_expr tree of leaves (a tensor's elements, one scalar read by every element) whose
// element i is the scalar expression the scalar layer builds from the same rules
// (tensor/elementwise.hpp evaluates it). Operands are kept by value (tensors share their
// buffers, so this is cheap): an expression never dangles, and assigning it to one of its own
// operands is safe.
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
  /// The row length over which every operand repeats when read as rows of out (0: none).
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
  using is_tensor_expr = void;  ///< marks the type for the tensor operators' overloads

  /// The expression Rule(ops...), its shape the operands' broadcast shape (shape_error if none).
  explicit tensor_expr(Ops... ops) : ops_(std::in_place, std::move(ops)...) { set_shape(); }
  /// Each operand made in place by one of `make` (make_tensor_expr: nothing is moved).
  template <class... M>
  explicit tensor_expr(detail::from_makers_t tag, M&&... make) : ops_(tag, std::forward<M>(make)...) {
    set_shape();
  }

  /// The broadcast shape of the result.
  adx::shape const& shape() const noexcept { return shape_; }
  /// Whether every operand can be read at the result's flat positions (same shape, or one element).
  bool flat_readable(adx::shape const& out) const noexcept {
    return ops_.apply([&](auto const&... op) { return (op.flat_readable(out) && ...); });
  }
  /// The row length over which every operand repeats when read as rows of out (0: none).
  std::size_t row_period(adx::shape const& out) const noexcept {
    return ops_.apply([&](auto const&... op) {
      std::size_t p = 0;
      ((p = detail::join_rows(p, op.row_period(out))), ...);
      return p;
    });
  }
  /// Prepares every operand to be read into a result of shape out, the way plan says.
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
  /// The element at the multi-index idx (its first rank entries) of the result.
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
  /// The element's value at element i, column c of its row (see value_flat).
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
  /// Calls f on each operand, left to right, as modifiable.
  template <class F>
  void visit_operands(F&& f) {
    ops_.apply([&](auto&... op) { (f(op), ...); });
  }
  /// Calls f with the recording of every variable of type R among the operands (tensor_leaf).
  template <class R, class F>
  void for_each_epoch(F&& f) const {
    ops_.apply([&](auto const&... op) { (op.template for_each_epoch<R>(f), ...); });
  }

  /// The scalar type of the result's elements.
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

}  // namespace detail
}  // namespace adx
