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
#include <new>
#include <type_traits>

#include "adx/config.hpp"
#include "adx/core/flat_vector.hpp"

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
  /// A chunk's three arrays are one allocation, owned by the arena (~statement_arena).
  struct chunk {
    operand_count* count;  ///< operand count of each statement
    I* idx;                ///< operand indices
    P* val;                ///< operand partials
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
  ~statement_arena() { free_from(0); }

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
  flat_vector<chunk> const& chunks() noexcept {
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
    free_from(1);
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
    count_ = c.count, idx_ = c.idx, val_ = c.val;
    stmt_cap_ = c.stmt_cap, arg_cap_ = c.arg_cap, stmts_ = stmts, args_ = args;
  }
  ADX_NOINLINE void next_chunk(std::size_t n, std::size_t next) {
    sync();
    // an empty current chunk is only too small; otherwise move on to the next one
    if (!chunks_.empty() && stmts_ > 0) ++cur_;
    // reuse a kept chunk that is large enough, else allocate one (sizes double up to a cap)
    while (cur_ < chunks_.size() && chunks_[cur_].arg_cap < n) {
      release(chunks_[cur_]);
      chunks_.erase(chunks_.begin() + cur_);
    }
    if (cur_ == chunks_.size()) {
      std::size_t const prev = chunks_.empty() ? 0 : chunks_.back().arg_cap;
      std::size_t const cap = std::max(n, std::clamp<std::size_t>(2 * prev, first_chunk, max_chunk));
      chunks_.reserve(chunks_.size() + 1);  // first: push_back below cannot throw and leak the chunk
      // one block: partials (the most aligned), indices, counts
      static_assert(alignof(P) >= alignof(I) && alignof(I) >= alignof(operand_count));
      auto* const block =
          static_cast<std::byte*>(::operator new (cap*(sizeof(P) + sizeof(I) + 1), std::align_val_t{alignof(P)}));
      chunk c;
      c.val = reinterpret_cast<P*>(block);
      c.idx = reinterpret_cast<I*>(block + cap * sizeof(P));
      c.count = reinterpret_cast<operand_count*>(block + cap * (sizeof(P) + sizeof(I)));
      c.stmt_cap = c.arg_cap = cap;
      chunks_.push_back(c);
    }
    chunks_[cur_].first = next;
    load(0, 0);
  }

  static void release(chunk const& c) noexcept {
    ::operator delete (static_cast<void*>(c.val), std::align_val_t{alignof(P)});
  }
  /// Frees the chunks from the keep-th on.
  void free_from(std::size_t keep) noexcept {
    for (std::size_t c = keep; c < chunks_.size(); ++c) release(chunks_[c]);
    if (chunks_.size() > keep) chunks_.resize(keep);
  }

  static constexpr std::size_t first_chunk = std::size_t{1} << 12;
  static constexpr std::size_t max_chunk = std::size_t{1} << 22;

  flat_vector<chunk> chunks_;
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
  node_memory() = default;
  node_memory(node_memory const&) = delete;
  node_memory& operator=(node_memory const&) = delete;
  ~node_memory() { clear(); }
  /// Frees every chunk (nothing allocated from them is in use).
  void clear() noexcept {
    for (auto const& c : chunks_) release(c);
    chunks_.clear();
    chunks_.shrink_to_fit();
    cur_ = used_ = 0;
  }
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

  struct chunk {  // owned by the node memory (~node_memory)
    std::byte* data;
    std::size_t size;
  };
  static chunk make_chunk(std::size_t size) {
    return {static_cast<std::byte*>(::operator new (size, std::align_val_t{alignment})), size};
  }
  static void release(chunk const& c) noexcept {
    ::operator delete (static_cast<void*>(c.data), std::align_val_t{alignment});
  }
  /// chunks_[at] = a chunk of `size` bytes, or a new last chunk if at is the end.
  void place_chunk(std::size_t at, std::size_t size) {
    chunks_.reserve(chunks_.size() + 1);  // first: nothing below can throw and leak the chunk
    chunk const c = make_chunk(size);
    if (at == chunks_.size()) {
      chunks_.push_back(c);
    } else {
      release(chunks_[at]);
      chunks_[at] = c;
    }
  }

  void* allocate_bytes(std::size_t bytes) {
    bytes = (bytes + alignment - 1) / alignment * alignment;  // every array starts a cache line
    if (chunks_.empty()) place_chunk(0, std::max(min_chunk, bytes));
    if (used_ + bytes > chunks_[cur_].size) {
      // the next chunk: a kept one if it is large enough (those after cur_ hold nothing)
      std::size_t const want = std::max({min_chunk, bytes, std::min(2 * chunks_[cur_].size, max_chunk)});
      ++cur_;
      if (cur_ == chunks_.size() || chunks_[cur_].size < bytes) place_chunk(cur_, want);
      used_ = 0;
    }
    std::byte* p = chunks_[cur_].data + used_;
    used_ += bytes;
    return p;
  }

  flat_vector<chunk> chunks_;
  std::size_t cur_ = 0, used_ = 0;
};

}  // namespace adx::detail
