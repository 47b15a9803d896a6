// SPDX-License-Identifier: MIT
// adx: the operands of an expression node, stored by value. A std::tuple would do the same job,
// but every node type instantiates a tuple's whole class hierarchy and each std::get and
// std::apply a chain of helpers; with thousands of node types in a program (every rule, at every
// nesting level, in every combination of operands) that was about a quarter of the functions the
// compiler emitted for a test file. Here an operand is one base class, reaching it is one cast and
// applying a function to all of them is one pack expansion.
#pragma once

#include <cstddef>
#include <utility>

#include "adx/config.hpp"

namespace adx::detail {

template <std::size_t I, class T>
struct pack_slot {
  T item;
};

/// Tag: construct each operand from the prvalue a function returns (no move in between).
struct from_makers_t {
  explicit from_makers_t() = default;
};
inline constexpr from_makers_t from_makers{};

template <class Seq, class... T>
struct pack_storage;

template <std::size_t... I, class... T>
struct pack_storage<std::index_sequence<I...>, T...> : pack_slot<I, T>... {
  /// Tagged, so that it never competes with copy and move construction.
  template <class... A>
  constexpr explicit pack_storage(std::in_place_t, A&&... a) : pack_slot<I, T>{std::forward<A>(a)}... {}
  /// Operand I is made in place from make_I(): an operand that a function builds (a
  /// sub-expression, a leaf) is never moved.
  template <class... M>
  constexpr explicit pack_storage(from_makers_t, M&&... make) : pack_slot<I, T>{std::forward<M>(make)()}... {}

  /// f(operand 0, operand 1, ...).
  template <class F>
  ADX_ALWAYS_INLINE constexpr decltype(auto) apply(F&& f) const {
    return std::forward<F>(f)(static_cast<pack_slot<I, T> const&>(*this).item...);
  }
  template <class F>
  ADX_ALWAYS_INLINE constexpr decltype(auto) apply(F&& f) {
    return std::forward<F>(f)(static_cast<pack_slot<I, T>&>(*this).item...);
  }
};

/// Operands Ts... by value: `pack_get<I>(p)` reads one, `p.apply(f)` passes all of them to f.
template <class... T>
using operand_pack = pack_storage<std::index_sequence_for<T...>, T...>;

/// Operand I (found by deducing the one base pack_slot<I, T>).
template <std::size_t I, class T>
constexpr T const& pack_get(pack_slot<I, T> const& s) noexcept {
  return s.item;
}

}  // namespace adx::detail
