// SPDX-License-Identifier: MIT
// adx: how a matrix operation meets the element types. An operation (linalg/*.hpp) is a
// struct with
//
//   inputs, outputs                        how many tensors it takes and gives
//   name                                   torch's name (a member), for errors and anomaly reports
//   compute(in)            -> result<T>    the outputs for numbers (T = float, double, ...),
//                                          through the LAPACK dispatch point, and what the
//                                          adjoint may reuse (a factorization)
//   adjoint(in, out, kept, g, need) -> gin the inputs' cotangents from the outputs'
//   tangent(in, out, kept, d)       -> dout the outputs' tangents from the inputs'
//
// adjoint and tangent are written once, with adx's tensor operations over any element type T:
// for T = double they run on numbers; for T = var<double> (the values of a var<var<double>>
// operation) they record on the inner tape, which gives second derivatives, and so on down.
// `kept` holds the factorization only where T is a number; for AD values it is empty and the
// rule recomputes what it needs through differentiable operations.
//
// apply_op(op, in) over tensor<S>:
//   numbers    compute
//   dual<T>    the outputs at the values (recursively) and their tangents from tangent()
//   var<T>     the outputs at the values (recursively) and ONE tape node over all outputs,
//              whose backward calls adjoint() when the sweep reaches them
// Every tensor here is a batch of matrices, rank 3 ([batch, rows, cols]); the public
// functions (linalg/*.hpp) broadcast, flatten and restore the batch axes.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/forward/dual.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/linalg.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx::detail {

/// What an operation's kernel keeps for its rules: factors and pivots (numbers only).
template <class T>
struct kept_factors {
  std::vector<tensor<T>> factors;  ///< e.g. the LU factors, the singular vectors
  std::vector<int> pivots;         ///< LU's row exchanges, batch after batch
  /// Whether the kernel kept anything (false for AD values).
  bool empty() const noexcept { return factors.empty(); }
};

/// An operation's outputs and what it keeps, at element type T.
template <class T, std::size_t NO>
struct op_result {
  std::array<tensor<T>, NO> out;  ///< the outputs, in the operation's order
  kept_factors<T> kept;           ///< the kernel's factorization (numbers only)
};

template <class Op, class S>
std::array<tensor<S>, Op::outputs> apply_op(Op const& op, std::array<tensor<S>, Op::inputs> const& in);

/// The outputs and kept factors at element type T: the kernel for numbers, the operation one
/// level down (recorded, differentiable) for AD values.
template <class Op, class T>
op_result<T, Op::outputs> op_values(Op const& op, std::array<tensor<T>, Op::inputs> const& in) {
  if constexpr (level_v<T> == 0)
    return op.compute(in);
  else
    return {apply_op(op, in), {}};
}

/// The tape node of a matrix operation over var<T> elements: its outputs are one block of
/// statements, output after output.
template <class T, class Op>
struct linalg_node final : tape<T>::template node_with_inputs<linalg_node<T, Op>> {
  Op op;
  std::array<matmul_side<T>, Op::inputs> in;
  std::array<tensor<T>, Op::outputs> out;
  kept_factors<T> kept;

  void backward(T* adj) const override {
    std::array<tensor<T>, Op::outputs> g;
    index_type at = this->first;
    for (std::size_t k = 0; k < Op::outputs; ++k) {
      g[k] = tensor<T>::generate(out[k].shape(), [&](std::size_t i) { return adj[at + i]; });
      at += static_cast<index_type>(out[k].size());
    }
    std::array<tensor<T>, Op::inputs> values;
    std::array<bool, Op::inputs> need{};
    for (std::size_t k = 0; k < Op::inputs; ++k) values[k] = in[k].values, need[k] = in[k].active;
    std::array<tensor<T>, Op::inputs> const gin = op.adjoint(values, out, kept, g, need);
    for (std::size_t k = 0; k < Op::inputs; ++k) {
      if (!need[k]) continue;
      T const* src = gin[k].data();
      std::size_t const n = in[k].values.size();
      in[k].add_adjoints(adj, [&](T* o, bool accumulate) {
        if (accumulate)
          for (std::size_t i = 0; i < n; ++i) o[i] += src[i];
        else
          std::copy_n(src, n, o);
      });
    }
  }
  template <class F>
  bool for_inputs(F&& f) const {
    for (auto const& side : in)
      if (side.for_inputs(f)) return true;
    return false;
  }
  /// The rules read the inputs' and outputs' values.
  bool nonfinite() const override {
    for (auto const& side : in)
      if (any_nonfinite(side.values.data(), side.values.size())) return true;
    for (auto const& o : out)
      if (any_nonfinite(o.data(), o.size())) return true;
    return false;
  }
  std::size_t bytes() const noexcept override {
    std::size_t b = 0;
    for (auto const& side : in) b += side.bytes();
    for (auto const& o : out) b += o.size() * sizeof(T);
    for (auto const& f : kept.factors) b += f.size() * sizeof(T);
    return b + kept.pivots.size() * sizeof(int);
  }
};

