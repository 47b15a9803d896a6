// SPDX-License-Identifier: MIT
// adx: reductions over all elements or one axis (sum, mean, prod, max, min, logsumexp, norm)
// and what is built from them (softmax, log_softmax, dot, outer).
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

namespace adx {
namespace detail {

/// A line of a reduction as a tensor of its own (for a value taken one level down).
template <class T>
tensor<T> line_tensor(std::span<T const> x) {
  return tensor<T>::generate(shape{x.size()}, [&](std::size_t j) { return x[j]; });
}

/// The sum of x in eight_sums' order (tensor/lanes.hpp).
template <class T>
T sum_values(std::span<T const> x) {
  eight_sums<T> s;
  for (std::size_t i = 0; i < x.size(); ++i) s.add(i, x[i]);
  return s.total();
}

struct sum_reduction {
  static constexpr char const* name = "sum";
  static constexpr bool keeps_values = false;  // partials 1: a second sweep needs nothing of the forward pass
  template <class T>
  static T value(std::span<T const> x) {
    return sum_values(x);
  }
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(1);
  }
};

struct mean_reduction {
  static constexpr char const* name = "mean";
  static constexpr bool keeps_values = false;  // partials 1/n
  template <class T>
  static T value(std::span<T const> x) {
    return to_value<T>(sum_values(x) / static_cast<double>(x.size()));  // empty: 0/0 = NaN, as torch
  }
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(1.0 / static_cast<double>(x.size()));
  }
};

struct prod_reduction {
  static constexpr char const* name = "prod";
  // Products start from the first factor, not from a constant 1: over AD numbers, 1 * x has the
  // derivative 0 * x + 1 * x', which is NaN where x is infinite.
  template <class T>
  static T value(std::span<T const> x) {
    if (x.empty()) return constant<T>(1);
    T r = x[0];
    for (std::size_t j = 1; j < x.size(); ++j) r = r * x[j];
    return r;
  }
  /// p_j = product of the others (prefix times suffix): exact at zeros.
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    std::size_t const n = x.size();
    if (n == 0) return;
    p[0] = constant<T>(1);  // prefixes first: p_j = x_0 ... x_{j-1}
    if (n > 1) p[1] = x[0];
    for (std::size_t j = 2; j < n; ++j) p[j] = p[j - 1] * x[j - 1];
    if (n == 1) return;
    T acc = x[n - 1];  // then each times its suffix x_{j+1} ... x_{n-1} (p_0's prefix is empty)
    for (std::size_t j = n - 1; j-- > 1;) {
      p[j] = p[j] * acc;
      acc = acc * x[j];
    }
    p[0] = acc;
  }
};

/// max(t, axis) / min(t, axis), torch.max(dim): the whole gradient goes to the element whose
/// value is returned, the first of tied extremes (or the first NaN), as torch sends it to the
/// index it returns.
template <bool Max>
struct first_extreme_reduction {
  static constexpr char const* name = Max ? "max" : "min";
  /// op: the function called, for the message.
  template <class T>
  static std::size_t position(std::span<T const> x, char const* op = name) {
    if (x.empty()) throw shape_error(std::string("adx: ") + op + ": reduction over an empty tensor or axis");
    std::size_t best = 0;
    if (std::isnan(primal_of(x[0]))) return 0;
    for (std::size_t j = 1; j < x.size(); ++j) {
      auto const a = primal_of(x[j]);
      if (std::isnan(a)) return j;
      if (Max ? a > primal_of(x[best]) : a < primal_of(x[best])) best = j;
    }
    return best;
  }
  template <class T>
  static T value(std::span<T const> x) {
    return x[position(x)];
  }
  template <class T>
  static void partials(std::span<T const> x, T const&, T* p) {
    std::size_t const at = position(x);
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(j == at ? 1.0 : 0.0);
  }
};

