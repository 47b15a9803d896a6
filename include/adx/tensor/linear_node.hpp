// SPDX-License-Identifier: MIT
// adx: linear elementwise expressions. An expression that is linear with constant
// coefficients (`+`, `-`, and `*` or `/` by a number) has the same partials at every element:
// its tape node (linear_node) keeps one partial per operand, merges operands that are the same
// block or the same variable, and its forward loop computes values only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/tensor/elementwise_node.hpp"

namespace adx::detail {

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

}  // namespace adx::detail
