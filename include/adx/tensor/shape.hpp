// SPDX-License-Identifier: MIT
// adx: tensor shapes, numpy broadcasting and the shape errors. A shape is a short list of
// extents (rank 0 to max_rank); a rank-0 shape is a scalar holding one element.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <sstream>
#include <string>

#include "adx/core/error.hpp"

namespace adx {

/// An operation was given tensors whose shapes do not fit, a bad axis or a bad reshape.
/// The message names the operation and the shapes.
class shape_error : public error {
 public:
  using error::error;
};

/// A tensor's extents, rank 0 to max_rank, printed as numpy prints them: [2, 3].
///
///     shape s{2, 3};   // s.rank() == 2, s.size() == 6, s[1] == 3
class shape {
 public:
  static constexpr std::size_t max_rank = 8;  ///< the most dimensions a tensor has

  /// Rank 0 (a scalar's shape: one element).
  constexpr shape() = default;
  /// The given extents; shape_error beyond max_rank dimensions.
  shape(std::initializer_list<std::size_t> dims) {
    if (dims.size() > max_rank) throw shape_error("adx: a tensor has at most 8 dimensions");
    rank_ = dims.size();
    std::copy(dims.begin(), dims.end(), dims_.begin());
  }
  /// Becomes the rank-1 shape [n] (two stores: the extents past the rank are never read).
  constexpr void make_vector(std::size_t n) noexcept {
    dims_[0] = n;
    rank_ = 1;
  }
  /// The extents in [first, last) (any integers); shape_error beyond max_rank.
  template <class It>
  static shape from(It first, It last) {
    shape s;
    for (; first != last; ++first) s.push_back(static_cast<std::size_t>(*first));
    return s;
  }

  /// The number of dimensions.
  constexpr std::size_t rank() const noexcept { return rank_; }
  /// Extent i (i < rank(), unchecked).
  constexpr std::size_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  /// Extent i, to set (i < rank(), unchecked).
  constexpr std::size_t& operator[](std::size_t i) noexcept { return dims_[i]; }
  /// The extents, first to last.
  constexpr std::size_t const* begin() const noexcept { return dims_.data(); }
  /// The end of the extents.
  constexpr std::size_t const* end() const noexcept { return dims_.data() + rank_; }
  /// The last extent (rank() > 0).
  constexpr std::size_t back() const noexcept { return dims_[rank_ - 1]; }

