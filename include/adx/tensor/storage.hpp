// SPDX-License-Identifier: MIT
// adx: a tensor's storage: 64-byte aligned buffers made in one allocation with their holder,
// and a block of variables kept as its values (var_values) until code asks for its elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/core/expr.hpp"
#include "adx/reverse/tape.hpp"

namespace adx {
template <class S>
class tensor;
}  // namespace adx

namespace adx::detail {

/// For allocate_shared: allocates what it is asked for (the control block with the object in
/// it) and `extra` bytes after it, 64-byte aligned (as every tensor buffer), in the same
/// allocation; *where is set to those bytes. It asks plain operator new for 63 bytes more and
/// aligns within them: an over-aligned operator new would bypass malloc's per-thread cache,
/// which small tensors' recordings feel.
template <class U>
struct trailing_allocator {
  using value_type = U;
  std::size_t extra;
  void** where;
  trailing_allocator(std::size_t x, void** w) noexcept : extra(x), where(w) {}
  template <class V>
  trailing_allocator(trailing_allocator<V> const& o) noexcept : extra(o.extra), where(o.where) {}
  U* allocate(std::size_t k) {
    static_assert(alignof(U) <= alignof(std::max_align_t));
    char* const p = static_cast<char*>(::operator new(k * sizeof(U) + extra + 63));
    auto const end = reinterpret_cast<std::uintptr_t>(p + k * sizeof(U));
    *where = p + (k * sizeof(U) + ((64 - end % 64) % 64));
    return reinterpret_cast<U*>(p);
  }
  void deallocate(U* p, std::size_t) noexcept { ::operator delete(static_cast<void*>(p)); }
  template <class V>
  bool operator==(trailing_allocator<V> const& o) const noexcept {
    return extra == o.extra;
  }
};

/// A shared H made from args with room for n E after it, 64-byte aligned, in the same
/// allocation: the object and where the room starts.
template <class H, class E, class... A>
std::pair<std::shared_ptr<H>, E*> make_shared_with_room(std::size_t n, A&&... args) {
  static_assert(alignof(E) <= 64, "adx: a tensor element type aligned beyond a cache line");
  if (n > static_cast<std::size_t>(PTRDIFF_MAX) / sizeof(E)) throw std::bad_alloc();  // n * sizeof(E) would wrap
  void* where = nullptr;
  auto h = std::allocate_shared<H>(trailing_allocator<H>(n * sizeof(E), &where), std::forward<A>(args)...);
  return {std::move(h), static_cast<E*>(where)};
}

/// The n elements of a tensor buffer, destroyed with it: the object allocate_shared makes, with
/// the elements after it in the same allocation (trailing_allocator).
template <class S>
struct buffer_holder {
  S* p = nullptr;
  std::size_t n = 0;  ///< how many are made
  buffer_holder() = default;
  buffer_holder(buffer_holder const&) = delete;
  buffer_holder& operator=(buffer_holder const&) = delete;
  ~buffer_holder() { std::destroy_n(p, n); }
};
/// Room for n S, 64-byte aligned, and the holder that will destroy the ones made: one
/// allocation.
template <class S>
std::shared_ptr<buffer_holder<S>> make_buffer(std::size_t n) {
  auto made = make_shared_with_room<buffer_holder<S>, S>(n);
  made.first->p = made.second;
  return std::move(made.first);
}

/// n default-initialised S (value-initialised for class types) in a 64-byte aligned buffer.
template <class S>
std::shared_ptr<S> allocate(std::size_t n) {
  auto h = make_buffer<S>(n);
  S* const p = h->p;
  std::uninitialized_value_construct_n(p, n);
  h->n = n;
  return std::shared_ptr<S>(std::move(h), p);
}

/// n S made in place by f(i), in a 64-byte aligned buffer: nothing is initialised twice. (If
/// f throws, the ones made are destroyed with the buffer.)
template <class S, class F>
std::shared_ptr<S> allocate_generated(std::size_t n, F&& f) {
  auto h = make_buffer<S>(n);
  S* const p = h->p;
  for (buffer_holder<S>& b = *h; b.n < n; ++b.n) ::new (static_cast<void*>(p + b.n)) S(f(b.n));
  return std::shared_ptr<S>(std::move(h), p);
}

/// The elements of a tensor<S> of vars (S = var<T>) that is one block of variables, kept as what
/// they are made of: the values T[n], contiguous, and the block's first index and epoch (element
/// i is variable first + i). A product takes the values as its GEMM operand and sends its
/// adjoints to first + i, and a gradient is read as one copy, so neither looks at elements.
/// Code that walks the elements gets them made on its first request, once (thread-safe), for
/// every copy of the tensor. Nothing writes into the values (a tensor that is written to owns
/// its elements instead), so they and the elements always agree.
template <class S>
struct var_values {
  using T = value_type_t<S>;
  std::shared_ptr<T const> values;  ///< may be shared with a tensor<T>
  std::size_t n = 0;
  index_type first = 0;
  epoch_type epoch = 0;

