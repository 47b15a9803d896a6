// adx: matrix products. matmul follows numpy: [m,k]x[k,n], batched [b,m,k]x[b,k,n] (a rank-2
// side is shared by every batch), and rank-1 sides promoted and squeezed again.
//
// For tensor<var<T>> a product is ONE tape node: the values come from the gemm dispatch
// (BLAS for double/float), and the adjoint is two more gemm calls, dA += dC B^T and
// dB += A^T dC, run once when the sweep reaches the product's block of outputs.
#pragma once

#include <cstddef>
#include <memory>
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

/// The tape node of C = A B for var<T> elements (one batch of matrices or many).
template <class T>
struct matmul_node final : tape<T>::node {
  std::size_t batch, M, N, K;
  bool shared_a, shared_b;         // a rank-2 side used by every batch
  std::vector<T> a, b;             // values
  std::vector<index_type> ia, ib;  // indices (0 for constants)
  bool active_a = false, active_b = false;
  index_type base_a = 0, base_b = 0;  // first index when a side is one contiguous block of variables

  void backward(T* adj) const override {
    T const* dC = adj + this->first;
    // a side stored as one block of adjoint slots takes its GEMM straight into them (beta = 1)
    if (base_a)
      for (std::size_t q = 0; q < batch; ++q)
        gemm<T>(false, true, M, K, N, dC + q * M * N, N, b.data() + (shared_b ? 0 : q * K * N), N,
                adj + base_a + (shared_a ? 0 : q * M * K), K, true);
    if (base_b)
      for (std::size_t q = 0; q < batch; ++q)
        gemm<T>(true, false, K, N, M, a.data() + (shared_a ? 0 : q * M * K), K, dC + q * M * N, N,
                adj + base_b + (shared_b ? 0 : q * K * N), N, true);
    std::vector<T> g;
    if (active_a && !base_a) {
      g.assign(a.size(), constant<T>(0));
      for (std::size_t q = 0; q < batch; ++q)  // dA = dC B^T
        gemm<T>(false, true, M, K, N, dC + q * M * N, N, b.data() + (shared_b ? 0 : q * K * N), N,
                g.data() + (shared_a ? 0 : q * M * K), K, shared_a ? q > 0 : false);
      for (std::size_t i = 0; i < g.size(); ++i)
        if (ia[i]) adj[ia[i]] += g[i];
    }
    if (active_b && !base_b) {
      g.assign(b.size(), constant<T>(0));
      for (std::size_t q = 0; q < batch; ++q)  // dB = A^T dC
        gemm<T>(true, false, K, N, M, a.data() + (shared_a ? 0 : q * M * K), K, dC + q * M * N, N,
                g.data() + (shared_b ? 0 : q * K * N), N, shared_b ? q > 0 : false);
      for (std::size_t i = 0; i < g.size(); ++i)
        if (ib[i]) adj[ib[i]] += g[i];
    }
  }
  void mark_inputs(std::uint8_t* reached) const override {
    for (index_type i : ia) reached[i] = 1;
    for (index_type i : ib) reached[i] = 1;
  }
};

template <class S>
tensor<S> matmul_batched(tensor<S> const& A, tensor<S> const& B, std::size_t batch, bool shared_a, bool shared_b,
                         std::size_t M, std::size_t N, std::size_t K, shape const& out_shape) {
  tensor<S> C(out_shape);
  if constexpr (is_reverse_v<S>) {
    using T = value_type_t<S>;
    auto& tp = tape<T>::current();
    auto nd = std::make_unique<matmul_node<T>>();
    nd->batch = batch, nd->M = M, nd->N = N, nd->K = K, nd->shared_a = shared_a, nd->shared_b = shared_b;
    auto take = [&](tensor<S> const& X, std::vector<T>& v, std::vector<index_type>& ix, bool& active) {
      v.resize(X.size());
      ix.resize(X.size());
      for (std::size_t i = 0; i < X.size(); ++i) {
        S const& e = X.data()[i];
        if (e.index() != 0 && e.epoch() != tp.epoch()) tp.check_live(e.epoch());
        v[i] = e.val();
        ix[i] = e.index();
        active |= e.index() != 0;
      }
    };
    take(A, nd->a, nd->ia, nd->active_a);
    take(B, nd->b, nd->ib, nd->active_b);
    auto block_base = [](std::vector<index_type> const& ix) -> index_type {
      if (ix.empty() || ix[0] == 0) return 0;
      for (std::size_t i = 1; i < ix.size(); ++i)
        if (ix[i] != ix[0] + i) return 0;
      return ix[0];
    };
    nd->base_a = block_base(nd->ia);
    nd->base_b = block_base(nd->ib);
    std::vector<T> c(batch * M * N);
    for (std::size_t q = 0; q < batch; ++q)
      gemm<T>(false, false, M, N, K, nd->a.data() + (shared_a ? 0 : q * M * K), K,
              nd->b.data() + (shared_b ? 0 : q * K * N), N, c.data() + q * M * N, N, false);
    S* o = C.data();
    if (!(nd->active_a || nd->active_b) || c.empty() || !grad_enabled()) {
      for (std::size_t i = 0; i < c.size(); ++i) o[i] = S::constant(c[i]);
      return C;
    }
    index_type const first = tp.record_node(std::move(nd), static_cast<index_type>(c.size()), "matmul");
    for (std::size_t i = 0; i < c.size(); ++i) o[i] = S::recorded(c[i], first + static_cast<index_type>(i), tp.epoch());
  } else {
    for (std::size_t q = 0; q < batch; ++q)
      gemm<S>(false, false, M, N, K, A.data() + (shared_a ? 0 : q * M * K), K, B.data() + (shared_b ? 0 : q * K * N), N,
              C.data() + q * M * N, N, false);
  }
  return C;
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
  tensor<S> A = detail::as_elements<S>(xa), B = detail::as_elements<S>(yb);
  std::size_t const ra = A.rank(), rb = B.rank();
  if (ra < 1 || rb < 1 || ra > 3 || rb > 3)
    detail::throw_shape_error("matmul", "needs tensors of rank 1, 2 or 3", A.shape(), B.shape());
  // promote rank-1 sides: [k] -> [1, k] on the left, [k] -> [k, 1] on the right
  tensor<S> a2 = ra == 1 ? A.reshape(shape{1, A.size()}) : A;
  tensor<S> b2 = rb == 1 ? B.reshape(shape{B.size(), 1}) : B;
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
  return detail::matmul_batched(a2, b2, batch, a2.rank() != 3 && batch > 1, b2.rank() != 3 && batch > 1, M, N, K, out);
}

}  // namespace adx