/// amax / amin, max(t) / min(t): the value of first_extreme_reduction (NaN propagates), but the
/// gradient is shared evenly between the tied extremes (torch's max() and amax/amin).
/// Over AD numbers (a nested mode), tied extremes make the value the same reduction of the line
/// one level down, so that the value's own derivatives share the ties as the partials do (see
/// max_rule in rules/piecewise.hpp). Amax: named amax / amin (the messages name the function
/// called), otherwise max / min.
template <bool Max, bool Amax = true>
struct extreme_reduction : first_extreme_reduction<Max> {
  static constexpr char const* name = Amax ? (Max ? "amax" : "amin") : (Max ? "max" : "min");
  template <class T>
  static std::size_t ties(std::span<T const> x, innermost_t<T> m) {
    std::size_t t = 0;
    for (auto const& e : x) t += primal_of(e) == m;
    return t;
  }
  template <class T>
  static T value(std::span<T const> x) {
    T const& v = x[first_extreme_reduction<Max>::position(x, name)];
    if constexpr (ad_scalar<T>) {
      // NaN: every partial is 0, so the value is a NaN without derivatives (not the NaN element)
      if (std::isnan(primal_of(v))) return constant<T>(primal_of(v));
      if (ties(x, primal_of(v)) > 1) return Max ? amax(line_tensor(x)) : amin(line_tensor(x));
    }
    return v;
  }
  template <class T>
  static void partials(std::span<T const> x, T const& v, T* p) {
    auto const m = primal_of(v);
    std::size_t const t = ties(x, m);  // 0 when the value is NaN: every partial is 0
    double const share = t ? 1.0 / static_cast<double>(t) : 0.0;
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = constant<T>(primal_of(x[j]) == m ? share : 0.0);
  }
};

struct logsumexp_reduction {
  static constexpr char const* name = "logsumexp";
  /// The largest finite-or-infinite primal (NaN elements are skipped; 0 if it is not finite).
  /// Four running maxima: one chain would wait on each comparison (a maximum is exact, so the
  /// order cannot change the result; std::max keeps the first of equal values, and -0 or +0 as
  /// the shift gives the same exp(x - m) and log(s) + m).
  template <class T>
  static double shift(std::span<T const> x) {
    constexpr double lowest = -std::numeric_limits<double>::infinity();
    double m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
    std::size_t j = 0;
    for (; j + 4 <= x.size(); j += 4) {
      m0 = std::max(m0, static_cast<double>(primal_of(x[j])));
      m1 = std::max(m1, static_cast<double>(primal_of(x[j + 1])));
      m2 = std::max(m2, static_cast<double>(primal_of(x[j + 2])));
      m3 = std::max(m3, static_cast<double>(primal_of(x[j + 3])));
    }
    for (; j < x.size(); ++j) m0 = std::max(m0, static_cast<double>(primal_of(x[j])));
    double const m = std::max(std::max(m0, m1), std::max(m2, m3));
    return std::isfinite(m) ? m : 0.0;
  }
  template <class T>
  static T value(std::span<T const> x) {
    using std::exp;
    using std::log;
    double const m = shift(x);
    T s = constant<T>(0);
    for (auto const& v : x) s = s + exp(v - m);
    return to_value<T>(log(s) + m);
  }
  template <class T>
  static void partials(std::span<T const> x, T const& v, T* p) {  // softmax
    using std::exp;
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = to_value<T>(exp(x[j] - v));
  }
  /// The value and the softmax partials from one exp per element.
  template <class T>
  static T value_and_partials(std::span<T const> x, T* p) {
    using std::exp;
    using std::log;
    double const m = shift(x);
    T s = constant<T>(0);
    for (std::size_t j = 0; j < x.size(); ++j) {
      p[j] = to_value<T>(exp(x[j] - m));
      s = s + p[j];
    }
    T const inv = to_value<T>(1.0 / s);
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = to_value<T>(p[j] * inv);
    return to_value<T>(log(s) + m);
  }
};

