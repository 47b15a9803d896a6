// SPDX-License-Identifier: MIT
// adx: tensor<S>, a dense row-major array of any scalar S (double, float, dual<...>, var<...>).
//
// Storage is a 64-byte aligned buffer shared between copies and copied on the first write
// through a shared copy (copy-on-write). Copies are therefore cheap, tensor expressions keep
// their operands by value (they never dangle) and `a = a * b + a` is alias-safe. A pointer from
// the non-const data() is valid until the tensor is copied or assigned, or shared another way:
// reshaped, sliced along consecutive elements, or converted (a tensor<var<T>> made from a
// tensor<T> shares its values). Writing through such a pointer after that would reach the sharer.
//
// A tensor<var<T>> that is one block of variables (made from numbers, or the outputs of a
// product, an elementwise or linear node, concat, an axis reduction or log_softmax) keeps its
// values contiguous beside the block's first index (detail::var_values, one allocation with
// the values when a node makes them): products use the values as their GEMM operand,
// expressions and reductions read them directly, and the var elements are made only when code
// asks for them (data(), element access). Any non-const access gives the tensor elements of
// its own, as a write needs.
//
// Structural operations (reshape, transpose, permute, slice, element access) only move
// elements. For tensor<var<T>> the moved elements are the same variables, so these operations
// add nothing to the tape and gradients flow through them unchanged.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "adx/core/source_location.hpp"

#include "adx/core/expr.hpp"
#include "adx/core/traits.hpp"
#include "adx/reverse/anomaly.hpp"
#include "adx/reverse/tape.hpp"
#include "adx/tensor/shape.hpp"
#include "adx/tensor/storage.hpp"

namespace adx {

template <class S>
class tensor;

namespace detail {

/// The source offsets of a strided slice in row-major order: `outer` runs of `len` steps of
/// `jump` along the sliced axis, each step `inner` consecutive elements, runs `stride` apart.
struct slice_walk {
  std::size_t start, stride, jump, inner, len;
  std::size_t o = 0, j = 0, k = 0;  // run, position along the axis, element within `inner`
  std::size_t next() noexcept {
    std::size_t const at = start + o * stride + j * jump + k;
    if (++k == inner) {
      k = 0;
      if (++j == len) j = 0, ++o;
    }
    return at;
  }
};
template <class S>
using var_values_of = std::conditional_t<is_reverse_v<S>, var_values<S>, no_var_values>;

// A tensor<S>, or a class derived from one (adx::parameter<T> is a tensor<var<T>>).
template <class S>
std::true_type is_tensor_test(tensor<S> const*);
std::false_type is_tensor_test(...);
template <class X>
struct is_tensor : decltype(is_tensor_test(static_cast<X const*>(nullptr))) {};

/// Nested initializer lists of depth D over S.
template <class S, std::size_t D>
struct nested_list {
  using type = std::initializer_list<typename nested_list<S, D - 1>::type>;
};
template <class S>
struct nested_list<S, 0> {
  using type = S;
};

template <class S, std::size_t D>
void list_shape(typename nested_list<S, D>::type const& l, shape& sh, std::size_t level) {
  if constexpr (D > 0) {
    if (level == sh.rank())
      sh.push_back(l.size());
    else if (sh[level] != l.size())
      throw shape_error("adx: tensor: ragged initializer list (rows of different lengths)");
    for (auto const& sub : l) list_shape<S, D - 1>(sub, sh, level + 1);
  }
}
template <class S, std::size_t D, class Out>
void list_fill(typename nested_list<S, D>::type const& l, Out& out) {
  if constexpr (D == 0)
    *out++ = l;
  else
    for (auto const& sub : l) list_fill<S, D - 1>(sub, out);
}

}  // namespace detail

template <class X>
concept tensor_type = detail::is_tensor<std::remove_cvref_t<X>>::value;

namespace detail {
template <class E>
auto evaluate_elementwise(E& expr);  // tensor/elementwise.hpp (binds expr to the result's shape)

/// A tensor of vars that is one block of variables of one recording: element i has index
/// first + i. Noted by the operations that make such tensors, forgotten on any write access,
/// and used to read gradients and to feed products without looking at every element.
struct var_block {
  index_type first = 0;  ///< 0: not known to be a block
  epoch_type epoch = 0;
};
struct tensor_access;
}  // namespace detail

/// A dense row-major array of any scalar S (double, float, dual<...>, var<...>, nested), rank 0
/// to 8, copy-on-write (copies are cheap; expressions hold their operands by value).
/// Elementwise functions and + - * / broadcast as numpy does and fuse into one loop; for var
/// elements a fused expression is one tape node.
///
///     tensor<double> a{{0.5, 0.6}, {1.2, 1.3}};
///     tensor<var<double>> x(a);                // one block of independent variables
///     var<double> l = sum(exp(x) * a);          // one node, then a reduction
template <class S>
class tensor : public detail::tensor_tag {
 public:
  using value_type = S;   ///< the element type
  using scalar_type = S;  ///< the element type (the name generic code asks for)

