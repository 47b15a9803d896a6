// SPDX-License-Identifier: MIT
// adx: what the tensor layer (elementwise nodes, reductions, products, parameters) reads and
// makes of a tensor's internals: its block of variables kept as values, a tensor made from
// such a block, a snapshot that shares nothing.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "adx/tensor/tensor.hpp"

namespace adx {

namespace detail {
struct tensor_access {
  /// The block t is kept as (detail::var_values, from its offset), or none ({}). A tensor with
  /// elements of its own is not taken as a block, whatever its indices.
  template <class S>
  static var_block block(tensor<S> const& t) noexcept {
    if constexpr (is_reverse_v<S>)
      if (t.lazy_) return {t.lazy_->first + static_cast<index_type>(t.lazy_at_), t.lazy_->epoch};
    return {};
  }
  /// A tensor of vars of shape sh that is `block` (from make_var_values, of sh.size() variables).
  template <class S>
  static tensor<S> from_block(shape const& sh, std::shared_ptr<var_values<S>> block) {
    return tensor<S>(sh, std::move(block));
  }
  /// The values of a tensor of vars kept as values (a block), shared; nullopt otherwise.
  template <class S>
  static std::optional<tensor<value_type_t<S>>> block_values(tensor<S> const& t) {
    if constexpr (is_reverse_v<S>)
      if (t.lazy_) return t.values();
    return std::nullopt;
  }
  /// The values of a tensor of vars kept as values (a block); nullptr otherwise.
  template <class S>
  static value_type_t<S> const* kept_values(tensor<S> const& t) noexcept {
    return t.lazy_ ? t.lazy_->values.get() + t.lazy_at_ : nullptr;
  }
  /// t with a block or buffer of its own when it shares one (the same variables, their values
  /// copied), so that a rebind of a shared block, or a parameter's in-place write of shared
  /// elements, does not reach it.
  template <class S>
  static tensor<S> snapshot(tensor<S> t) {
    if (!t.lazy_) {  // elements: a shared buffer (a contiguous slice shares it) is copied
      t.unshare();
      return t;
    }
    using T = value_type_t<S>;
    var_block const b = block(t);
    std::shared_ptr<T> values = allocate<T>(t.n_);
    std::copy_n(t.lazy_->values.get() + t.lazy_at_, t.n_, values.get());
    return tensor<S>(t.shape_, std::make_shared<var_values<S>>(std::move(values), t.n_, b.first, b.epoch));
  }
  /// A tensor of shape sh (row-major) over the buffer `data` of sh.size() elements, shared as
  /// copies of a tensor share theirs (copy-on-write): `data`'s owner keeps the elements alive,
  /// and the tensor writes in place only while nothing else shares the buffer.
  template <class S>
  static tensor<S> from_buffer(shape const& sh, std::shared_ptr<S> data) {
    (void)element_count("tensor", sh);
    return tensor<S>(sh, std::move(data));
  }
  /// A tensor of shape sh (row-major) over the sh.size() elements at p, which it does not own
  /// (memory of another library, such as an Eigen matrix's: adx/eigen.hpp). Nothing is copied.
  /// The buffer counts as shared for good, so any write through this tensor or a tensor sharing
  /// its buffer copies the elements first: adx never writes to p. The memory must stay alive and
  /// unchanged while any tensor sharing the buffer may read it: copies, reshapes, contiguous
  /// slices, a tensor<var<T>> made from it (which keeps it as its values) and a recorded product
  /// that keeps it as an operand.
  template <class S>
  static tensor<S> borrowed(shape const& sh, S const* p) {
    static std::shared_ptr<void> const owner = std::make_shared<char>();  // one more sharer, always
    return from_buffer(sh, std::shared_ptr<S>(owner, const_cast<S*>(p)));
  }
  /// The block t is kept as when t is all of it, to be rebound in place (var_values::rebind,
  /// for every tensor sharing it: adx::parameter); nullptr otherwise.
  template <class S>
  static var_values<S>* whole_block(tensor<S> const& t) noexcept {
    if (t.lazy_ && t.lazy_at_ == 0 && t.lazy_->n == t.size()) return t.lazy_.get();
    return nullptr;
  }
};
}  // namespace detail

}  // namespace adx
