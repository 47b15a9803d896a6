// SPDX-License-Identifier: MIT
// adx: the tape's storage. One chunked arena holds the statements: per statement its operand
// count (1 byte), per operand its index and partial. A statement and its operands always sit in
// the same chunk, so the backward sweep runs one tight loop per chunk with no boundary tests.
// Chunks never move what they hold (no copy on growth, no 2x peak during a reallocation), are
// kept across resets (a reset is O(1) and the next recording allocates nothing) and the arena
// can be rewound to a mark for nested recordings.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "adx/config.hpp"

namespace adx::detail {

/// A statement's operand count. Not a plain uint8_t: stores through an unsigned char alias
/// every object, which would make the compiler reload the tape's state after each statement.
enum class operand_count : std::uint8_t {};
/// An operand's statement index as stored on the tape: a type of its own for the same reason
/// (a uint32_t store could alias the tape's own counters and force reloads).
enum class stored_index : std::uint32_t {};

template <class I, class P>
class statement_arena {
  static_assert(std::is_trivially_destructible_v<I> && std::is_trivially_destructible_v<P>,
                "adx: internal: tape entries must be trivially destructible");

 public:
  struct chunk {
    std::unique_ptr<operand_count[]> count;  ///< operand count of each statement
    std::unique_ptr<I[]> idx;                ///< operand indices
    std::unique_ptr<P[]> val;                ///< operand partials
    std::size_t stmt_cap = 0, arg_cap = 0;
    std::size_t stmts = 0, args = 0;  ///< in use (the current chunk's are synced on demand)
    std::size_t first = 0;            ///< global index of the chunk's first statement
  };
  struct mark {
    std::size_t chunk = 0, stmts = 0, args = 0;
  };

  statement_arena() = default;
  statement_arena(statement_arena const&) = delete;
  statement_arena& operator=(statement_arena const&) = delete;

  /// Makes room for one statement of up to n operands; `first` is the global index the next
  /// statement gets (recorded if a new chunk starts here).
  ADX_ALWAYS_INLINE void reserve(std::size_t n, std::size_t next) {
    if (stmts_ == stmt_cap_ || arg_cap_ - args_ < n) [[unlikely]]
      next_chunk(n, next);
  }
  ADX_ALWAYS_INLINE I* idx_top() noexcept { return idx_ + args_; }
  ADX_ALWAYS_INLINE P* val_top() noexcept { return val_ + args_; }
  /// Ends the statement reserved last, with its n operands written at idx_top()/val_top().
  ADX_ALWAYS_INLINE void commit(std::uint8_t n) noexcept {
    count_[stmts_++] = operand_count{n};
    args_ += n;
  }

  /// Ends a statement with a marker count byte and `entries` entries (operands and header).
  ADX_ALWAYS_INLINE void commit_long(std::size_t entries, std::uint8_t marker) noexcept {
    count_[stmts_++] = operand_count{marker};
    args_ += entries;
  }

  mark position() const noexcept { return {cur_, stmts_, args_}; }
  void rewind(mark m) noexcept {
    sync();
    for (std::size_t c = m.chunk + 1; c < chunks_.size(); ++c) chunks_[c].stmts = chunks_[c].args = 0;
    cur_ = m.chunk;
    load(m.stmts, m.args);
  }

  /// Chunks as they are now (for the sweep), the current chunk's counters brought up to date.
  std::vector<chunk> const& chunks() noexcept {
    sync();
    return chunks_;
  }
  std::size_t current_chunk() const noexcept { return cur_; }

  std::size_t bytes_reserved() const noexcept {
    std::size_t b = 0;
    for (auto const& c : chunks_) b += c.stmt_cap + c.arg_cap * (sizeof(I) + sizeof(P));
    return b;
  }
  std::size_t statements_used() const noexcept {
    std::size_t n = 0;
    for (std::size_t c = 0; c < cur_ && c < chunks_.size(); ++c) n += chunks_[c].stmts;
    return n + stmts_;
  }
  std::size_t operands_used() const noexcept {
    std::size_t n = 0;
    for (std::size_t c = 0; c < cur_ && c < chunks_.size(); ++c) n += chunks_[c].args;
    return n + args_;
  }
  /// Frees every chunk but the first (after a very long recording).
  void shrink() {
    rewind({});
    if (chunks_.size() > 1) chunks_.resize(1);
  }