/// The operation over var<T> elements: outputs at the values, one node for the derivatives.
template <class Op, class S>
std::array<tensor<S>, Op::outputs> apply_reverse(Op const& op, std::array<tensor<S>, Op::inputs> const& in) {
  using T = value_type_t<S>;
  std::array<matmul_side<T>, Op::inputs> sides;
  std::array<tensor<T>, Op::inputs> values;
  bool active = false;
  for (std::size_t k = 0; k < Op::inputs; ++k) {
    sides[k] = product_side<S>(in[k]);
    values[k] = sides[k].values;
    active |= sides[k].active;
  }
  op_result<T, Op::outputs> r = op_values(op, values);
  std::size_t total = 0;
  for (auto const& o : r.out) total += o.size();
  std::array<tensor<S>, Op::outputs> result;
  if (!active || total == 0 || !grad_enabled()) {
    for (std::size_t k = 0; k < Op::outputs; ++k)
      result[k] = tensor<S>::generate(r.out[k].shape(), [&](std::size_t i) { return S::constant(r.out[k].data()[i]); });
    return result;
  }
  auto& tp = tape<T>::current();
  auto made = make_var_values<S>(total, 0, tp.epoch());
  std::size_t at = 0;
  for (auto const& o : r.out) {
    std::copy_n(o.data(), o.size(), made.second + at);
    at += o.size();
  }
  auto nd = tp.template make_node<linalg_node<T, Op>>();
  nd->op = op;
  nd->in = std::move(sides);
  nd->out = r.out;
  nd->kept = std::move(r.kept);
  made.first->first = tp.record_node(std::move(nd), static_cast<index_type>(total), op.name);
  tensor<S> const whole = tensor_access::from_block<S>(shape{total}, std::move(made.first));
  at = 0;
  for (std::size_t k = 0; k < Op::outputs; ++k) {
    std::size_t const n = r.out[k].size();
    result[k] = whole.slice(0, static_cast<long>(at), static_cast<long>(at + n)).reshape(r.out[k].shape());
    at += n;
  }
  return result;
}

/// The operation over dual<T> elements: outputs at the values, tangents from the rule.
template <class Op, class S>
std::array<tensor<S>, Op::outputs> apply_forward(Op const& op, std::array<tensor<S>, Op::inputs> const& in) {
  using T = value_type_t<S>;
  std::array<tensor<T>, Op::inputs> values, tangents;
  for (std::size_t k = 0; k < Op::inputs; ++k) {
    values[k] = in[k].values();
    tangents[k] = tensor<T>::generate(in[k].shape(), [&](std::size_t i) { return in[k].data()[i].tangent(); });
  }
  op_result<T, Op::outputs> r = op_values(op, values);
  std::array<tensor<T>, Op::outputs> const d = op.tangent(values, r.out, r.kept, tangents);
  std::array<tensor<S>, Op::outputs> result;
  for (std::size_t k = 0; k < Op::outputs; ++k)
    result[k] =
        tensor<S>::generate(r.out[k].shape(), [&](std::size_t i) { return S(r.out[k].data()[i], d[k].data()[i]); });
  return result;
}

/// The operation over tensors of S (numbers, dual or var at any nesting); see the file comment.
template <class Op, class S>
std::array<tensor<S>, Op::outputs> apply_op(Op const& op, std::array<tensor<S>, Op::inputs> const& in) {
  if constexpr (level_v<S> == 0)
    return op.compute(in).out;
  else if constexpr (is_reverse_v<S>)
    return apply_reverse(op, in);
  else
    return apply_forward(op, in);
}

/// apply_op over the operands given one by one (of one element type).
/// Whether S's numbers (at the bottom of its nesting) are floating point.
template <class S>
inline constexpr bool floating_elements =
    std::is_floating_point_v<std::remove_cvref_t<decltype(primal(std::declval<S>()))>>;

template <class Op, class S, class... R>
std::array<tensor<S>, Op::outputs> run_op(Op const& op, tensor<S> const& x, R const&... rest) {
  static_assert(1 + sizeof...(R) == Op::inputs, "adx: internal: a linalg operation given the wrong operand count");
  static_assert(floating_elements<S>,
                "adx: linalg functions need floating-point elements (float, double, long double, or AD types over "
                "them): convert an integer tensor first");
  return apply_op(op, std::array<tensor<S>, Op::inputs>{x, tensor<S>(rest)...});
}

}  // namespace adx::detail
