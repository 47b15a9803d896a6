// SPDX-License-Identifier: MIT
// adx: a growable array of trivially copyable elements, for the tape's bookkeeping (adjoints,
// seeds, marks, frames, chunk lists). It does what std::vector does for such elements with a
// fraction of the code: growth is one function shared by every element type (realloc keeps the
// elements), and each member is a line or two. std::vector instantiates a chain of helpers per
// element type and operation (reallocating and filling inserts, default appends, relocation),
// and every translation unit that takes a gradient compiles the tape's share of them again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace adx::detail {

/// Grows the malloc'd block p of cap elements of `size` bytes to hold at least need of them,
/// keeping its contents (realloc: the elements are trivially copyable). Returns the new block;
/// cap becomes its capacity. One function for every element type.
inline void* grow_flat(void* p, std::size_t& cap, std::size_t need, std::size_t size) {
  std::size_t n = std::max({need, 2 * cap, std::size_t{64} / size + 1});
  if (n > static_cast<std::size_t>(-1) / size) throw std::bad_alloc();
  void* q = std::realloc(p, n * size);
  if (!q) throw std::bad_alloc();
  cap = n;
  return q;
}

/// std::vector's interface, as far as the tape uses it, for trivially copyable T.
template <class T>
class flat_vector {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::max_align_t),
                "adx: internal: flat_vector holds trivially copyable, normally aligned elements");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = T const*;

  flat_vector() = default;
  flat_vector(flat_vector const& o) { *this = o; }
  flat_vector(flat_vector&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr, o.n_ = o.cap_ = 0; }
  flat_vector& operator=(flat_vector const& o) {
    if (this != &o) {
      n_ = 0;
      reserve(o.n_);
      if (o.n_) std::memcpy(static_cast<void*>(p_), o.p_, o.n_ * sizeof(T));
      n_ = o.n_;
    }
    return *this;
  }
  flat_vector& operator=(flat_vector&& o) noexcept {
    swap(o);
    return *this;
  }
  ~flat_vector() { std::free(p_); }
  void swap(flat_vector& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
  }
  friend void swap(flat_vector& a, flat_vector& b) noexcept { a.swap(b); }

  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  std::size_t capacity() const noexcept { return cap_; }
  T* data() noexcept { return p_; }
  T const* data() const noexcept { return p_; }
  T& operator[](std::size_t i) noexcept { return p_[i]; }
  T const& operator[](std::size_t i) const noexcept { return p_[i]; }
  T* begin() noexcept { return p_; }
  T* end() noexcept { return p_ + n_; }
  T const* begin() const noexcept { return p_; }
  T const* end() const noexcept { return p_ + n_; }
  T& front() noexcept { return p_[0]; }
  T const& front() const noexcept { return p_[0]; }
  T& back() noexcept { return p_[n_ - 1]; }
  T const& back() const noexcept { return p_[n_ - 1]; }

  void reserve(std::size_t n) {
    if (n > cap_) p_ = static_cast<T*>(grow_flat(p_, cap_, n, sizeof(T)));
  }
  void push_back(T const& v) {
    if (n_ == cap_) {
      T const copy = v;  // v may be an element
      reserve(n_ + 1);
      p_[n_++] = copy;
    } else {
      p_[n_++] = v;
    }
  }
  void pop_back() noexcept { --n_; }
  void clear() noexcept { n_ = 0; }
  /// New elements are value-initialised (zero for numbers).
  void resize(std::size_t n) { resize(n, T{}); }
  void resize(std::size_t n, T const& v) {
    if (n > n_) {
      T const copy = v;
      reserve(n);
      std::fill(p_ + n_, p_ + n, copy);
    }
    n_ = n;
  }
  void assign(std::size_t n, T const& v) {
    T const copy = v;
    n_ = 0;
    reserve(n);
    std::fill(p_, p_ + n, copy);
    n_ = n;
  }
  /// Removes the element at pos, moving those after it down.
  T* erase(T* pos) noexcept {
    std::memmove(static_cast<void*>(pos), pos + 1, static_cast<std::size_t>(end() - pos - 1) * sizeof(T));
    --n_;
    return pos;
  }
  void shrink_to_fit() {
    if (n_ == 0) {
      std::free(p_);
      p_ = nullptr;
      cap_ = 0;
    }
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
};

}  // namespace adx::detail