  /// An empty tensor of shape [0].
  tensor() : tensor(adx::shape{0}) {}
  /// Shares the elements (copy-on-write).
  tensor(tensor const&) = default;
  /// Shares o's elements (copy-on-write).
  tensor& operator=(tensor const&) = default;
  /// A move leaves the source an empty tensor of shape [0], usable as any other.
  ADX_ALWAYS_INLINE tensor(tensor&& o) noexcept
      : shape_(o.shape_), n_(o.n_), data_(std::move(o.data_)), lazy_(std::move(o.lazy_)), lazy_at_(o.lazy_at_) {
    o.become_empty();
  }
  /// Takes o's elements; o becomes an empty tensor of shape [0].
  tensor& operator=(tensor&& o) noexcept {
    if (this != &o) {
      shape_ = o.shape_;
      n_ = o.n_;
      data_ = std::move(o.data_);
      lazy_ = std::move(o.lazy_);
      lazy_at_ = o.lazy_at_;
      o.become_empty();
    }
    return *this;
  }
  /// Shape sh, every element S{} (for var: inactive zeros; use full() or from_values for
  /// independent variables).
  explicit tensor(adx::shape const& sh)
      : shape_(sh), n_(detail::element_count("tensor", sh)), data_(detail::allocate<S>(n_)) {}
  /// Shape sh, every element `fill`.
  tensor(adx::shape const& sh, S const& fill) : tensor(sh) { std::fill_n(data_.get(), n_, fill); }
  /// Shape sh holding `values` in row-major order (their count must match).
  tensor(adx::shape const& sh, std::vector<S> const& values) : tensor(sh) {
    if (values.size() != n_)
      detail::throw_shape_error("tensor", std::to_string(values.size()) + " values given for", sh);
    std::copy(values.begin(), values.end(), data_.get());
  }

  /// A rank-1 tensor from a list: tensor<double>{0.5, 0.6}. For tensor<var<T>>, numbers
  /// become independent variables, as for a scalar var.
  tensor(typename detail::nested_list<S, 1>::type l) { from_list<1>(l); }
  /// A rank-2 tensor from nested lists: tensor<double>{{0.5, 0.6}, {1.2, 1.3}}.
  tensor(typename detail::nested_list<S, 2>::type l) { from_list<2>(l); }
  /// A rank-3 tensor from nested lists.
  tensor(typename detail::nested_list<S, 3>::type l) { from_list<3>(l); }
  /// A rank-4 tensor from nested lists.
  tensor(typename detail::nested_list<S, 4>::type l) { from_list<4>(l); }

  /// A tensor of shape sh whose element i (row-major) is made by f(i), in place: nothing is
  /// initialised twice.
  template <class F>
  requires std::is_invocable_r_v<S, F&, std::size_t>
  static tensor generate(adx::shape const& sh, F&& f) {
    return tensor(sh, detail::allocate_generated<S>(detail::element_count("tensor", sh), f));
  }
  /// A tensor of shape sh of plain numbers written by fill(p), which writes all of p[0..size):
  /// for loops that write several elements at once (tensor/lanes.hpp).
  template <class F>
  requires std::is_trivially_default_constructible_v<S> && std::is_invocable_v<F&, S*>
  static tensor fill(adx::shape const& sh, F&& f) {
    auto h = detail::make_buffer<S>(sh.size());
    S* const p = h->p;
    f(p);
    h->n = sh.size();
    return tensor(sh, std::shared_ptr<S>(std::move(h), p));
  }

