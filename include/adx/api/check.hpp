// SPDX-License-Identifier: MIT
// adx: gradient checking, like torch.autograd.gradcheck / gradgradcheck.
//
//   check_grad(f, x, order = 1, options = {})  -> grad_check_report (never throws for a mismatch)
//   gradcheck(f, x, order = 1, options = {})   -> true, or throws gradient_error naming the
//                                                 first disagreeing element
//
// x is what adx::functional takes (a floating-point scalar, std::vector, tensor, or a std::tuple
// of them); f is written over a generic scalar and must also accept plain numbers, since the
// finite differences evaluate it on them.
//
// order 1: every element of the Jacobian by forward mode and by reverse mode is compared with
//   the central difference (f(x + eps e_j) - f(x - eps e_j)) / (2 eps), and forward with reverse.
// order 2: the above, and for every element of f's output, every element of its Hessian by
//   forward over reverse (var<dual>) and by reverse over reverse (var<var>) is compared with the
//   central difference of the reverse-mode gradient, and the two with each other (as torch's
//   gradgradcheck checks second derivatives of any output). An output without elements has no
//   derivatives to compare at either order.
// An element agrees when |a - b| <= atol + rtol |b|, b being the finite difference (or the
// reverse-mode value when two AD results are compared), torch's allclose rule.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "adx/api/functional.hpp"
#include "adx/core/error.hpp"