struct norm_reduction {
  static constexpr char const* name = "norm";
  template <class T>
  static T value(std::span<T const> x) {
    using std::sqrt;
    if constexpr (ad_scalar<T>) {
      // Over AD numbers the squares are of x scaled by a power of two near its largest magnitude,
      // and the root scaled back: the same value wherever the plain sum of squares neither
      // underflows nor overflows (powers of two scale exactly), and the inner levels'
      // derivatives (1 / (2 sqrt s), then the higher powers of 1 / ||x||) stay finite for tiny x:
      // at ||x|| = 1e-160 the plain sum is subnormal and reverse-over-reverse gave -inf.
      using P = std::remove_cvref_t<decltype(primal_of(x[0]))>;
      // where the plain sum of squares underflows to 0 (or is 0) or overflows, the norm is what
      // it is over plain numbers at every level (0 with the zero subgradient; inf with partials
      // x / inf): the norm one level down (at 0, sqrt'(0) would also make the inner level's
      // derivatives NaN)
      P plain = 0, big = 0;
      for (auto const& v : x) {
        P const p = primal_of(v);
        plain += p * p;
        big = std::max(big, std::abs(p));
      }
      if (plain == 0 || std::isinf(plain)) return norm(line_tensor(x));
      int e = 0;
      if (std::isfinite(big) && big != 0) (void)std::frexp(big, &e);
      // 2^-e and 2^e finite in P, with room below for the smallest subnormals' squares (double:
      // |e| <= 1000, float: 104)
      int const limit = std::numeric_limits<P>::max_exponent - 24;
      e = std::clamp(e, -limit, limit);
      P const down = std::ldexp(P(1), -e), up = std::ldexp(P(1), e);
      T s = constant<T>(0);
      for (auto const& v : x) {
        T const y = to_value<T>(v * down);
        s = s + y * y;
      }
      return to_value<T>(sqrt(s) * up);
    } else {
      T s = constant<T>(0);
      for (auto const& v : x) s = s + v * v;
      return to_value<T>(sqrt(s));
    }
  }
  /// x / ||x||, and zero at ||x|| = 0 (torch's subgradient).
  template <class T>
  static void partials(std::span<T const> x, T const& v, T* p) {
    bool const zero = primal_of(v) == 0;
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = zero ? constant<T>(0) : to_value<T>(x[j] / v);
  }
};

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

/// The tape node of log_softmax over var<T> elements, one for all the lines: out_j = x_j -
/// logsumexp(line). It keeps each input's index and softmax value; the backward pass is, per
/// line, dx_j += a_j - softmax_j * sum_k a_k (no separate logsumexp and subtraction nodes).
template <class T>
struct log_softmax_node final : tape<T>::template node_with_inputs<log_softmax_node<T>> {
  std::size_t lines, len, inner;  ///< line l: elements (l / inner) * len * inner + l % inner + j * inner
  stored_operands<T> stored;      ///< per element, in the tensor's order: input index, softmax
  /// A block input's first variable (no indices are stored: element k is input_first + k); 0
  /// for elements of their own.
  index_type input_first;
  log_softmax_node(tape<T>& tp, std::size_t l, std::size_t n, std::size_t in, index_type block_first)
      : lines(l), len(n), inner(in), stored(tp, l * n, block_first == 0), input_first(block_first) {}
  void backward(T* adj) const override {
    T const* a = adj + this->first;
    for (std::size_t l = 0; l < lines; ++l) {
      std::size_t const o = (l / inner) * len * inner + l % inner;
      T g = constant<T>(0);
      for (std::size_t j = 0; j < len; ++j) g += a[o + j * inner];
      for (std::size_t j = 0; j < len; ++j) {
        std::size_t const k = o + j * inner;
        // index 0 (a constant): slot 0, never read
        adj[stored.index ? stored.index[k] : input_first + static_cast<index_type>(k)] += a[k] - stored.partial[k] * g;
      }
    }
  }
  template <class F>
  bool for_inputs(F&& f) const {
    if (stored.index) return stored.for_inputs(f);
    return f(input_first, stored.count);
  }
  bool nonfinite() const override { return stored.nonfinite(); }  // the softmax values
  std::size_t bytes() const noexcept override { return stored.bytes(); }
};