 private:
  void sync() noexcept {
    if (!chunks_.empty()) chunks_[cur_].stmts = stmts_, chunks_[cur_].args = args_;
  }
  void load(std::size_t stmts, std::size_t args) noexcept {
    if (chunks_.empty()) {
      count_ = nullptr, idx_ = nullptr, val_ = nullptr;
      stmt_cap_ = arg_cap_ = stmts_ = args_ = 0;
      return;
    }
    auto& c = chunks_[cur_];
    count_ = c.count.get(), idx_ = c.idx.get(), val_ = c.val.get();
    stmt_cap_ = c.stmt_cap, arg_cap_ = c.arg_cap, stmts_ = stmts, args_ = args;
  }
  ADX_NOINLINE void next_chunk(std::size_t n, std::size_t next) {
    sync();
    // an empty current chunk is only too small; otherwise move on to the next one
    if (!chunks_.empty() && stmts_ > 0) ++cur_;
    // reuse a kept chunk that is large enough, else allocate one (sizes double up to a cap)
    while (cur_ < chunks_.size() && chunks_[cur_].arg_cap < n)
      chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(cur_));
    if (cur_ == chunks_.size()) {
      std::size_t const prev = chunks_.empty() ? 0 : chunks_.back().arg_cap;
      std::size_t const cap = std::max(n, std::clamp<std::size_t>(2 * prev, first_chunk, max_chunk));
      chunk c;
      c.count = std::make_unique_for_overwrite<operand_count[]>(cap);
      c.idx = std::make_unique_for_overwrite<I[]>(cap);
      c.val = std::make_unique_for_overwrite<P[]>(cap);
      c.stmt_cap = c.arg_cap = cap;
      chunks_.push_back(std::move(c));
    }
    chunks_[cur_].first = next;
    load(0, 0);
  }

  static constexpr std::size_t first_chunk = std::size_t{1} << 12;
  static constexpr std::size_t max_chunk = std::size_t{1} << 22;

  std::vector<chunk> chunks_;
  std::size_t cur_ = 0;
  operand_count* count_ = nullptr;
  I* idx_ = nullptr;
  P* val_ = nullptr;
  std::size_t stmt_cap_ = 0, arg_cap_ = 0, stmts_ = 0, args_ = 0;
};

/// The memory of tape nodes' arrays (a tensor operation's stored indices, partials, operand
/// values): bump-allocated from chunks that, like the statement arena's, are kept across
/// recordings and rewound with them. A node's arrays cost no malloc/free per operation, and a
/// large recording repeated does not give its pages back to the system and fault them in again.
class node_memory {
 public:
  struct mark {
    std::size_t chunk = 0, used = 0;
  };
  mark position() const noexcept { return {cur_, used_}; }
  /// Drops everything allocated after m (the nodes that used it are gone).
  void rewind(mark m) noexcept {
    cur_ = m.chunk;
    used_ = m.used;
  }

  /// Uninitialised room for n objects of type U (trivially destructible: nothing is destroyed).
  template <class U>
  U* allocate(std::size_t n) {
    static_assert(std::is_trivially_destructible_v<U>, "adx: internal: node arrays must be trivially destructible");
    static_assert(alignof(U) <= alignment, "adx: internal: node array over-aligned");
    return static_cast<U*>(allocate_bytes(n * sizeof(U)));
  }

  /// Uninitialised room for one object of `bytes` bytes (alignment at most 64) that its owner
  /// destroys itself before the memory is rewound (a tape node).
  void* allocate_object(std::size_t bytes) { return allocate_bytes(bytes); }

  std::size_t bytes_reserved() const noexcept {
    std::size_t b = 0;
    for (auto const& c : chunks_) b += c.size;
    return b;
  }

 private:
  static constexpr std::size_t alignment = 64;
  static constexpr std::size_t min_chunk = std::size_t{1} << 16;
  static constexpr std::size_t max_chunk = std::size_t{1} << 24;

  struct aligned_free {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{alignment}); }
  };
  struct chunk {
    std::unique_ptr<std::byte[], aligned_free> data;
    std::size_t size = 0;
  };
  static chunk make_chunk(std::size_t size) {
    return {std::unique_ptr<std::byte[], aligned_free>(
                static_cast<std::byte*>(::operator new[](size, std::align_val_t{alignment}))),
            size};
  }

  void* allocate_bytes(std::size_t bytes) {
    bytes = (bytes + alignment - 1) / alignment * alignment;  // every array starts a cache line
    if (chunks_.empty()) chunks_.push_back(make_chunk(std::max(min_chunk, bytes)));
    if (used_ + bytes > chunks_[cur_].size) {
      // the next chunk: a kept one if it is large enough (those after cur_ hold nothing)
      std::size_t const want = std::max({min_chunk, bytes, std::min(2 * chunks_[cur_].size, max_chunk)});
      ++cur_;
      if (cur_ == chunks_.size())
        chunks_.push_back(make_chunk(want));
      else if (chunks_[cur_].size < bytes)
        chunks_[cur_] = make_chunk(want);
      used_ = 0;
    }
    std::byte* p = chunks_[cur_].data.get() + used_;
    used_ += bytes;
    return p;
  }

  std::vector<chunk> chunks_;
  std::size_t cur_ = 0, used_ = 0;
};

}  // namespace adx::detail