namespace adx {

/// Tolerances of check_grad; the defaults are torch.autograd.gradcheck's.
struct grad_check_options {
  double eps = 1e-6;   ///< finite-difference step
  double atol = 1e-5;  ///< absolute tolerance
  double rtol = 1e-3;  ///< relative tolerance
};

/// One block of derivatives compared: d out / d x_input (order 1) or d^2 out / d x_input d x_input2.
struct grad_check_block {
  int order = 1;             ///< 1: first derivatives, 2: second
  std::size_t input = 0;     ///< which input (its position among f's arguments)
  std::size_t input2 = 0;    ///< order 2 only
  std::size_t output = 0;    ///< order 2 only: the (flat) output element whose Hessian this is
  double max_abs_error = 0;  ///< max |AD - reference| over the block's elements and methods
  double max_rel_error = 0;  ///< max |AD - reference| / max(|reference|, atol)
  bool passed = true;        ///< whether every element agreed within the tolerances
};

/// What check_grad found: each block compared, whether all agreed, and the first disagreement.
struct grad_check_report {
  /// order-1 blocks first (one per input), then order 2: per output element, per pair of inputs
  std::vector<grad_check_block> blocks;
  bool passed = true;   ///< whether every block passed
  std::string message;  ///< the first disagreeing element, empty when everything agrees
  /// passed.
  explicit operator bool() const noexcept { return passed; }
};

namespace detail {

inline std::string index_text(shape const& sh, std::size_t flat) {
  if (sh.rank() == 0) return {};  // a scalar: no index
  std::vector<std::size_t> idx(sh.rank());
  for (std::size_t d = sh.rank(); d-- > 0;) {
    idx[d] = sh[d] == 0 ? 0 : flat % sh[d];
    flat = sh[d] == 0 ? 0 : flat / sh[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

/// Compares one block: candidates (name, values) against the reference values; records the
/// first failure in the report's message.
struct block_checker {
  grad_check_options const& opt;
  grad_check_report& report;
  grad_check_block& block;

  template <class Describe>
  void compare(std::vector<double> const& got, char const* got_name, std::vector<double> const& want,
               char const* want_name, Describe const& describe) {
    for (std::size_t e = 0; e < want.size(); ++e) {
      double const a = got[e], b = want[e];
      double const err = std::abs(a - b);
      bool ok = err <= opt.atol + opt.rtol * std::abs(b);
      if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
      double const shown = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
      block.max_abs_error = std::max(block.max_abs_error, shown);
      block.max_rel_error = std::max(block.max_rel_error, shown / std::max(std::abs(b), opt.atol));
      if (!ok) {
        block.passed = false;
        if (report.passed) {
          std::ostringstream os;
          os.precision(10);
          os << "adx: check_grad: " << describe(e) << ": " << got_name << " gives " << a << " but " << want_name
             << " gives " << b << " (|difference| " << err
             << " > atol + rtol |reference| = " << opt.atol + opt.rtol * std::abs(b) << ")";
          report.message = os.str();
        }
        report.passed = false;
      }
    }
  }
};

template <class T>
std::vector<double> as_doubles(tensor<T> const& t) {
  std::vector<double> v(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) v[i] = static_cast<double>(t.data()[i]);
  return v;
}

/// f at xs with element j of input i moved by h.
template <class F, class Tup>
auto eval_shifted(F const& f, Tup const& xs, std::size_t i, std::size_t j, double h) {
  using R = inputs_element_t<Tup>;
  auto const xp = map_inputs<R>(
      xs, [&](std::size_t ii, std::size_t jj, R const& r) { return ii == i && jj == j ? static_cast<R>(r + h) : r; });
  return evaluated(call_unpacked(f, xp));
}

template <class Y>
std::vector<double> flat_doubles(Y const& y) {
  using K = kind_of<Y>;
  std::vector<double> v(K::size(y));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(K::at(y, k));
  return v;
}

/// Names element e of a block: "d out[1] / d x[2]" or "d^2 out / d x[0][1] d x[1][2]".
struct element_namer {
  shape out, in, in2;
  std::size_t input, input2;
  bool packed;
  int order;
  std::size_t output = 0;  ///< order 2: the output element

  std::string operator()(std::size_t e) const {
    auto name = [&](std::size_t i) { return packed ? "x[" + std::to_string(i) + "]" : std::string("x"); };
    std::size_t const n_in = in.size(), n_in2 = in2.size();
    if (order == 1)
      return "d out" + index_text(out, e / std::max<std::size_t>(n_in, 1)) + " / d " + name(input) +
             index_text(in, n_in ? e % n_in : 0);
    return "d^2 out" + index_text(out, output) + " / d " + name(input) +
           index_text(in, e / std::max<std::size_t>(n_in2, 1)) + " d " + name(input2) +
           index_text(in2, n_in2 ? e % n_in2 : 0);
  }
};

/// The reverse-mode gradient of f with respect to input I, at xs with element b of input j
/// moved by h.
template <std::size_t I, class F, class Tup>
auto shifted_gradient(F const& f, Tup const& xs, std::size_t j, std::size_t b, double h) {
  using R = inputs_element_t<Tup>;
  auto const xp = map_inputs<R>(
      xs, [&](std::size_t ii, std::size_t jj, R const& r) { return ii == j && jj == b ? static_cast<R>(r + h) : r; });
  return std::get<I>(jacobian_reverse(f, xp));
}

template <std::size_t I, class F, class Tup, class JF, class JR>
void check_jacobian_block(F const& f, Tup const& xs, JF const& jf, JR const& jr, bool packed,
                          grad_check_options const& opt, grad_check_report& report) {
  auto const fwd = as_doubles(std::get<I>(jf)), rev = as_doubles(std::get<I>(jr));
  shape const in = kind_of<std::tuple_element_t<I, Tup>>::shape_of(std::get<I>(xs));
  std::size_t const nin = in.size();
  std::size_t const m = nin ? fwd.size() / nin : 0;
  std::vector<double> fd(fwd.size());
  for (std::size_t j = 0; j < nin; ++j) {
    auto const up = flat_doubles(eval_shifted(f, xs, I, j, opt.eps));
    auto const dn = flat_doubles(eval_shifted(f, xs, I, j, -opt.eps));
    for (std::size_t k = 0; k < m; ++k) fd[k * nin + j] = (up[k] - dn[k]) / (2 * opt.eps);
  }
  shape out;
  for (std::size_t d = 0; d + in.rank() < std::get<I>(jf).rank(); ++d) out.push_back(std::get<I>(jf).shape()[d]);
  grad_check_block block;
  block.order = 1;
  block.input = I;
  element_namer const name{out, in, {}, I, 0, packed, 1};
  block_checker c{opt, report, block};
  c.compare(fwd, "forward mode", fd, "the central difference", name);
  c.compare(rev, "reverse mode", fd, "the central difference", name);
  c.compare(fwd, "forward mode", rev, "reverse mode", name);
  report.blocks.push_back(block);
}

template <class F, class Tup>
void check_first_order(F const& f, Tup const& xs, bool packed, grad_check_options const& opt,
                       grad_check_report& report) {
  auto const jf = jacobian_impl(f, xs, functional::jacobian_strategy::forward);
  auto const jr = jacobian_impl(f, xs, functional::jacobian_strategy::reverse);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (check_jacobian_block<I>(f, xs, jf, jr, packed, opt, report), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

/// One block of order 2: d^2 out_k / dx_I dx_J by forward over reverse (fr) and reverse over
/// reverse (rr) against the central difference of the gradient (fd), each row-major over
/// (elements of x_I) x (elements of x_J).
inline void check_hessian_block(std::size_t k, std::size_t I, std::size_t J, shape const& out, shape const& in_i,
                                shape const& in_j, std::vector<double> const& fr, std::vector<double> const& rr,
                                std::vector<double> const& fd, bool packed, grad_check_options const& opt,
                                grad_check_report& report) {
  grad_check_block block;
  block.order = 2;
  block.input = I;
  block.input2 = J;
  block.output = k;
  element_namer const name{out, in_i, in_j, I, J, packed, 2, k};
  block_checker c{opt, report, block};
  c.compare(fr, "forward over reverse", fd, "the central difference of the gradient", name);
  c.compare(rr, "reverse over reverse", fd, "the central difference of the gradient", name);
  c.compare(fr, "forward over reverse", rr, "reverse over reverse", name);
  report.blocks.push_back(block);
}

/// The reverse-mode Jacobian block d out / d x_I, as a function of all inputs (for reverse over
/// reverse).
template <std::size_t I, class F>
struct gradient_of_input {
  F const& f;
  template <class... X>
  auto operator()(X const&... x) const {
    return std::get<I>(jacobian_reverse(f, std::make_tuple(x...)));
  }
};

/// Element k of f's output, as a function of the same inputs.
template <class F>
struct output_element_function {
  F const& f;
  std::size_t k;
  template <class... X>
  auto operator()(X const&... x) const {
    auto const y = evaluated(f(x...));
    return element_of<decltype(y)>(kind_of<decltype(y)>::at(y, k));
  }
};

/// For inputs I and J: the central differences of the reverse Jacobian block d out / d x_I along
/// x_J, stored as [(k * ni + a) * nj + b] for output element k.
template <std::size_t I, std::size_t J, class F, class Tup>
void second_order_differences(F const& f, Tup const& xs, std::size_t m, double eps, std::vector<double>& fd) {
  std::size_t const ni = kind_of<std::tuple_element_t<I, Tup>>::shape_of(std::get<I>(xs)).size();
  std::size_t const nj = kind_of<std::tuple_element_t<J, Tup>>::shape_of(std::get<J>(xs)).size();
  fd.assign(m * ni * nj, 0.0);
  for (std::size_t b = 0; b < nj; ++b) {
    auto const up = as_doubles(shifted_gradient<I>(f, xs, J, b, eps));
    auto const dn = as_doubles(shifted_gradient<I>(f, xs, J, b, -eps));
    for (std::size_t ka = 0; ka < m * ni; ++ka) fd[ka * nj + b] = (up[ka] - dn[ka]) / (2 * eps);
  }
}

/// Row I of every output element's Hessian by reverse over reverse, into rr[I * N + J] as
/// [(k * ni + a) * nj + b]: one recording of element k's gradient in x_I per output element (a
/// recording of all their gradients at once would make every one of its sweeps run through all
/// of them), and the central differences.
template <std::size_t I, class F, class Tup>
void second_order_row(F const& f, Tup const& xs, std::size_t m, double eps, std::vector<std::vector<double>>& rr,
                      std::vector<std::vector<double>>& fd) {
  constexpr std::size_t N = std::tuple_size_v<Tup>;
  for (std::size_t k = 0; k < m; ++k) {
    using G = output_element_function<F>;
    auto const hrr = jacobian_reverse(gradient_of_input<I, G>{G{f, k}}, xs);
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (([&](auto const& block) {
         auto const v = as_doubles(block);
         auto& dst = rr[I * N + J];
         if (k == 0) dst.assign(m * v.size(), 0.0);
         std::copy(v.begin(), v.end(), dst.begin() + static_cast<std::ptrdiff_t>(k * v.size()));
       }(std::get<J>(hrr))),
       ...);
    }
    (std::make_index_sequence<N>{});
  }
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    (second_order_differences<I, J>(f, xs, m, eps, fd[I * N + J]), ...);
  }
  (std::make_index_sequence<N>{});
}

/// Second derivatives of every output element, all from shared passes: forward over reverse
/// records f once per input element and sweeps once per output element; reverse over reverse
/// records the Jacobian block of each input once and sweeps once per element of it; the central
/// differences take two reverse Jacobians per input element. Taking each output element on
/// its own would record m times as often. Blocks are reported per output element, then per
/// pair of inputs.
template <class F, class Tup>
void check_second_order(F const& f, Tup const& xs, bool packed, grad_check_options const& opt,
                        grad_check_report& report) {
  constexpr std::size_t N = std::tuple_size_v<Tup>;
  auto const y = evaluated(call_unpacked(f, xs));
  using YK = kind_of<decltype(y)>;
  std::size_t const m = YK::size(y);
  if (m == 0) return;                 // no element: nothing to compare
  shape const out = YK::shape_of(y);  // a scalar output has the empty shape: "d^2 out / ..."
  auto const fr = output_hessians(f, xs, m, false);
  std::vector<shape> in(N);
  std::vector<std::vector<double>> rr(N * N), fd(N * N);  // [I * N + J][(k * ni + a) * nj + b]
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((in[I] = kind_of<std::tuple_element_t<I, Tup>>::shape_of(std::get<I>(xs))), ...);
    (second_order_row<I>(f, xs, m, opt.eps, rr, fd), ...);
  }
  (std::make_index_sequence<N>{});
  for (std::size_t k = 0; k < m; ++k)
    for (std::size_t I = 0; I < N; ++I)
      for (std::size_t J = 0; J < N; ++J) {
        std::size_t const size = in[I].size() * in[J].size();
        auto const slice = [&](std::vector<double> const& v) {
          return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(k * size),
                                     v.begin() + static_cast<std::ptrdiff_t>((k + 1) * size));
        };
        std::vector<double> const fk(fr[k][I][J].begin(), fr[k][I][J].end());
        check_hessian_block(k, I, J, out, in[I], in[J], fk, slice(rr[I * N + J]), slice(fd[I * N + J]), packed, opt,
                            report);
      }
}

}  // namespace detail

/// Compares forward mode, reverse mode and central finite differences (and, for order 2, the
/// nested Hessians of every output element with the finite difference of the gradient). Never throws for a mismatch:
/// the report says where (its message names the first disagreeing element).
template <class F, class X>
grad_check_report check_grad(F const& f, X const& x, int order = 1, grad_check_options const& options = {}) {
  auto const xs = detail::inputs_tuple(x);
  using R = detail::inputs_element_t<decltype(xs)>;
  static_assert(std::is_floating_point_v<R>, "adx: check_grad needs floating-point inputs (finite differences)");
  if (order != 1 && order != 2)
    throw value_error("adx: check_grad: order must be 1 or 2, not " + std::to_string(order));
  grad_check_report report;
  constexpr bool packed = detail::as_tuple_t<X>::packed;
  detail::check_first_order(f, xs, packed, options, report);
  if (order == 2) detail::check_second_order(f, xs, packed, options, report);
  return report;
}

/// torch.autograd.gradcheck: true when check_grad passes, else throws gradient_error with the
/// report's message (the first disagreeing element and both values).
template <class F, class X>
bool gradcheck(F const& f, X const& x, int order = 1, grad_check_options const& options = {}) {
  auto const report = check_grad(f, x, order, options);
  if (!report.passed) throw gradient_error(report.message);
  return true;
}

}  // namespace adx
