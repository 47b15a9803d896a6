// SPDX-License-Identifier: MIT
// adx: matrix products. matmul follows numpy: [m,k]x[k,n], batched [b,m,k]x[b,k,n] (a rank-2
// side is shared by every batch), and rank-1 sides promoted and squeezed again.
//
// For tensor<var<T>> a product is ONE tape node: the values come from the gemm dispatch
// (BLAS for double/float), and the adjoint is two more gemm calls, dA += dC B^T and
// dB += A^T dC, run once when the sweep reaches the product's block of outputs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "adx/core/source_location.hpp"

#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/gemm.hpp"

namespace adx {
namespace detail {

/// Converts a tensor's elements to S without making new variables (numbers become constants).
template <class S, class U>
tensor<S> as_elements(tensor<U> const& t) {
  if constexpr (std::is_same_v<S, U>) {
    return t;
  } else {
    tensor<S> r(t.shape());
    S* o = r.data();
    for (std::size_t i = 0; i < t.size(); ++i) o[i] = to_value<S>(t.data()[i]);
    return r;
  }
}

/// One side of a product of var<T> elements: its values as a contiguous tensor<T> (shared, not
/// copied, when the side is a constant tensor<T>) and where its adjoints go.
template <class T>
struct matmul_side {
  tensor<T> values;
  index_type base = 0;            ///< the first index when the elements are one block of variables
  std::vector<index_type> index;  ///< otherwise each element's index (0: a constant)
  bool active = false;

  /// Adds this side's adjoints, which add(out, accumulate) writes: a block of variables takes
  /// them straight into its adjoint slots (accumulate, e.g. GEMM's beta = 1); any other active
  /// side goes through a buffer (written, not accumulated) scattered by index.
  template <class AddGrad>
  void add_adjoints(T* adj, AddGrad const& add) const {
    if (base) {
      add(adj + base, true);
    } else if (active) {
      std::size_t const n = values.size();
      auto g = std::make_unique_for_overwrite<T[]>(n);
      add(g.get(), false);
      for (std::size_t i = 0; i < n; ++i)
        if (index[i]) adj[index[i]] += g[i];
    }
  }
  /// f(first, count) for this side's variables (a node's for_inputs); true when f is.
  template <class F>
  bool for_inputs(F& f) const {
    if (base && f(base, values.size())) return true;
    for (index_type i : index)
      if (f(i, 1)) return true;
    return false;
  }
  /// The values (a shared constant counted too) and scattered indices a node keeps.
  std::size_t bytes() const noexcept { return values.size() * sizeof(T) + index.size() * sizeof(index_type); }
};

/// The values and indices of a product's operand; S is the product's element type var<T>.
template <class S, class X>
matmul_side<value_type_t<S>> product_side(tensor<X> const& x) {
  using T = value_type_t<S>;
  matmul_side<T> side;
  if constexpr (!std::is_same_v<X, S>) {
    side.values = as_elements<T>(x);  // numbers or a lower nesting level: constants
  } else {
    auto& tp = tape<T>::current();
    if (auto values = tensor_access::block_values(x)) {  // a block kept as values: no element is read
      var_block const b = tensor_access::block(x);
      tp.check_live(b.epoch);
      side.values = std::move(*values);
      side.base = b.first;
      side.active = true;
      return side;
    }
    S const* e = x.data();
    side.values = tensor<T>::generate(x.shape(), [&](std::size_t i) { return e[i].val(); });
    index_type const first = x.size() ? e[0].index() : 0;
    bool block = first != 0;
    // (Folding this loop into the values' generate above makes more instructions: this loop
    // and the copy are tighter apart.)
    epoch_type live = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      index_type const k = e[i].index();
      if (k != 0) {
        side.active = true;
        tp.check_live(e[i].epoch(), live);
      }
      block &= k == first + static_cast<index_type>(i);
    }
    if (block) {
      side.base = first;
    } else if (side.active) {
      side.index.resize(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) side.index[i] = e[i].index();
    }
  }
  return side;
}

/// The tape node of C = A B for var<T> elements (one batch of matrices or many).
template <class T>
struct matmul_node final : tape<T>::template node_with_inputs<matmul_node<T>> {
  std::size_t batch, M, N, K;
  bool shared_a, shared_b;  // a rank-2 side used by every batch
  matmul_side<T> a, b;

