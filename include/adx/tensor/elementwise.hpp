// SPDX-License-Identifier: MIT
// adx: fused elementwise tensor expressions, evaluated. `a * b + sin(c) / d` over tensors builds
// one tensor_expr tree (tensor/expression.hpp); assigning it to a tensor runs ONE loop over the
// (broadcast) result, and at each element builds the same scalar expression the scalar layer
// would build from the same rules. So every elementwise function works in every mode: for
// tensor<double> the loop is plain arithmetic; for tensor<dual<T>> each element gets its
// tangent; for tensor<var<T>> the expression is ONE tape node owning a contiguous block of
// adjoint slots (tensor/elementwise_node.hpp), or, for a linear expression with constant
// coefficients, a node that keeps one partial per operand (tensor/linear_node.hpp). This file
// holds the loops and the operators; sum(e) and mean(e) of an expression make no elementwise
// result (reduce.hpp); comparisons make masks (tensor/masks.hpp).
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
#include "adx/tensor/elementwise_node.hpp"
#include "adx/tensor/expression.hpp"
#include "adx/tensor/lanes.hpp"
#include "adx/tensor/linear_node.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

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

}  // namespace adx

// Comparisons of tensors (masks), built on the element loops above.
#include "adx/tensor/masks.hpp"
