// adx: the tape's storage. A chunked arena never moves what it holds (no copy on growth, no
// 2x peak during a reallocation), keeps its chunks across resets (a reset is O(1) and the
// next recording allocates nothing) and can be rewound to a mark for nested recordings.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "adx/config.hpp"

namespace adx::detail {

/// Two parallel arrays in one chunked arena: the operand indices and partials of statements.
/// A statement's operands never straddle two chunks.
template <class I, class P>
class pair_arena {
  static_assert(std::is_trivially_copyable_v<I> && std::is_trivially_copyable_v<P>,
                "adx: internal: tape entries must be trivially copyable");

 public:
  struct chunk {
    std::unique_ptr<I[]> idx;
    std::unique_ptr<P[]> val;
    std::size_t cap = 0;
    std::size_t used = 0;
  };
  struct mark {
    std::size_t chunk = 0, used = 0;
  };

  pair_arena() = default;
  pair_arena(pair_arena const&) = delete;
  pair_arena& operator=(pair_arena const&) = delete;

  /// Makes room for n entries in the current chunk (moving to a fresh chunk if needed).
  ADX_ALWAYS_INLINE void reserve(std::size_t n) {
    if (cap_ - used_ < n) [[unlikely]]
      next_chunk(n);
  }
  ADX_ALWAYS_INLINE I* idx_top() noexcept { return idx_ + used_; }
  ADX_ALWAYS_INLINE P* val_top() noexcept { return val_ + used_; }
  ADX_ALWAYS_INLINE void commit(std::size_t n) noexcept { used_ += n; }

  mark position() const noexcept { return {cur_, used_}; }
  void rewind(mark m) noexcept {
    sync();
    for (std::size_t c = m.chunk + 1; c < chunks_.size(); ++c) chunks_[c].used = 0;
    cur_ = m.chunk;
    load(m.used);
  }

  /// Chunks as they are now (for the sweep); the current chunk's `used` is brought up to date.
  std::vector<chunk> const& chunks() noexcept {
    sync();
    return chunks_;
  }
  std::size_t current_chunk() const noexcept { return cur_; }

  /// Bytes held (capacity) and bytes in use.
  std::size_t bytes_reserved() const noexcept {
    std::size_t b = 0;
    for (auto const& c : chunks_) b += c.cap * (sizeof(I) + sizeof(P));
    return b;
  }
  std::size_t entries_used() const noexcept {
    std::size_t n = 0;
    for (std::size_t c = 0; c < cur_ && c < chunks_.size(); ++c) n += chunks_[c].used;
    return n + used_;
  }
  /// Frees every chunk but the first (after a very long recording).
  void shrink() {
    rewind({});
    if (chunks_.size() > 1) chunks_.resize(1);
  }

 private:
  void sync() noexcept {
    if (!chunks_.empty()) chunks_[cur_].used = used_;
  }
  void load(std::size_t used) noexcept {
    if (chunks_.empty()) {
      idx_ = nullptr, val_ = nullptr, cap_ = 0, used_ = 0;
      return;
    }
    auto& c = chunks_[cur_];
    idx_ = c.idx.get(), val_ = c.val.get(), cap_ = c.cap, used_ = used;
  }
  ADX_NOINLINE void next_chunk(std::size_t n) {
    sync();
    if (!chunks_.empty()) ++cur_;
    // reuse a kept chunk that is large enough, else allocate one (sizes double up to a cap)
    while (cur_ < chunks_.size() && chunks_[cur_].cap < n)
      chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(cur_));
    if (cur_ == chunks_.size()) {
      std::size_t const prev = chunks_.empty() ? 0 : chunks_.back().cap;
      std::size_t const cap = std::max(n, std::clamp<std::size_t>(2 * prev, first_chunk, max_chunk));
      chunk c;
      c.idx = std::make_unique_for_overwrite<I[]>(cap);
      c.val = std::make_unique_for_overwrite<P[]>(cap);
      c.cap = cap;
      chunks_.push_back(std::move(c));
    }
    chunks_[cur_].used = 0;
    load(0);
  }

  static constexpr std::size_t first_chunk = std::size_t{1} << 12;
  static constexpr std::size_t max_chunk = std::size_t{1} << 22;

  std::vector<chunk> chunks_;
  std::size_t cur_ = 0;
  I* idx_ = nullptr;
  P* val_ = nullptr;
  std::size_t cap_ = 0, used_ = 0;
};

/// One chunked array of bytes: the operand count of each statement.
class count_arena {
 public:
  struct mark {
    std::size_t chunk = 0, used = 0;
  };
  ADX_ALWAYS_INLINE void push(std::uint8_t n) {
    if (used_ == cap_) [[unlikely]]
      next_chunk();
    data_[used_++] = n;
  }
  mark position() const noexcept { return {cur_, used_}; }
  void rewind(mark m) noexcept {
    sync();
    for (std::size_t c = m.chunk + 1; c < chunks_.size(); ++c) chunks_[c].used = 0;
    cur_ = m.chunk;
    load(m.used);
  }
  struct chunk {
    std::unique_ptr<std::uint8_t[]> data;
    std::size_t cap = 0, used = 0;
  };
  std::vector<chunk> const& chunks() noexcept {
    sync();
    return chunks_;
  }
  std::size_t current_chunk() const noexcept { return cur_; }
  std::size_t bytes_reserved() const noexcept {
    std::size_t b = 0;
    for (auto const& c : chunks_) b += c.cap;
    return b;
  }
  void shrink() {
    rewind({});
    if (chunks_.size() > 1) chunks_.resize(1);
  }

 private:
  void sync() noexcept {
    if (!chunks_.empty()) chunks_[cur_].used = used_;
  }
  void load(std::size_t used) noexcept {
    if (chunks_.empty()) {
      data_ = nullptr, cap_ = 0, used_ = 0;
      return;
    }
    data_ = chunks_[cur_].data.get(), cap_ = chunks_[cur_].cap, used_ = used;
  }
  ADX_NOINLINE void next_chunk() {
    sync();
    if (!chunks_.empty()) ++cur_;
    if (cur_ == chunks_.size()) {
      std::size_t const prev = chunks_.empty() ? 0 : chunks_.back().cap;
      std::size_t const cap = std::clamp<std::size_t>(2 * prev, std::size_t{1} << 12, std::size_t{1} << 22);
      chunks_.push_back({std::make_unique_for_overwrite<std::uint8_t[]>(cap), cap, 0});
    }
    chunks_[cur_].used = 0;
    load(0);
  }

  std::vector<chunk> chunks_;
  std::size_t cur_ = 0;
  std::uint8_t* data_ = nullptr;
  std::size_t cap_ = 0, used_ = 0;
};

}  // namespace adx::detail