  var_values(std::shared_ptr<T const> v, std::size_t count, index_type f, epoch_type e)
      : values(std::move(v)), n(count), first(f), epoch(e) {}

  /// Element k: variable first + k, holding values[k].
  S element(std::size_t k) const noexcept {
    return S::recorded_active(values.get()[k], first + static_cast<index_type>(k), epoch);
  }
  std::shared_ptr<S> const& elements() const {
    std::call_once(made_,
                   [this] { elements_ = allocate_generated<S>(n, [this](std::size_t k) { return element(k); }); });
    return elements_;
  }

  /// New values (`v`, n of them; null keeps the values), first index and epoch for every
  /// tensor sharing this block: adx::parameter's assign() and refresh(), which change a leaf in
  /// place. Values shared outside the block (a product's kept operand, a tensor<T> from
  /// values()) keep what they hold: the block takes new ones then. Elements already made are
  /// rewritten in place, so pointers to them see the change too. (Not thread-safe: a write.)
  void rebind(T const* v, index_type f, epoch_type e) {
    if (v) {
      if (values.use_count() == 1) {  // the block's own buffer, seen by nothing else
        std::copy_n(v, n, const_cast<T*>(values.get()));
      } else {
        std::shared_ptr<T> fresh = allocate<T>(n);
        std::copy_n(v, n, fresh.get());
        values = std::move(fresh);
      }
    }
    first = f;
    epoch = e;
    if (elements_)
      for (std::size_t k = 0; k < n; ++k) elements_.get()[k] = element(k);
  }
  /// Lets f rewrite the n values in place (an optimiser's step), the same variables: values
  /// shared outside the block keep what they hold (the block takes a copy first), and elements
  /// already made are rewritten. (Not thread-safe: a write.)
  template <class F>
  void update(F&& f) {
    if (values.use_count() != 1) {
      std::shared_ptr<T> fresh = allocate<T>(n);
      std::copy_n(values.get(), n, fresh.get());
      values = std::move(fresh);
    }
    f(const_cast<T*>(values.get()));
    if (elements_)
      for (std::size_t k = 0; k < n; ++k) elements_.get()[k] = element(k);
  }

 private:
  mutable std::once_flag made_;
  mutable std::shared_ptr<S> elements_;
};
struct no_var_values {};

/// A block of n variables kept as values whose values live in the block's own allocation
/// (one allocation per node output instead of two): returns the block and where to write
/// its values. (var_values::values then owns nothing: tensor::values() shares the block.)
template <class S>
std::pair<std::shared_ptr<var_values<S>>, value_type_t<S>*> make_var_values(std::size_t n, index_type first,
                                                                            epoch_type epoch) {
  using T = value_type_t<S>;
  static_assert(std::is_trivially_destructible_v<T>);
  auto made = make_shared_with_room<var_values<S>, T>(n, std::shared_ptr<T const>{}, n, first, epoch);
  made.first->values = std::shared_ptr<T const>(std::shared_ptr<T const>{}, made.second);  // not owning
  return made;
}

}  // namespace adx::detail