  // dA (+)= dC B^T and dB (+)= A^T dC, batch by batch; a shared side sums over the batches
  void add_da(T const* dC, T* out, bool accumulate) const {
    for (std::size_t q = 0; q < batch; ++q)
      gemm<T>(false, true, M, K, N, dC + q * M * N, N, b.values.data() + (shared_b ? 0 : q * K * N), N,
              out + (shared_a ? 0 : q * M * K), K, accumulate || (shared_a && q > 0));
  }
  void add_db(T const* dC, T* out, bool accumulate) const {
    for (std::size_t q = 0; q < batch; ++q)
      gemm<T>(true, false, K, N, M, a.values.data() + (shared_a ? 0 : q * M * K), K, dC + q * M * N, N,
              out + (shared_b ? 0 : q * K * N), N, accumulate || (shared_b && q > 0));
  }
  void backward(T* adj) const override {
    T const* dC = adj + this->first;
    a.add_adjoints(adj, [&](T* out, bool acc) { add_da(dC, out, acc); });
    b.add_adjoints(adj, [&](T* out, bool acc) { add_db(dC, out, acc); });
  }
  template <class F>
  bool for_inputs(F&& f) const {
    return a.for_inputs(f) || b.for_inputs(f);
  }
  /// dA = dC B^T and dB = A^T dC read the other side's values.
  bool nonfinite() const override {
    return any_nonfinite(a.values.data(), a.values.size()) || any_nonfinite(b.values.data(), b.values.size());
  }
  /// The operands' values (a shared constant counted too) and scattered indices.
  std::size_t bytes() const noexcept override { return a.bytes() + b.bytes(); }
};

template <class S, class XA, class XB>
tensor<S> matmul_batched(tensor<XA> const& A, tensor<XB> const& B, std::size_t batch, bool shared_a, bool shared_b,
                         std::size_t M, std::size_t N, std::size_t K, shape const& out_shape) {
  if constexpr (is_reverse_v<S>) {
    using T = value_type_t<S>;
    auto& tp = tape<T>::current();
    auto side_a = product_side<S>(A);
    auto side_b = product_side<S>(B);
    // the product's values are its outputs' values: kept beside the block, in one allocation
    auto made = make_var_values<S>(batch * M * N, 0, tp.epoch());
    T* const c = made.second;
    // read through const: the non-const data() of a shared constant operand would copy it
    T const* const a = std::as_const(side_a.values).data();
    T const* const b = std::as_const(side_b.values).data();
    for (std::size_t q = 0; q < batch; ++q)
      gemm<T>(false, false, M, N, K, a + (shared_a ? 0 : q * M * K), K, b + (shared_b ? 0 : q * K * N), N,
              c + q * M * N, N, false);
    if (!(side_a.active || side_b.active) || out_shape.size() == 0 || !grad_enabled())
      return tensor<S>::generate(out_shape, [&](std::size_t i) { return S::constant(c[i]); });
    auto nd = tp.template make_node<matmul_node<T>>();
    nd->batch = batch, nd->M = M, nd->N = N, nd->K = K, nd->shared_a = shared_a, nd->shared_b = shared_b;
    nd->a = std::move(side_a);
    nd->b = std::move(side_b);
    made.first->first = tp.record_node(std::move(nd), out_shape.size(), "matmul");
    return tensor_access::from_block<S>(out_shape, std::move(made.first));
  } else {
    tensor<S> const a = as_elements<S>(A), b = as_elements<S>(B);
    tensor<S> C(out_shape);
    for (std::size_t q = 0; q < batch; ++q)
      gemm<S>(false, false, M, N, K, a.data() + (shared_a ? 0 : q * M * K), K, b.data() + (shared_b ? 0 : q * K * N), N,
              C.data() + q * M * N, N, false);
    return C;
  }
}

}  // namespace detail

/// The matrix product (numpy's matmul rules for ranks 1 to 3).
/// `where` (the caller's line) is for anomaly mode (reverse/anomaly.hpp).
template <tensor_operand X, tensor_operand Y>
auto matmul(X const& x, Y const& y, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const xa = eval(x);
  auto const yb = eval(y);
  using SA = typename decltype(xa)::value_type;
  using SB = typename decltype(yb)::value_type;
  using S = std::conditional_t<(level_v<SA> >= level_v<SB>), SA, SB>;
  static_assert(std::is_same_v<S, SA> || level_v<SA> < level_v<S>,
                "adx: matmul of two different AD element types at the same nesting level");
  auto const& A = xa;
  auto const& B = yb;
  std::size_t const ra = A.rank(), rb = B.rank();
  if (ra < 1 || rb < 1 || ra > 3 || rb > 3)
    detail::throw_shape_error("matmul", "needs tensors of rank 1, 2 or 3", A.shape(), B.shape());
  // promote rank-1 sides: [k] -> [1, k] on the left, [k] -> [k, 1] on the right
  auto const a2 = ra == 1 ? A.reshape(shape{1, A.size()}) : A;
  auto const b2 = rb == 1 ? B.reshape(shape{B.size(), 1}) : B;
  std::size_t const ba = a2.rank() == 3 ? a2.shape()[0] : 1, bb = b2.rank() == 3 ? b2.shape()[0] : 1;
  std::size_t const M = a2.shape()[a2.rank() - 2], K = a2.shape()[a2.rank() - 1];
  std::size_t const K2 = b2.shape()[b2.rank() - 2], N = b2.shape()[b2.rank() - 1];
  if (K != K2) detail::throw_shape_error("matmul", "inner dimensions differ", A.shape(), B.shape());
  if (a2.rank() == 3 && b2.rank() == 3 && ba != bb)
    detail::throw_shape_error("matmul", "batch sizes differ", A.shape(), B.shape());
  std::size_t const batch = std::max(ba, bb);
  shape out;
  if (ra == 3 || rb == 3) out.push_back(batch);
  if (ra != 1) out.push_back(M);
  if (rb != 1) out.push_back(N);
  (void)detail::element_count("matmul", out);  // [n, 1] by [1, m] can name more elements than exist
  return detail::matmul_batched<S>(a2, b2, batch, a2.rank() != 3 && batch > 1, b2.rank() != 3 && batch > 1, M, N, K,
                                   out);
}

}  // namespace adx
