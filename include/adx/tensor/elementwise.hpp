// adx: fused elementwise tensor expressions. `a * b + sin(c) / d` over tensors builds one
// tensor_expr tree; assigning it to a tensor runs ONE loop over the (broadcast) result, and at
// each element builds the same scalar expression the scalar layer would build from the same
// rules. So every elementwise function works in every mode: for tensor<double> the loop is
// plain arithmetic; for tensor<dual<T>> each element gets its tangent; for tensor<var<T>> the
// expression is ONE tape node owning a contiguous block of adjoint slots: its values are
// computed now, and the sweep rebuilds each element's scalar expression and pushes the adjoint
// through the same rules (no partials stored). A broadcast operand's adjoint is summed back
// over the elements that read it.
//
// Operands are kept by value (tensors share their buffers, so this is cheap): an expression
// never dangles, and assigning it to one of its own operands is safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/core/expr.hpp"
#include "adx/reverse/var.hpp"
#include "adx/rules/elementary.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

using stride_array = std::array<std::size_t, shape::max_rank>;

/// A tensor operand, read with broadcasting.
template <class S>
struct tensor_leaf {
  tensor<S> t;
  stride_array bst{};
  bool single = false;

  adx::shape const& shape() const noexcept { return t.shape(); }
  bool flat_readable(adx::shape const& out) const noexcept { return t.size() == 1 || t.shape() == out; }
  void bind(adx::shape const& out) {
    single = t.size() == 1;
    bst = broadcast_strides(t.shape(), out);
  }
  S const& at_flat(std::size_t i) const noexcept { return t.data()[single ? 0 : i]; }
  S const& at_index(stride_array const& idx, std::size_t rank) const noexcept {
    std::size_t o = 0;
    for (std::size_t d = 0; d < rank; ++d) o += idx[d] * bst[d];
    return t.data()[o];
  }
  template <class F>
  void for_each_element(F&& f) const {
    for (std::size_t i = 0; i < t.size(); ++i) f(t.data()[i]);
  }
};

/// A scalar operand (a number or an AD scalar), the same for every element.
template <class X>
struct scalar_leaf {
  X v;
  adx::shape shape() const noexcept { return {}; }
  bool flat_readable(adx::shape const&) const noexcept { return true; }
  void bind(adx::shape const&) noexcept {}
  X const& at_flat(std::size_t) const noexcept { return v; }
  X const& at_index(stride_array const&, std::size_t) const noexcept { return v; }
  template <class F>
  void for_each_element(F&& f) const {
    f(v);
  }
};

template <class E>
concept tensor_node = requires {
  typename std::remove_cvref_t<E>::is_tensor_expr;
};

/// The scalar an element expression evaluates to (an AD scalar, or the plain number).
template <class X>
using element_result_t = std::conditional_t<ad_operand<X>, ad_type_t<X>, std::remove_cvref_t<X>>;

}  // namespace detail

/// An elementwise expression over tensors (what `a * b` returns for tensors). It lives in
/// namespace adx, not detail, so that argument-dependent lookup finds adx's operators and
/// functions for it in user code: its operands alone (tensor_leaf<double>) would not.
template <class Rule, class... Ops>
class tensor_expr : public detail::tensor_tag {
 public:
  using is_tensor_expr = void;

  explicit tensor_expr(Ops... ops) : ops_(std::move(ops)...) {
    std::apply([&](auto const&... op) { ((shape_ = broadcast_shapes(shape_, op.shape(), Rule::name)), ...); }, ops_);
  }

  adx::shape const& shape() const noexcept { return shape_; }
  bool flat_readable(adx::shape const& out) const noexcept {
    return std::apply([&](auto const&... op) { return (op.flat_readable(out) && ...); }, ops_);
  }
  void bind(adx::shape const& out) {
    std::apply([&](auto&... op) { (op.bind(out), ...); }, ops_);
  }
  /// The element's scalar expression (or plain value), read at a flat position.
  auto at_flat(std::size_t i) const {
    return std::apply([&](auto const&... op) { return detail::make_expr<Rule>(op.at_flat(i)...); }, ops_);
  }
  auto at_index(detail::stride_array const& idx, std::size_t rank) const {
    return std::apply([&](auto const&... op) { return detail::make_expr<Rule>(op.at_index(idx, rank)...); }, ops_);
  }
  /// Calls f on every element of every operand (AD scalars and numbers alike).
  template <class F>
  void for_each_element(F&& f) const {
    std::apply([&](auto const&... op) { (op.for_each_element(f), ...); }, ops_);
  }

