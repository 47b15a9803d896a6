// SPDX-License-Identifier: MIT
// adx: reductions over all elements or one axis (sum, mean, prod, max, min, logsumexp, norm)
// and what is built from them (softmax, log_softmax, dot, outer: tensor/softmax.hpp).
//
// Each reduction is one rule here: its value and its partials on a line of element values,
// written once over the value type T. The same rule serves every element scalar S:
//   plain numbers  the value only;
//   dual<T>        the value and the tangent sum_j partial_j * tangent_j;
//   var<T>         the values and ONE tape node for all the lines, holding each element's
//                  index and partial (a streaming loop in the backward sweep).
// Non-differentiable points follow SPEC §5 / torch: max and min share the gradient evenly
// between tied extremes, prod's partials are exact products of the other elements (no
// division, so zeros are fine), the norm's gradient at zero is zero.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/core/source_location.hpp"
#include "adx/reverse/anomaly.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/reductions.hpp"

namespace adx {
namespace detail {

/// The tape node of a reduction over var<T> elements: one output per line. The forward pass
/// stores each line's partials (from the rule, with its value), line by line, so that the
/// backward pass is one streaming multiply-add per line. The operands' indices are stored beside
/// them, unless the input is one block of variables (`line_start` set): element j of line l is
/// then the variable input_first + line_start[l] + j * stride, and a line costs one index.
template <class T>
struct reduction_node final : tape<T>::template node_with_inputs<reduction_node<T>> {
  std::size_t lines, len, stride;
  stored_operands<T> stored;  ///< element j of line l at [l * len + j]; no indices for a block
  index_type input_first;     ///< a block input's first variable; 0 for elements of their own
  index_type* line_start;     ///< a block input: each line's first element in it; otherwise null
  bool keeps = true;          ///< keeps_values: false for sum and mean (their partials are fixed numbers)
  reduction_node(tape<T>& tp, std::size_t l, std::size_t n, std::size_t s, index_type block_first)
      : lines(l),
        len(n),
        stride(s),
        stored(tp, l * n, block_first == 0),
        input_first(block_first),
        line_start(block_first ? tp.template node_array<index_type>(l) : nullptr) {}
  void backward(T* adj) const override {
    for (std::size_t l = 0; l < lines; ++l) {
      T const a = adj[this->first + l];
      T const* p = stored.partial + l * len;
      if (line_start) {
        T* x = adj + input_first + line_start[l];
        for (std::size_t j = 0; j < len; ++j) x[j * stride] += p[j] * a;
      } else {
        index_type const* ix = stored.index + l * len;
        for (std::size_t j = 0; j < len; ++j) adj[ix[j]] += p[j] * a;  // index 0 (a constant): slot 0, never read
      }
    }
  }
  template <class F>
  bool for_inputs(F&& f) const {
    if (!line_start) return stored.for_inputs(f);
    for (std::size_t l = 0; l < lines; ++l)
      for (std::size_t j = 0; j < len; ++j)
        if (f(input_first + line_start[l] + static_cast<index_type>(j * stride), 1)) return true;
    return false;
  }
  bool keeps_values(std::uint8_t const*) const override { return keeps; }
  bool nonfinite() const override { return stored.nonfinite(); }
  std::size_t bytes() const noexcept override { return stored.bytes() + (line_start ? lines * sizeof(index_type) : 0); }
};

/// The rule's value on a line, and its partials into p.
template <class Red, class T>
T value_and_partials(std::span<T const> x, T* p) {
  if constexpr (requires { Red::value_and_partials(x, p); }) {
    return Red::value_and_partials(x, p);
  } else {
    T const v = Red::value(x);
    Red::partials(x, v, p);
    return v;
  }
}

/// Reads a tensor of vars' values and indices: a block kept as values (detail::var_values)
/// as it is kept, without making its elements; otherwise from the elements.
template <class S>
struct var_reader {
  using T = value_type_t<S>;
  T const* kept;
  var_block block;
  S const* e;
  explicit var_reader(tensor<S> const& t)
      : kept(tensor_access::kept_values(t)),
        block(kept ? tensor_access::block(t) : var_block{}),
        e(kept ? nullptr : t.data()) {}
  T value(std::size_t k) const { return kept ? kept[k] : e[k].val(); }
  index_type index(std::size_t k) const { return kept ? block.first + static_cast<index_type>(k) : e[k].index(); }
  /// Whether one of the n elements is active; throws stale_variable_error for one of a
  /// recording that ended.
  bool any_active(std::size_t n, tape<T>& tp) const {
    if (n == 0) return false;
    if (kept) {
      tp.check_live(block.epoch);
      return true;  // a block's variables are active
    }
    bool active = false;
    epoch_type live = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (e[i].index() != 0) {
        active = true;
        tp.check_live(e[i].epoch(), live);
      }
    return active;
  }
};

/// Reduces `lines` lines of t with rule Red: line l holds the elements at offset(l) + j * stride,
/// j < len. Returns one element per line, in a tensor of shape out (whose size is `lines`). For
/// var elements all the lines are ONE tape node.
template <class Red, class S, class Offset>
tensor<S> reduce_lines(tensor<S> const& t, std::size_t lines, std::size_t len, std::size_t stride, Offset offset,
                       shape const& out) {
  if constexpr (!ad_scalar<S>) {
    S const* e = t.data();
    std::vector<S> x(stride == 1 ? 0 : len);  // consecutive elements are read in place
    return tensor<S>::generate(out, [&](std::size_t l) {
      if (stride == 1) return Red::value(std::span<S const>(e + offset(l), len));
      for (std::size_t j = 0; j < len; ++j) x[j] = e[offset(l) + j * stride];
      return Red::value(std::span<S const>(x));
    });
  } else if constexpr (!ad_traits<S>::is_reverse) {
    S const* e = t.data();
    using T = value_type_t<S>;
    std::vector<T> x(len), p(len);
    return tensor<S>::generate(out, [&](std::size_t l) {
      S const* b = e + offset(l);
      for (std::size_t j = 0; j < len; ++j) x[j] = b[j * stride].val();
      T const v = value_and_partials<Red>(std::span<T const>(x), p.data());
      T tan = constant<T>(0);
      for (std::size_t j = 0; j < len; ++j) tan = tan + p[j] * b[j * stride].tangent();
      return S(v, tan);
    });
  } else {
    using T = value_type_t<S>;
    auto& tp = tape<T>::current();
    var_reader<S> const in(t);
    bool const active = in.any_active(t.size(), tp);
    // a line of a block kept as values is read in place when its elements are consecutive;
    // otherwise it is gathered into x
    bool const in_place = in.kept && stride == 1;
    std::vector<T> x(in_place ? 0 : len);
    auto const line = [&](std::size_t o) {
      if (in_place) return std::span<T const>(in.kept + o, len);
      for (std::size_t j = 0; j < len; ++j) x[j] = in.value(o + j * stride);
      return std::span<T const>(x);
    };
    if (!active || lines == 0 || !grad_enabled())
      return tensor<S>::generate(out, [&](std::size_t l) { return S::constant(Red::value(line(offset(l)))); });
    // the outputs are one block, kept as their values (detail::var_values)
    epoch_type const ep = tp.epoch();
    auto made = make_var_values<S>(lines, 0, ep);
    T* const values = made.second;
    auto nd = tp.template make_node<reduction_node<T>>(tp, lines, len, stride, in.block.first);
    if constexpr (requires { Red::keeps_values; }) nd->keeps = Red::keeps_values;
    for (std::size_t l = 0; l < lines; ++l) {
      std::size_t const o = offset(l);
      std::span<T const> const xl = line(o);
      if (nd->line_start) {
        nd->line_start[l] = static_cast<index_type>(o);
      } else {
        index_type* ix = nd->stored.index + l * len;
        for (std::size_t j = 0; j < len; ++j) ix[j] = in.index(o + j * stride);
      }
      values[l] = value_and_partials<Red>(xl, nd->stored.partial + l * len);
    }
    made.first->first = tp.record_node(std::move(nd), lines, Red::name);
    return tensor_access::from_block<S>(out, std::move(made.first));
  }
}

/// "sum(mul(x, c))": a fused reduction's operation, for anomaly reports.
template <class Red, class E>
char const* describe_reduction() {
  static std::string const text = std::string(Red::name) + "(" + describe_expression<E>() + ")";
  return text.c_str();
}

/// sum or mean of an elementwise expression, without making the elementwise result: one pass
/// over the elements. For var elements it is ONE tape node with one output (a reduced
/// elementwise_node): each element's operand indices and partials, and the reduction's partial
/// (1 or 1/n) applied to the output's adjoint. Values and derivatives are those of eval then
/// reduce, in the same order of operations.
template <class Red, class E>
auto reduce_expression(E expr) {
  using R = typename E::element_type;
  constexpr bool is_mean = std::is_same_v<Red, mean_reduction>;
  adx::shape const sh = expr.shape();
  std::size_t const n = sh.size();
  read_plan const plan = read_plan_for(expr, sh);
  expr.bind(sh, plan);
  auto const finish = [n](auto const& s) {
    using S = std::remove_cvref_t<decltype(s)>;
    if constexpr (is_mean) {
      return to_value<S>(s / static_cast<double>(n));
    } else {
      (void)n;  // used by mean only
      return s;
    }
  };
  if constexpr (is_reverse_v<R>) {
    using T = value_type_t<R>;
    auto& tp = tape<T>::current();
    eight_sums<T> s;
    if (!grad_enabled()) {
      // on lanes where the recorded loop would run on them: the same values
      if (!sum_on_lanes<R>(expr, lane_period(plan, n), n, s))
        visit_elements(expr, sh, plan, [&](std::size_t i, auto const& e) { s.add(i, e.val()); });
      return R::constant(finish(s.total()));
    }
    using element_expr = std::remove_cvref_t<decltype(expr.at_flat(0))>;
    constexpr std::size_t K = element_expr::n_active;
    // Over plain numbers, the partials of a scalar operand are summed in the forward pass
    // (every element has the same adjoint); over AD numbers that would record a sum per
    // element on the inner tape, so they are kept per element like the others.
    constexpr auto summed_positions = [] {
      if constexpr (std::is_arithmetic_v<T>) {
        constexpr auto p = scalar_positions<R, E>();
        static_assert(p.size() == K, "adx: internal: the tensor expression's active leaves do not match its push");
        return p;
      } else {
        return std::array<bool, K>{};
      }
    }();
    using node_type = elementwise_node<T>;
    using writer = typename node_type::template writer<K, summed_positions>;
    // operands whose indices are known before the loop (blocks read in order, single
    // variables): the node keeps their partials only (see evaluate_recorded)
    epoch_type const ep = tp.epoch();
    std::array<typename node_type::operand_kind, K> kinds{};
    std::array<index_type, K> firsts{};
    std::array<std::size_t, K> periods{};
    index_type block_any = 0;
    std::uint64_t block_stray = 0;
    bool const blocks = block_operands<R>(expr, sh, kinds, firsts, periods, block_any, block_stray, ep);
    auto const cp = tp.checkpoint();
    auto nd = tp.template make_node<node_type>(tp, n, K - writer::n_summed, writer::n_summed, !blocks);
    if (blocks)
      for (std::size_t j = 0; j < K; ++j)
        if (!summed_positions[j]) {
          nd->kind[writer::slot[j]] = kinds[j];
          nd->operand_first[writer::slot[j]] = firsts[j];
          nd->operand_period[writer::slot[j]] = periods[j];
        }
    nd->reduced = true;
    nd->scale = is_mean ? 1.0 / static_cast<double>(n) : 1.0;
    if constexpr (writer::n_summed > 0) {  // which summed operands' partials are fixed +-1 (unit_leaves)
      constexpr auto unit = scalar_positions<R, E, unit_leaves>();
      static_assert(unit.size() == K, "adx: internal: unit_leaves does not match the push order");
      std::size_t k = 0;
      for (std::size_t j = 0; j < K; ++j)
        if (summed_positions[j]) {
          if (k < 64 && unit[j]) nd->summed_keeps &= ~(std::uint64_t{1} << k);
          ++k;
        }
    }
    index_type* const index = nd->stored.index;
    T* const partial = nd->stored.partial;
    index_type any_index = blocks ? block_any : 0;  // of all operands, summed or not (see the writer)
    std::uint64_t stray_epoch = blocks ? block_stray : 0;
    std::array<T, writer::n_summed> sums{};
    auto& node = *nd;  // the node does not move once the tape owns it
    index_type const first = tp.record_node(std::move(nd), 1, describe_reduction<Red, E>());
    if constexpr (writer::n_summed > 0) {  // the summed operands' indices, once
      std::size_t k = 0;
      auto note = [&](R const& x) {
        node.summed_index[k++] = x.index();
        any_index |= x.index();
        stray_epoch |= stray_epoch_bits(x.epoch(), ep);
      };
      for_each_scalar_operand<R>(expr, note);
    }
    try {
      if (!(blocks && reduce_on_lanes<R, writer>(expr, lane_period(plan, n), partial, n, sums, s)))
        visit_elements(expr, sh, plan, [&](std::size_t i, auto const& e) ADX_INLINE_LAMBDA {
          writer w{index, partial, n, i, ep, sums};
          e.push(w);
          any_index |= w.any_index;
          stray_epoch |= w.stray_epoch;
          sums = w.sum;
          s.add(i, e.val());
        });
      if (stray_epoch != 0) check_operands_live<R>(expr, tp);
    } catch (...) {
      tp.rollback(cp);
      throw;
    }
    if (any_index == 0) {  // constants only: no node, a constant result
      tp.rollback(cp);
      return R::constant(finish(s.total()));
    }
    // element by element, not std::copy: a memmove would take the sums' address and keep them
    // in memory through the loop
    [&]<std::size_t... k>(std::index_sequence<k...>) { ((node.summed_partial[k] = std::get<k>(sums)), ...); }
    (std::make_index_sequence<writer::n_summed>{});
    node.classify();
    return R::recorded(finish(s.total()), first, ep);
  } else {
    eight_sums<R> s;
    if (!sum_on_lanes<R>(expr, lane_period(plan, n), n, s))
      visit_elements(expr, sh, plan, [&](std::size_t i, auto const& e) { s.add(i, R(e)); });
    return finish(s.total());
  }
}

/// x's reduction to one element. A sum or mean of an expression evaluates it in place: an
/// expression passed as a temporary is moved there, not copied.
template <class Red, class X>
auto reduce_all(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (tensor_node<D> && (std::is_same_v<Red, sum_reduction> || std::is_same_v<Red, mean_reduction>)) {
    if (x.shape().size() > 0) return reduce_expression<Red>(D(std::forward<X>(x)));
  }
  auto const t = eval(x);
  return reduce_lines<Red>(
             t, 1, t.size(), 1, [](std::size_t) { return std::size_t{0}; }, shape{})
      .item();
}

template <class Red, class X>
auto reduce_axis(X const& x, long axis, bool keepdims) {
  auto const t = eval(x);
  std::size_t const ax = normalize_axis(Red::name, axis, t.shape());
  shape sh = t.shape();
  std::size_t const len = sh[ax];
  std::size_t inner = 1, outer = 1;
  for (std::size_t d = ax + 1; d < sh.rank(); ++d) inner *= sh[d];
  for (std::size_t d = 0; d < ax; ++d) outer *= sh[d];
  if (keepdims)
    sh[ax] = 1;
  else
    sh.erase(ax);
  // line l = (a, i): the elements a * len * inner + i + j * inner
  return reduce_lines<Red>(
      t, outer * inner, len, inner, [=](std::size_t l) { return (l / inner) * len * inner + l % inner; }, sh);
}

}  // namespace detail

// `where` (the caller's line) is for anomaly mode (reverse/anomaly.hpp).
#define ADX_TENSOR_REDUCTION(fn, red)                                                                         \
  template <tensor_operand X>                                                                                 \
  auto fn(X&& x, source_location where = source_location::current()) {                                        \
    detail::anomaly_site_guard site(where);                                                                   \
    return detail::reduce_all<detail::red>(std::forward<X>(x));                                               \
  }                                                                                                           \
  template <tensor_operand X>                                                                                 \
  auto fn(X const& x, long axis, bool keepdims = false, source_location where = source_location::current()) { \
    detail::anomaly_site_guard site(where);                                                                   \
    return detail::reduce_axis<detail::red>(x, axis, keepdims);                                               \
  }
/// sum(t): the sum of all elements (an S); sum(t, axis, keepdims): a tensor. Likewise below.
ADX_TENSOR_REDUCTION(sum, sum_reduction)
ADX_TENSOR_REDUCTION(mean, mean_reduction)
ADX_TENSOR_REDUCTION(prod, prod_reduction)
ADX_TENSOR_REDUCTION(amax, extreme_reduction<true>)
ADX_TENSOR_REDUCTION(amin, extreme_reduction<false>)
ADX_TENSOR_REDUCTION(logsumexp, logsumexp_reduction)
ADX_TENSOR_REDUCTION(norm, norm_reduction)
#undef ADX_TENSOR_REDUCTION

/// max(t) / min(t): the largest / smallest element (reductions; ties share the gradient, as
/// torch's max() and amax). max(t, axis) / min(t, axis): along an axis, torch.max(t, dim)'s
/// values, the gradient going to the first extreme of each line (see first_extreme_reduction);
/// amax / amin along an axis share it between ties instead.
template <tensor_operand X>
auto max(X const& x, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  return detail::reduce_all<detail::extreme_reduction<true, false>>(x);
}
template <tensor_operand X>
auto max(X const& x, long axis, bool keepdims = false, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  return detail::reduce_axis<detail::first_extreme_reduction<true>>(x, axis, keepdims);
}
template <tensor_operand X>
auto min(X const& x, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  return detail::reduce_all<detail::extreme_reduction<false, false>>(x);
}
template <tensor_operand X>
auto min(X const& x, long axis, bool keepdims = false, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  return detail::reduce_axis<detail::first_extreme_reduction<false>>(x, axis, keepdims);
}

/// A copy of t that no derivative flows through (every element at every level).
template <tensor_operand X>
auto stop_gradient(X const& x) {
  auto const t = eval(x);
  using S = typename decltype(t)::value_type;
  tensor<S> r(t.shape());
  S* o = r.data();
  for (std::size_t i = 0; i < t.size(); ++i) o[i] = adx::stop_gradient(t.data()[i]);
  return r;
}

}  // namespace adx

// softmax, log_softmax, dot and outer, built on the reductions.
#include "adx/tensor/softmax.hpp"