  /// A rank-0 tensor holding one element.
  static tensor scalar(S const& v) { return tensor(adx::shape{}, v); }

  /// Element-wise conversion (double -> var<double> makes independent variables, etc.).
  /// `where` (the line that asked) is for anomaly mode (reverse/anomaly.hpp).
  template <class U>
  requires(!std::is_same_v<U, S> &&
           std::is_constructible_v<S, U const&>) explicit tensor(tensor<U> const& o,
                                                                 source_location where = source_location::current())
      : tensor(converted(o, where)) {}

  /// Evaluates an elementwise expression (one fused loop; for var elements one tape node).
  /// `where` (the line that asked) is for anomaly mode (reverse/anomaly.hpp).
  /// (Taken by value, and evaluated in place: a temporary expression is never copied.)
  template <class E>
  requires(tensor_operand<E> && !tensor_type<E>) tensor(E e, source_location where = source_location::current()) {
    detail::anomaly_site_guard site(where);
    auto r = detail::evaluate_elementwise(e);
    if constexpr (std::is_same_v<decltype(r), tensor>)
      *this = std::move(r);
    else
      *this = tensor(r);
  }
  /// Evaluates an elementwise expression into this tensor (alias-safe: e may read it).
  template <class E>
  requires(tensor_operand<E> && !tensor_type<E>) tensor& operator=(E const& e) { return *this = tensor(e); }

  /// *this = *this + x, in place as in numpy and torch: the result must keep this tensor's
  /// shape (a right operand that would broadcast it to a larger shape is a shape_error).
  template <class X>
  tensor& operator+=(X const& x) {
    return assign_in_place("operator+=", *this + x);
  }
  /// *this = *this - x, keeping this tensor's shape.
  template <class X>
  tensor& operator-=(X const& x) {
    return assign_in_place("operator-=", *this - x);
  }
  /// *this = *this * x, keeping this tensor's shape.
  template <class X>
  tensor& operator*=(X const& x) {
    return assign_in_place("operator*=", *this * x);
  }
  /// *this = *this / x, keeping this tensor's shape.
  template <class X>
  tensor& operator/=(X const& x) {
    return assign_in_place("operator/=", *this / x);
  }

  // ---- shape and elements --------------------------------------------------------------------
  /// The extents.
  adx::shape const& shape() const noexcept { return shape_; }
  /// The number of elements.
  std::size_t size() const noexcept { return n_; }
  /// The number of dimensions.
  std::size_t rank() const noexcept { return shape_.rank(); }
  /// The extent of `axis` (negative counts from the end, as in numpy).
  std::size_t dim(long axis) const { return shape_[detail::normalize_axis("dim", axis, shape_)]; }

  /// The elements, row-major. For a tensor of vars that is one block of variables this makes
  /// the elements on its first call (see detail::var_values).
  S const* data() const {
    if constexpr (is_reverse_v<S>)
      if (lazy_) return lazy_->elements().get() + lazy_at_;
    return data_.get();
  }
  /// The elements, row-major, to write (a shared buffer is copied first).
  S* data() {
    own();
    return data_.get();
  }
  /// The first element (row-major).
  S const* begin() const { return data(); }
  /// The end of the elements.
  S const* end() const { return data() + n_; }
  /// The elements as a span, row-major.
  std::span<S const> flat() const { return {data(), n_}; }

  /// Element at a multi-index (one index per dimension; checked).
  template <class... I>
  requires(std::is_integral_v<I>&&...) S const& operator()(I... i) const {
    return data()[offset({static_cast<long long>(i)...})];
  }
  /// Element at a multi-index, to write (checked; a shared buffer is copied first).
  template <class... I>
  requires(std::is_integral_v<I>&&...) S& operator()(I... i) {
    std::size_t const o = offset({static_cast<long long>(i)...});
    own();
    return data_.get()[o];
  }
  /// Element at a row-major flat position (checked).
  S const& operator[](std::size_t i) const { return data()[check_flat(i)]; }
  /// Element at a row-major flat position, to write (checked).
  S& operator[](std::size_t i) {
    check_flat(i);
    own();
    return data_.get()[i];
  }
  /// The only element of a size-1 tensor.
  S const& item() const {
    if (n_ != 1) detail::throw_shape_error("item", "needs a tensor of exactly one element", shape_);
    return data()[0];
  }