  using element_type =
      detail::element_result_t<decltype(detail::make_expr<Rule>(std::declval<Ops const&>().at_flat(0)...))>;

 private:
  std::tuple<Ops...> ops_;
  adx::shape shape_;
};

namespace detail {

/// Stores a user operand in a tensor expression.
template <class X>
auto wrap_tensor_operand(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (tensor_node<D>)
    return D(std::forward<X>(x));
  else if constexpr (tensor_type<D>)
    return tensor_leaf<typename D::value_type>{std::forward<X>(x)};
  else if constexpr (ad_expression<D>)
    return scalar_leaf<ad_type_t<D>>{ad_type_t<D>(std::forward<X>(x))};  // evaluated (recorded) once
  else
    return scalar_leaf<D>{std::forward<X>(x)};
}

}  // namespace detail

/// An unevaluated elementwise tensor expression.
template <class E>
concept tensor_expression = detail::tensor_node<E>;

namespace detail {

template <class Rule, class... X>
auto make_tensor_expr(X&&... x) {
  return tensor_expr<Rule, decltype(wrap_tensor_operand(std::forward<X>(x)))...>(
      wrap_tensor_operand(std::forward<X>(x))...);
}

/// Calls f(i, element expression) for every element of the result, in row-major order.
template <class E, class F>
void for_each_result_element(E const& expr, adx::shape const& sh, bool flat, F&& f) {
  std::size_t const n = sh.size();
  if (flat) {
    for (std::size_t i = 0; i < n; ++i) f(i, expr.at_flat(i));
  } else {
    stride_array idx{};
    std::size_t const rank = sh.rank();
    for (std::size_t i = 0; i < n; ++i) {
      f(i, expr.at_index(idx, rank));
      for (std::size_t d = rank; d-- > 0;) {
        if (++idx[d] < sh[d]) break;
        idx[d] = 0;
      }
    }
  }
}

/// Adds m * partial straight into the adjoints (a node's backward pass).
template <class T>
struct adjoint_adder {
  T* adj;
  void add(index_type i, epoch_type, T const& p) {
    if (i != 0) adj[i] += p;
  }
};

/// The tape node of an elementwise expression over var<T> elements. It keeps the expression
/// (whose operands share their buffers) and, in the backward sweep, rebuilds each element's
/// scalar expression and pushes its adjoint through the same rules: no partials are stored.
template <class E, class T>
struct elementwise_node final : tape<T>::node {
  E expr;
  adx::shape sh;
  bool flat;
  elementwise_node(E e, adx::shape s, bool f) : expr(std::move(e)), sh(s), flat(f) {}

  void backward(T* adj) const override {
    adjoint_adder<T> w{adj};
    index_type const first = this->first;
    for_each_result_element(expr, sh, flat, [&](std::size_t i, auto const& e) {
      T const a = adj[first + i];
      e.push(w, a);
    });
  }
  void mark_inputs(std::uint8_t* reached) const override {
    expr.for_each_element([&](auto const& x) {  // operands recorded on this tape only
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(x)>, var<T>>) reached[x.index()] = 1;
    });
  }
};

/// Runs the loop: one pass over the result. For var<T> elements the expression becomes ONE
/// tape node (values now, partials in the sweep); otherwise each element is built from its
/// scalar expression (plain values, or value and tangent for dual).
template <class E>
auto evaluate_elementwise(E expr) {
  using R = typename E::element_type;
  adx::shape const sh = expr.shape();
  tensor<R> out(sh);
  R* o = out.data();
  expr.bind(sh);
  bool const flat = expr.flat_readable(sh);
  if constexpr (is_reverse_v<R>) {
    using T = value_type_t<R>;
    auto& tp = tape<T>::current();
    bool active = false;
    expr.for_each_element([&](auto const& x) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(x)>, R>) {
        if (x.index() != 0) {
          active = true;
          if (x.epoch() != tp.epoch()) tp.check_live(x.epoch());
        }
      }
    });
    if (!active || out.size() == 0 || !grad_enabled()) {
      for_each_result_element(expr, sh, flat, [&](std::size_t i, auto const& e) { o[i] = R::constant(e.val()); });
      return out;
    }
    std::vector<T> values(out.size());
    for_each_result_element(expr, sh, flat, [&](std::size_t i, auto const& e) { values[i] = e.val(); });
    index_type const first = tp.record_node(std::make_unique<elementwise_node<E, T>>(std::move(expr), sh, flat),
                                            static_cast<index_type>(out.size()), describe_expression<E>());
    epoch_type const ep = tp.epoch();
    for (std::size_t i = 0; i < out.size(); ++i) o[i] = R::recorded(values[i], first + static_cast<index_type>(i), ep);
  } else {
    for_each_result_element(expr, sh, flat, [&](std::size_t i, auto&& e) { o[i] = R(e); });
  }
  return out;
}

}  // namespace detail