  /// Number of elements (1 for rank 0).
  constexpr std::size_t size() const noexcept {
    std::size_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  /// Appends an extent; shape_error beyond max_rank.
  void push_back(std::size_t d) {
    if (rank_ == max_rank) throw shape_error("adx: a tensor has at most 8 dimensions");
    dims_[rank_++] = d;
  }
  /// Removes dimension `axis` (< rank(), unchecked).
  void erase(std::size_t axis) {
    for (std::size_t i = axis; i + 1 < rank_; ++i) dims_[i] = dims_[i + 1];
    --rank_;
  }

  /// Same rank and extents.
  friend constexpr bool operator==(shape const& a, shape const& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (std::size_t i = 0; i < a.rank_; ++i)  // a few extents: a loop, not a call to memcmp
      if (a.dims_[i] != b.dims_[i]) return false;
    return true;
  }

  /// "[2, 3]".
  std::string str() const {
    std::ostringstream os;
    os << *this;
    return os.str();
  }
  /// Prints "[2, 3]".
  friend std::ostream& operator<<(std::ostream& os, shape const& s) {
    os << '[';
    for (std::size_t i = 0; i < s.rank_; ++i) os << (i ? ", " : "") << s.dims_[i];
    return os << ']';
  }

  /// Row-major strides (in elements).
  std::array<std::size_t, max_rank> strides() const noexcept {
    std::array<std::size_t, max_rank> st{};
    std::size_t s = 1;
    for (std::size_t i = rank_; i-- > 0;) {
      st[i] = s;
      s *= dims_[i];
    }
    return st;
  }

 private:
  std::array<std::size_t, max_rank> dims_{};
  std::size_t rank_ = 0;
};

namespace detail {

/// "adx: <op>: <message> (shapes [2, 3] and [4])"
template <class... S>
[[noreturn]] void throw_shape_error(char const* op, std::string const& what, S const&... shapes) {
  std::ostringstream os;
  os << "adx: " << op << ": " << what;
  if constexpr (sizeof...(S) > 0) {
    os << " (shape" << (sizeof...(S) > 1 ? "s " : " ");
    std::size_t k = 0;
    ((os << (k++ ? " and " : "") << shapes), ...);
    os << ')';
  }
  throw shape_error(os.str());
}

/// sh's element count, checked: a count that std::ptrdiff_t cannot hold (the extents' product
/// taken step by step, so that it never wraps around; any zero extent makes it 0) throws
/// shape_error naming `op`. The shapes a caller gives (tensor's public constructors, generate,
/// reshape) go through it, and so do the shapes an operation makes from its operands' (a
/// broadcast, a product) before anything is allocated.
inline std::size_t element_count(char const* op, shape const& sh) {
  std::size_t n = 1;
  bool zero = false, wrapped = false;
  for (std::size_t d : sh) {  // no division: this runs for every tensor made
    zero |= d == 0;
#if defined(__GNUC__) || defined(__clang__)
    wrapped |= __builtin_mul_overflow(n, d, &n);
#else
    wrapped |= d != 0 && n > SIZE_MAX / d;
    n *= d;
#endif
  }
  if (zero) return 0;
  if (wrapped || n > static_cast<std::size_t>(PTRDIFF_MAX))
    throw_shape_error(op, "more elements than an address space holds", sh);
  return n;
}

/// Resolves a possibly negative axis against a rank; throws naming the operation if out of range.
inline std::size_t normalize_axis(char const* op, long axis, shape const& s) {
  long const r = static_cast<long>(s.rank());
  if (axis < -r || axis >= r)
    throw_shape_error(op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r), s);
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

}  // namespace detail

/// The numpy broadcast of two shapes (trailing dimensions aligned, 1 stretches); throws
/// shape_error naming `op` and both shapes when they are incompatible.
inline shape broadcast_shapes(shape const& a, shape const& b, char const* op = "broadcast") {
  if (a == b || b.rank() == 0) return a;  // the common cases, first
  if (a.rank() == 0) return b;
  std::size_t const r = std::max(a.rank(), b.rank());
  shape out;
  for (std::size_t i = 0; i < r; ++i) {
    std::size_t const da = i + a.rank() >= r ? a[i + a.rank() - r] : 1;
    std::size_t const db = i + b.rank() >= r ? b[i + b.rank() - r] : 1;
    if (da != db && da != 1 && db != 1) detail::throw_shape_error(op, "shapes cannot be broadcast together", a, b);
    out.push_back(da == 1 ? db : da);
  }
  (void)detail::element_count(op, out);  // [n, 1] and [1, m] can name more elements than exist
  return out;
}

namespace detail {

/// Strides for reading a tensor of shape `from` as if it had the (broadcast) shape `to`:
/// stretched dimensions get stride 0.
inline std::array<std::size_t, shape::max_rank> broadcast_strides(shape const& from, shape const& to) {
  std::array<std::size_t, shape::max_rank> st{};
  auto const own = from.strides();
  std::size_t const off = to.rank() - from.rank();
  for (std::size_t i = 0; i < from.rank(); ++i) st[i + off] = from[i] == 1 ? 0 : own[i];
  return st;
}

/// Walks the elements of a shape in row-major order, keeping per-operand offsets for a set of
/// stride arrays (one per operand): the general broadcasting loop.
template <std::size_t K>
struct multi_index {
  shape const& sh;
  std::array<std::array<std::size_t, shape::max_rank>, K> const& strides;
  std::array<std::size_t, shape::max_rank> idx{};
  std::array<std::size_t, K> off{};

  void next() noexcept {
    for (std::size_t d = sh.rank(); d-- > 0;) {
      for (std::size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (++idx[d] < sh[d]) return;
      for (std::size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * sh[d];
      idx[d] = 0;
    }
  }
};

}  // namespace detail
}  // namespace adx
