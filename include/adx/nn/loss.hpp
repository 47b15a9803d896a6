// SPDX-License-Identifier: MIT
// adx: loss functions, as torch.nn.functional has them: mse_loss, l1_loss, huber_loss,
// smooth_l1_loss, cross_entropy (integer labels or probabilities, class weights, ignore_index,
// label smoothing), nll_loss, binary_cross_entropy (with and without logits) and kl_div.
//
// Each is written with adx's tensor operations, so every element type, mode and nesting level
// differentiates it (second derivatives of a loss, gradient penalties, Hessian-vector products).
// The reduction is a template argument, because it decides the result's type: mean (the
// default) and sum give one element (an S), none gives a tensor of the pointwise losses:
//
//     var<double> l = nn::cross_entropy(logits, labels, {.label_smoothing = 0.1});
//     tensor<var<double>> each = nn::cross_entropy<nn::reduction::none>(logits, labels);
//
// Values follow torch 1.13's formulas, reductions included (a weighted mean divides by the sum
// of the weights of the labels counted, as nll_loss does). Where adx differs at an edge,
// docs/derivative_rules.md says so (binary_cross_entropy's gradient where log p is clamped).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "adx/core/error.hpp"
#include "adx/rules.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/indexing.hpp"
#include "adx/tensor/masks.hpp"
#include "adx/tensor/reduce.hpp"
#include "adx/tensor/softmax.hpp"