/// Evaluates a tensor expression (or copies a tensor).
template <class E>
requires tensor_operand<E>
auto eval(E const& e) {
  if constexpr (tensor_type<E>)
    return e;
  else
    return detail::evaluate_elementwise(e);
}

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

template <int N, tensor_operand X>
auto polygamma(X&& x) {
  return detail::make_tensor_expr<detail::polygamma_rule<N>>(std::forward<X>(x));
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

// ---- comparisons: masks -------------------------------------------------------------------

namespace detail {
template <class Cmp>
struct compare_rule {
  static constexpr char const* name = Cmp::name;
  template <class X, class Y>
  static bool value(X const& x, Y const& y) {
    return Cmp{}(primal_of(x), primal_of(y));
  }
};
struct less_op {
  static constexpr char const* name = "less";
  bool operator()(double a, double b) const { return a < b; }
};
struct greater_op {
  static constexpr char const* name = "greater";
  bool operator()(double a, double b) const { return a > b; }
};
struct less_equal_op {
  static constexpr char const* name = "less_equal";
  bool operator()(double a, double b) const { return a <= b; }
};
struct greater_equal_op {
  static constexpr char const* name = "greater_equal";
  bool operator()(double a, double b) const { return a >= b; }
};
struct equal_op {
  static constexpr char const* name = "equal";
  bool operator()(double a, double b) const { return a == b; }
};
struct not_equal_op {
  static constexpr char const* name = "not_equal";
  bool operator()(double a, double b) const { return a != b; }
};

template <class X>
auto eval_operand(X const& x) {
  if constexpr (tensor_operand<X>)
    return eval(x);
  else
    return x;
}
template <class X>
adx::shape shape_of(X const& x) {
  if constexpr (tensor_type<X>)
    return x.shape();
  else
    return {};
}
template <class X>
stride_array strides_for(X const& x, adx::shape const& out) {
  if constexpr (tensor_type<X>)
    return broadcast_strides(x.shape(), out);
  else
    return {};
}
template <class X>
decltype(auto) element(X const& x, std::size_t o) {
  if constexpr (tensor_type<X>)
    return x.data()[o];
  else
    return (x);
}
/// Compares the primal values of two tensor operands elementwise into a tensor<bool>.
template <class Op, class X, class Y>
tensor<bool> compare(X const& x, Y const& y) {
  auto ex = eval_operand(x);
  auto ey = eval_operand(y);
  adx::shape const sh = broadcast_shapes(shape_of(ex), shape_of(ey), Op::name);
  tensor<bool> out(sh);
  bool* o = out.data();
  stride_array idx{};
  auto sx = strides_for(ex, sh), sy = strides_for(ey, sh);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::size_t ox = 0, oy = 0;
    for (std::size_t d = 0; d < sh.rank(); ++d) ox += idx[d] * sx[d], oy += idx[d] * sy[d];
    o[i] = Op{}(static_cast<double>(primal_of(element(ex, ox))), static_cast<double>(primal_of(element(ey, oy))));
    for (std::size_t d = sh.rank(); d-- > 0;) {
      if (++idx[d] < sh[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}
}  // namespace detail

#define ADX_TENSOR_COMPARISON(op, cls)         \
  template <class X, class Y>                  \
  requires tensor_operands2<X, Y> tensor<bool> \
  operator op(X const& x, Y const& y) { return detail::compare<detail::cls>(x, y); }
ADX_TENSOR_COMPARISON(<, less_op)
ADX_TENSOR_COMPARISON(>, greater_op)
ADX_TENSOR_COMPARISON(<=, less_equal_op)
ADX_TENSOR_COMPARISON(>=, greater_equal_op)
ADX_TENSOR_COMPARISON(==, equal_op)
ADX_TENSOR_COMPARISON(!=, not_equal_op)
#undef ADX_TENSOR_COMPARISON

}  // namespace adx