  // ---- structural operations (no arithmetic, no tape entries) --------------------------------

  /// The same elements in a new shape; one extent may be -1 (inferred).
  tensor reshape(std::initializer_list<long> dims) const { return reshape(std::vector<long>(dims)); }
  /// The same elements in a new shape; one extent may be -1 (inferred).
  tensor reshape(std::vector<long> const& dims) const {
    adx::shape sh;
    long infer = -1;
    std::size_t known = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == -1 && infer < 0) {
        infer = static_cast<long>(i);
        sh.push_back(1);
      } else if (dims[i] < 0) {
        detail::throw_shape_error("reshape", "extents must be non-negative (one may be -1)", shape_);
      } else {
        sh.push_back(static_cast<std::size_t>(dims[i]));
        known *= static_cast<std::size_t>(dims[i]);
      }
    }
    if (infer >= 0) {
      if (known == 0 || n_ % known != 0)
        detail::throw_shape_error("reshape", "cannot infer the -1 extent for " + std::to_string(n_) + " elements",
                                  shape_);
      sh[static_cast<std::size_t>(infer)] = n_ / known;
    }
    return reshape(sh);
  }
  /// The same elements in shape sh (the element counts must agree): shares the buffer.
  tensor reshape(adx::shape const& sh) const {
    if (detail::element_count("reshape", sh) != n_)
      detail::throw_shape_error("reshape", "element counts differ", shape_, sh);
    tensor r = *this;  // shares the buffer
    r.shape_ = sh;
    return r;
  }

  /// Axes reordered: result dimension i is this tensor's dimension axes[i].
  tensor permute(std::vector<long> const& axes) const {
    if (axes.size() != rank()) detail::throw_shape_error("permute", "needs one axis per dimension", shape_);
    std::array<std::size_t, adx::shape::max_rank> ax{};
    std::array<bool, adx::shape::max_rank> seen{};
    adx::shape sh;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      ax[i] = detail::normalize_axis("permute", axes[i], shape_);
      if (seen[ax[i]]) detail::throw_shape_error("permute", "an axis is repeated", shape_);
      seen[ax[i]] = true;
      sh.push_back(shape_[ax[i]]);
    }
    auto const st = shape_.strides();
    std::array<std::array<std::size_t, adx::shape::max_rank>, 1> src{};
    for (std::size_t i = 0; i < rank(); ++i) src[0][i] = st[ax[i]];
    tensor r(sh);
    detail::multi_index<1> mi{sh, src};
    S* out = r.data_.get();
    S const* in = data();
    for (std::size_t i = 0; i < r.n_; ++i, mi.next()) out[i] = in[mi.off[0]];
    return r;
  }
  /// Axes reversed (the matrix transpose for rank 2).
  tensor transpose() const {
    std::vector<long> axes(rank());
    for (std::size_t i = 0; i < rank(); ++i) axes[i] = static_cast<long>(rank() - 1 - i);
    return permute(axes);
  }
  /// Two axes swapped.
  tensor transpose(long a, long b) const {
    std::vector<long> axes(rank());
    for (std::size_t i = 0; i < rank(); ++i) axes[i] = static_cast<long>(i);
    std::swap(axes[detail::normalize_axis("transpose", a, shape_)],
              axes[detail::normalize_axis("transpose", b, shape_)]);
    return permute(axes);
  }
  /// Elements begin, begin+step, ... (< end) along one axis; negative begin/end count from the
  /// end, as in Python. A slice whose elements are consecutive here (every extent before the
  /// axis is 1, and the step is 1 or one index is taken) shares this tensor's buffer, in O(1),
  /// as a copy does: a write to either copies it first, so neither sees the other's writes. It
  /// keeps the whole buffer alive. Other slices are copies.
  tensor slice(long axis, long begin, long end, long step = 1) const {
    std::size_t const ax = detail::normalize_axis("slice", axis, shape_);
    long const d = static_cast<long>(shape_[ax]);
    if (step <= 0) detail::throw_shape_error("slice", "step must be positive", shape_);
    if (begin < 0) begin += d;
    if (end < 0) end += d;
    begin = std::clamp(begin, 0L, d);
    end = std::clamp(end, begin, d);
    std::size_t const len = end > begin ? static_cast<std::size_t>((end - begin - 1) / step + 1) : 0;  // no overflow
    adx::shape sh = shape_;
    sh[ax] = len;
    // the result is `outer` runs of len * inner elements (rows of the axes before ax)
    std::size_t inner = 1;
    for (std::size_t i = ax + 1; i < rank(); ++i) inner *= shape_[i];
    if (sh.size() == 0) return tensor(sh);
    std::size_t const outer = sh.size() / (len * inner);
    std::size_t const start = static_cast<std::size_t>(begin) * inner;
    bool const contiguous = outer == 1 && (step == 1 || len == 1);
    detail::slice_walk walk{start, static_cast<std::size_t>(d) * inner, static_cast<std::size_t>(step) * inner, inner,
                            len};
    if constexpr (is_reverse_v<S>)
      if (lazy_) {  // kept as values: a contiguous range stays so (the same block, from an offset:
                    // nothing is allocated); other picks are made alone
        auto const& kept = *lazy_;
        if (contiguous) return tensor(sh, lazy_, lazy_at_ + start);
        return generate(sh, [&](std::size_t) { return kept.element(lazy_at_ + walk.next()); });
      }
    // a contiguous range shares the buffer, as a copy does (copy-on-write: a write to either
    // separates them); other picks are copied
    if (contiguous) return tensor(sh, std::shared_ptr<S>(data_, data_.get() + start));
    S const* const src = data();
    return generate(sh, [&](std::size_t) -> S const& { return src[walk.next()]; });
  }

  /// The element values one nesting level down (tensor<double> for tensor<var<double>>); for
  /// a tensor of plain numbers, a copy.
  auto values() const {
    using V = std::remove_cvref_t<decltype(detail::value_of(std::declval<S const&>()))>;
    if constexpr (is_reverse_v<S>)
      if (lazy_) {  // shared, copy-on-write; values kept inside the block live as long as it
        V* const v = const_cast<V*>(lazy_->values.get()) + lazy_at_;
        if (lazy_->values.use_count() == 0) return tensor<V>(shape_, std::shared_ptr<V>(lazy_, v));
        return tensor<V>(shape_, std::shared_ptr<V>(lazy_->values, v));
      }
    tensor<V> r(shape_);
    V* out = r.data();
    S const* in = data();
    for (std::size_t i = 0; i < n_; ++i) out[i] = detail::value_of(in[i]);
    return r;
  }

  /// True if no other tensor shares this one's elements.
  bool unique() const noexcept { return lazy_ ? lazy_.use_count() == 1 : data_.use_count() == 1; }

 private:
  template <class>
  friend class tensor;
  using lazy_type = detail::var_values_of<S>;

  // (the shape comes from a tensor that exists, or is checked by the caller: element_count)
  tensor(adx::shape const& sh, std::shared_ptr<S> data) : shape_(sh), n_(sh.size()), data_(std::move(data)) {}
  tensor(adx::shape const& sh, std::shared_ptr<lazy_type> lazy, std::size_t at = 0)
      : shape_(sh), n_(sh.size()), lazy_(std::move(lazy)), lazy_at_(at) {}

  template <class U>
  static tensor converted(tensor<U> const& o, source_location where) {
    U const* src = o.data();
    if constexpr (is_reverse_v<S> && level_v<U> < level_v<S>) {
      // numbers become independent variables: one block of consecutive indices on the tape,
      // kept as values (o's own buffer when they are already T) beside the block
      using T = value_type_t<S>;
      auto& tp = tape<T>::current();
      index_type const first = tp.new_variables(o.size(), where);
      epoch_type const ep = tp.epoch();
      if (o.size() == 0) return tensor(o.shape());
      std::shared_ptr<T const> values;
      // (vars one level down are copied, not shared: an adx::parameter's variables change in
      // place on assign() and refresh(), and this block's values, which a recorded product may
      // keep, must not follow them)
      if constexpr (std::is_same_v<U, T> && is_reverse_v<U>)
        values = detail::allocate_generated<T>(o.size(), [&](std::size_t i) { return src[i]; });
      else if constexpr (std::is_same_v<U, T>)
        values = o.data_;
      else
        values = detail::allocate_generated<T>(o.size(), [&](std::size_t i) { return T(src[i]); });
      return tensor(o.shape(), std::make_shared<lazy_type>(std::move(values), o.size(), first, ep));
    } else if constexpr (std::is_constructible_v<S, U const&, source_location const&>) {
      return generate(o.shape(), [&](std::size_t i) { return S(src[i], where); });
    } else {
      return generate(o.shape(), [&](std::size_t i) { return S(src[i]); });
    }
  }

  template <std::size_t D>
  void from_list(typename detail::nested_list<S, D>::type const& l) {
    detail::list_shape<S, D>(l, shape_, 0);
    n_ = shape_.size();
    data_ = detail::allocate<S>(n_);
    S* out = data_.get();
    detail::list_fill<S, D>(l, out);
  }
  /// After a move: shape [0], no elements, no buffer (data() is null; no code reads an element of
  /// an empty tensor; lazy_at_ means nothing without lazy_). Three stores: an expression moves
  /// its leaves' tensors once per level of its tree.
  ADX_ALWAYS_INLINE void become_empty() noexcept {
    shape_.make_vector(0);
    n_ = 0;
  }
  /// Makes the elements this tensor's own, to be written: a block kept as values gets its
  /// elements (and stops being one), a shared buffer is copied.
  void own() {
    if constexpr (is_reverse_v<S>)
      if (lazy_) {
        data_ = std::shared_ptr<S>(lazy_->elements(), lazy_->elements().get() + lazy_at_);
        lazy_.reset();
        lazy_at_ = 0;
      }
    unshare();
  }
  void unshare() {
    if (data_.use_count() > 1) {
      auto fresh = detail::allocate<S>(n_);
      std::copy_n(data_.get(), n_, fresh.get());
      data_ = std::move(fresh);
    }
  }
  template <class E>
  tensor& assign_in_place(char const* op, E const& e) {
    // the shape first: evaluating a result of the wrong shape would record its tape node
    if (e.shape() != shape_)
      detail::throw_shape_error(op, "the result would have the broadcast shape, not the left operand's", shape_,
                                e.shape());
    return *this = tensor(e);
  }
  std::size_t check_flat(std::size_t i) const {
    if (i >= n_) detail::throw_shape_error("operator[]", "flat index " + std::to_string(i) + " out of range", shape_);
    return i;
  }
  std::size_t offset(std::initializer_list<long long> idx) const {
    if (idx.size() != rank())
      detail::throw_shape_error("operator()", std::to_string(idx.size()) + " indices given for", shape_);
    std::size_t o = 0, k = 0;
    for (long long i : idx) {
      if (i < 0 || static_cast<std::size_t>(i) >= shape_[k])
        detail::throw_shape_error(
            "operator()", "index " + std::to_string(i) + " out of range in dimension " + std::to_string(k), shape_);
      o = o * shape_[k] + static_cast<std::size_t>(i);
      ++k;
    }
    return o;
  }

  adx::shape shape_;
  std::size_t n_ = 0;
  std::shared_ptr<S> data_;          // null while the elements are kept as values (lazy_)
  std::shared_ptr<lazy_type> lazy_;  // tensors of vars only: a block kept as values
  std::size_t lazy_at_ = 0;          // this tensor's element 0 is the block's element lazy_at_

  friend struct detail::tensor_access;
};

}  // namespace adx

// What the tensor layer reads of a tensor's internals, and the factories (zeros, ones,
// random_normal, ...), which every includer of tensors expects.
#include "adx/tensor/access.hpp"
#include "adx/tensor/factories.hpp"