/// log_softmax of var<T> elements along an axis as one node; other cases (no active element,
/// no_grad, empty) as x - logsumexp(x), which records nothing or gives constants there.
template <class S>
tensor<S> log_softmax_reverse(tensor<S> const& t, long axis) {
  using T = value_type_t<S>;
  std::size_t const ax = normalize_axis("log_softmax", axis, t.shape());
  std::size_t const len = t.shape()[ax];
  std::size_t inner = 1;
  for (std::size_t d = ax + 1; d < t.rank(); ++d) inner *= t.shape()[d];
  std::size_t const n = t.size(), lines = len ? n / len : 0;
  auto& tp = tape<T>::current();
  var_reader<S> const in(t);
  if (!in.any_active(n, tp) || !grad_enabled()) return eval(t - logsumexp(t, axis, true));
  // the outputs are one block, kept as their values (detail::var_values)
  epoch_type const ep = tp.epoch();
  auto made = make_var_values<S>(n, 0, ep);
  T* const out = made.second;
  auto nd = tp.template make_node<log_softmax_node<T>>(tp, lines, len, inner, in.block.first);
  index_type* const ix = nd->stored.index;  // null for a block
  T* const soft = nd->stored.partial;
  std::vector<T> x(len), p(len);
  for (std::size_t l = 0; l < lines; ++l) {
    std::size_t const o = (l / inner) * len * inner + l % inner;
    for (std::size_t j = 0; j < len; ++j) x[j] = in.value(o + j * inner);
    T const lse = value_and_partials<logsumexp_reduction>(std::span<T const>(x), p.data());
    for (std::size_t j = 0; j < len; ++j) {
      std::size_t const k = o + j * inner;
      if (ix) ix[k] = in.index(k);
      soft[k] = p[j];
      out[k] = to_value<T>(x[j] - lse);
    }
  }
  made.first->first = tp.record_node(std::move(nd), n, "log_softmax");
  return tensor_access::from_block<S>(t.shape(), std::move(made.first));
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

/// softmax along an axis (default the last): exp(x - max) / sum(exp(x - max)).
template <tensor_operand X>
auto softmax(X const& x, long axis = -1, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const t = eval(x);
  std::size_t const ax = detail::normalize_axis("softmax", axis, t.shape());  // a bad axis is named as softmax's
  if (t.shape()[ax] == 0) return std::remove_const_t<decltype(t)>(t);         // empty: as torch and log_softmax
  auto const m = stop_gradient(max(t, axis, true));  // any extreme: max(t, axis) takes the first
  auto const e = eval(exp(t - m));
  return eval(e / sum(e, axis, true));
}
/// log_softmax along an axis (default the last): x - logsumexp(x); for var elements one tape
/// node.
template <tensor_operand X>
auto log_softmax(X const& x, long axis = -1, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const t = eval(x);
  detail::normalize_axis("log_softmax", axis, t.shape());  // a bad axis is named as log_softmax's
  if constexpr (is_reverse_v<typename decltype(t)::value_type>)
    return detail::log_softmax_reverse(t, axis);
  else
    return eval(t - logsumexp(t, axis, true));
}

/// The inner product of two rank-1 tensors of equal length.
template <tensor_operand X, tensor_operand Y>
auto dot(X const& x, Y const& y, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const a = eval(x);
  auto const b = eval(y);
  if (a.rank() != 1 || b.rank() != 1 || a.size() != b.size())
    detail::throw_shape_error("dot", "needs two rank-1 tensors of the same length", a.shape(), b.shape());
  return sum(a * b);
}
/// The outer product of two rank-1 tensors: [n] x [m] -> [n, m].
template <tensor_operand X, tensor_operand Y>
auto outer(X const& x, Y const& y, source_location where = source_location::current()) {
  detail::anomaly_site_guard site(where);
  auto const a = eval(x);
  auto const b = eval(y);
  if (a.rank() != 1 || b.rank() != 1)
    detail::throw_shape_error("outer", "needs two rank-1 tensors", a.shape(), b.shape());
  return eval(a.reshape({static_cast<long>(a.size()), 1L}) * b.reshape({1L, static_cast<long>(b.size())}));
}

}  // namespace adx