namespace adx {
namespace nn {

/// How a loss reduces its pointwise values (torch's reduction argument).
enum class reduction {
  none,       ///< the pointwise losses, a tensor
  mean,       ///< their mean (for class losses, weighted by the labels' class weights)
  sum,        ///< their sum
  batchmean,  ///< their sum over the batch size, the first extent (kl_div only)
};

/// The options of cross_entropy and nll_loss (torch's keywords).
struct class_loss_options {
  tensor<double> weight{};     ///< one weight per class ([C]); empty: every class 1
  long ignore_index = -100;    ///< a label that counts for nothing (and not in the mean)
  double label_smoothing = 0;  ///< cross_entropy: the mass spread over all classes, in [0, 1]
};

}  // namespace nn

namespace detail {
using nn::class_loss_options;
using nn::reduction;

/// The reduction R of the pointwise losses l (a tensor operand).
template <reduction R, class L>
auto reduce_loss(L const& l) {
  static_assert(R != reduction::batchmean || sizeof(L) == 0, "adx: reduction::batchmean is kl_div's only");
  if constexpr (R == reduction::none)
    return eval(l);
  else if constexpr (R == reduction::sum)
    return sum(l);
  else
    return mean(l);
}

/// Checks the options and shapes of a class loss over log-probabilities of shape [N, C].
inline void check_class_loss(char const* op, shape const& lp, shape const& labels, class_loss_options const& o) {
  if (lp.rank() != 2) detail::throw_shape_error(op, "the input must be [batch, classes]", lp);
  if (labels.rank() != 1 || labels[0] != lp[0])
    detail::throw_shape_error(op, "the labels must be one per row of the input", lp, labels);
  if (o.weight.size() != 0 && o.weight.shape() != shape{lp[1]})
    detail::throw_shape_error(op, "the class weights must be one per class", lp, o.weight.shape());
  if (!(o.label_smoothing >= 0 && o.label_smoothing <= 1))
    throw value_error(std::string("adx: ") + op + ": label_smoothing must be in [0, 1], not " +
                      std::to_string(o.label_smoothing));
}

/// The class weights as a row [1, C] of the numbers' type (ones without weights).
template <class N>
tensor<N> class_weights(nn::class_loss_options const& o, std::size_t c) {
  if (o.weight.size() == 0) return tensor<N>(shape{1, c}, N(1));
  return tensor<N>(o.weight.reshape(shape{1, c}));
}

/// nll_loss over log-probabilities lp [N, C] and integer labels, with cross_entropy's label
/// smoothing when eps > 0 (torch 1.13's cross_entropy_loss_label_smoothing).
template <reduction R, class S, class Ix>
auto class_loss(char const* op, tensor<S> const& lp, Ix const& labels, class_loss_options const& o) {
  auto const& y = detail::as_index_tensor(labels);
  check_class_loss(op, lp.shape(), y.shape(), o);
  std::size_t const n = lp.shape()[0], c = lp.shape()[1];
  tensor<long> safe(shape{n, 1});
  using N = parameter_t<tensor<S>>;       // the numbers' type: constants stay float for float elements
  tensor<N> w(shape{n}), keep(shape{n});  // each row's class weight (0 if ignored); 1 unless ignored
  double total = 0;                       // the mean's denominator: the weights counted
  for (std::size_t i = 0; i < n; ++i) {
    bool const ignored = static_cast<long>(y.data()[i]) == o.ignore_index;
    std::size_t const k = ignored ? 0 : detail::checked_index(op, y.data()[i], c, false, y.shape());
    safe.data()[i] = static_cast<long>(k);
    w.data()[i] = static_cast<N>(ignored ? 0.0 : o.weight.size() ? o.weight.data()[k] : 1.0);
    keep.data()[i] = static_cast<N>(ignored ? 0.0 : 1.0);
    total += w.data()[i];
  }
  auto const picked = gather(lp, 1, safe).reshape(shape{n});
  auto const nll = eval(-(w * picked));
  double const eps = o.label_smoothing;
  if constexpr (R == reduction::none) {
    if (eps == 0) return nll;
    tensor<N> const wrow = class_weights<N>(o, c);
    auto const smooth = eval(-sum(lp * wrow, 1) * keep);
    return eval(static_cast<N>(1 - eps) * nll + smooth * static_cast<N>(eps / static_cast<double>(c)));
  } else {
    static_assert(R != reduction::batchmean, "adx: reduction::batchmean is kl_div's only");
    auto const reduce = [&](auto const& l) {
      if constexpr (R == reduction::sum)
        return sum(l);
      else
        return sum(l) / static_cast<N>(total);  // torch: the sum over the total weight (a count without weights)
    };
    S const base = reduce(nll);
    if (eps == 0) return base;
    tensor<N> const wrow = class_weights<N>(o, c);
    auto const smooth = eval(-sum(lp * wrow, 1) * keep);
    return S(static_cast<N>(1 - eps) * base + reduce(smooth) * static_cast<N>(eps / static_cast<double>(c)));
  }
}

}  // namespace detail

namespace nn {

/// The mean (or sum, or each) of the squared differences (torch's mse_loss, MindSpore's
/// nn.MSELoss); the shapes broadcast.
template <reduction R = reduction::mean, tensor_operand P, class L>
auto mse_loss(P const& prediction, L const& target) {
  auto const d = eval(prediction - target);
  return detail::reduce_loss<R>(d * d);
}

/// The mean (or sum, or each) of the absolute differences (torch's l1_loss); the shapes broadcast.
template <reduction R = reduction::mean, tensor_operand P, class L>
auto l1_loss(P const& prediction, L const& target) {
  return detail::reduce_loss<R>(abs(prediction - target));
}

/// torch's huber_loss: with z = |x - t|, z^2 / 2 below delta and delta (z - delta / 2) from it.
template <reduction R = reduction::mean, tensor_operand P, class L>
auto huber_loss(P const& input, L const& target, double delta = 1.0) {
  if (!(delta > 0)) throw value_error("adx: huber_loss: delta must be positive");
  auto const d = eval(input - target);
  using N = detail::parameter_t<decltype(d)>;
  N const half = static_cast<N>(0.5), dl = static_cast<N>(delta);
  return detail::reduce_loss<R>(where(abs(d) < dl, half * d * d, dl * (abs(d) - half * dl)));
}

/// torch's smooth_l1_loss: with z = |x - t|, z^2 / (2 beta) below beta and z - beta / 2 from it
/// (|x - t| for beta 0).
template <reduction R = reduction::mean, tensor_operand P, class L>
auto smooth_l1_loss(P const& input, L const& target, double beta = 1.0) {
  if (!(beta >= 0)) throw value_error("adx: smooth_l1_loss: beta must be >= 0");
  auto const d = eval(input - target);
  if (beta == 0) return detail::reduce_loss<R>(eval(abs(d)));
  using N = detail::parameter_t<decltype(d)>;
  N const half = static_cast<N>(0.5), b = static_cast<N>(beta);
  return detail::reduce_loss<R>(eval(where(abs(d) < b, half * d * d / b, abs(d) - half * b)));
}

/// Cross-entropy of logits [N, C] against integer labels [N] (torch's cross_entropy with class
/// indices): -w[y_n] log_softmax(logits)[n, y_n], with class weights, an ignored label, and
/// label smoothing (then (1 - eps) of that plus eps/C of the weighted sum over all classes).
/// The mean divides by the total weight of the labels counted. A label outside [0, C) that is
/// not ignore_index is a shape_error.
template <reduction R = reduction::mean, tensor_operand X, index_operand L>
auto cross_entropy(X const& logits, L const& labels, class_loss_options const& o = {}) {
  return detail::class_loss<R>("cross_entropy", eval(log_softmax(logits, -1)), labels, o);
}

/// Cross-entropy of logits [N, C] against target probabilities [N, C] (torch's cross_entropy
/// with probabilities): -sum_c w_c t'_{n,c} log_softmax(logits)[n, c], t' the targets smoothed
/// as (1 - eps) t + eps / C; the mean divides by N. Only the weight and label_smoothing options
/// apply.
template <reduction R = reduction::mean, tensor_operand X, tensor_operand P>
requires(!index_operand<P>) auto cross_entropy(X const& logits, P const& target, class_loss_options const& o = {}) {
  auto const lp = eval(log_softmax(logits, -1));
  auto const t = eval(target);
  if (lp.rank() != 2 || t.shape() != lp.shape())
    detail::throw_shape_error("cross_entropy", "the input and the target probabilities must both be [batch, classes]",
                              lp.shape(), t.shape());
  detail::check_class_loss("cross_entropy", lp.shape(), shape{lp.shape()[0]}, o);
  std::size_t const c = lp.shape()[1];
  double const eps = o.label_smoothing;
  using N = detail::parameter_t<decltype(lp)>;
  tensor<N> const wrow = detail::class_weights<N>(o, c);
  auto const per_row = [&] {
    if (eps > 0)
      return eval(-sum(lp * wrow * (t * static_cast<N>(1 - eps) + static_cast<N>(eps / static_cast<double>(c))), 1));
    return eval(-sum(lp * wrow * t, 1));
  }();
  if constexpr (R == reduction::none)
    return per_row;
  else if constexpr (R == reduction::sum)
    return sum(per_row);
  else
    return sum(per_row) / static_cast<N>(lp.shape()[0]);
}

/// Softmax cross-entropy of logits [N, C] against target probabilities [N, C], averaged over
/// the batch: cross_entropy with probabilities.
template <tensor_operand X, tensor_operand L>
auto softmax_cross_entropy(X const& logits, L const& target) {
  return -mean(sum(target * log_softmax(logits, -1), -1));
}

/// The negative log-likelihood of log-probabilities [N, C] at integer labels [N] (torch's
/// nll_loss): cross_entropy without the log_softmax (label_smoothing must be 0).
template <reduction R = reduction::mean, tensor_operand X, index_operand L>
auto nll_loss(X const& log_probs, L const& labels, class_loss_options const& o = {}) {
  if (o.label_smoothing != 0) throw value_error("adx: nll_loss: label_smoothing is cross_entropy's option");
  return detail::class_loss<R>("nll_loss", eval(log_probs), labels, o);
}

/// Binary cross-entropy of probabilities p against targets t (torch's binary_cross_entropy):
/// -w (t log p + (1 - t) log(1 - p)), each log clamped at -100 as torch clamps it; weight (empty:
/// 1) broadcasts. value_error if an element of p is outside [0, 1].
template <reduction R = reduction::mean, tensor_operand P, class T>
auto binary_cross_entropy(P const& p, T const& target, tensor<double> const& weight = {}) {
  auto const pv = eval(p);
  for (std::size_t i = 0; i < pv.size(); ++i) {
    double const v = static_cast<double>(primal(pv.data()[i]));
    if (!(v >= 0 && v <= 1))
      throw value_error("adx: binary_cross_entropy: every element of the input must be in [0, 1] (element " +
                        std::to_string(i) + " is " + std::to_string(v) + ")");
  }
  // log clamped at -100 as torch clamps it. The log's argument is kept above a floor first, so
  // that at p = 0 or 1 the clamped term's derivative is 0, not 0 times log's infinite one: 3e-44
  // (log -100.2, clamped) for double, the smallest normal float for float, whose reciprocal
  // is finite (log -87.3: float p below 1.2e-38 gives -87.3 there where torch gives log p)
  using N = detail::parameter_t<decltype(pv)>;
  N const floor = std::max(static_cast<N>(3e-44), std::numeric_limits<N>::min());
  auto const l =
      eval(-(target * max(log(max(pv, floor)), N(-100)) + (1 - target) * max(log(max(1 - pv, floor)), N(-100))));
  if (weight.size() == 0) return detail::reduce_loss<R>(l);
  return detail::reduce_loss<R>(eval(l * tensor<N>(weight)));
}

/// The options of binary_cross_entropy_with_logits (torch's keywords).
struct bce_logits_options {
  tensor<double> weight{};      ///< broadcast over the losses; empty: 1
  tensor<double> pos_weight{};  ///< the positive class's weight, broadcast along the last axis; empty: 1
};

/// Binary cross-entropy of logits x against targets t (torch's
/// binary_cross_entropy_with_logits): (1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x), stable
/// for every x.
template <reduction R = reduction::mean, tensor_operand X, class T>
auto binary_cross_entropy_with_logits(X const& x, T const& target, bce_logits_options const& o = {}) {
  auto const xv = eval(x);
  using N = detail::parameter_t<decltype(xv)>;
  auto const pointwise = [&] {
    if (o.pos_weight.size() == 0) return eval((1 - target) * xv - logsigmoid(xv));
    return eval((1 - target) * xv - (1 + (tensor<N>(o.pos_weight) - 1) * target) * logsigmoid(xv));
  }();
  if (o.weight.size() == 0) return detail::reduce_loss<R>(pointwise);
  return detail::reduce_loss<R>(eval(pointwise * tensor<N>(o.weight)));
}

/// The Kullback-Leibler divergence of the target from the input, the input being
/// log-probabilities (torch's kl_div): t (log t - input) pointwise, with 0 where t is 0
/// (xlogy), or e^t (t - input) if log_target. reduction::batchmean divides the sum by the first
/// extent (the batch size), torch's mathematically correct choice; mean divides by every element.
template <reduction R = reduction::mean, tensor_operand X, class T>
auto kl_div(X const& input, T const& target, bool log_target = false) {
  auto const in = eval(input);
  auto const t = eval(target);
  auto const pointwise = log_target ? eval(exp(t) * (t - in)) : eval(xlogy(t, t) - t * in);
  if constexpr (R == reduction::batchmean) {
    if (in.rank() == 0) detail::throw_shape_error("kl_div", "batchmean needs a batch axis", in.shape());
    return sum(pointwise) / static_cast<detail::parameter_t<decltype(in)>>(in.shape()[0]);
  } else {
    return detail::reduce_loss<R>(pointwise);
  }
}

}  // namespace nn
}  // namespace adx
