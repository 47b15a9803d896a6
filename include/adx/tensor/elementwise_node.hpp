// SPDX-License-Identifier: MIT
// adx: the tape node of an elementwise expression over var elements (tensor/elementwise.hpp
// records it): per element and active operand, the partial the scalar rules compute and the
// operand's index unless the operand's tensor tells it; the backward pass is one streaming loop
// per operand, a broadcast operand's adjoint summed and added once.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include "adx/reverse/var.hpp"
#include "adx/tensor/expression.hpp"

namespace adx::detail {

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

}  // namespace adx::detail
