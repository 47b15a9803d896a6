// SPDX-License-Identifier: MIT
// adx: tape nodes. A tensor operation (a matrix product, a fused elementwise expression, a
// user's custom_function) is recorded as one node covering all its output statements; its
// adjoint code runs once when the backward sweep reaches them. tape<T>::node is tape_node<T>.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "adx/reverse/tape_support.hpp"

namespace adx {

/// A tape node: an operation on whole blocks (a matrix product) whose adjoint code runs once
/// when the sweep reaches its outputs, statements first .. first + count - 1.
template <class T>
struct tape_node {
  index_type first = 0;                     ///< its first output statement
  index_type count = 0;                     ///< its number of output statements
  char const* name = "a tensor operation";  ///< for anomaly reports
  virtual ~tape_node() = default;
  /// Adds the contributions of adj[first .. first + count) to the inputs' adjoints.
  virtual void backward(T* adj) const = 0;
  /// Marks the inputs as reached (for the careful sweep).
  virtual void mark_inputs(std::uint8_t* reached) const = 0;
  /// Whether any input is marked (non-zero) in marks (for torch's release: api/release.hpp).
  virtual bool any_input_marked(std::uint8_t const* marks) const = 0;
  /// Whether the backward pass toward the inputs marked in `used` (all of them if null) reads
  /// values of the forward pass (torch's saved tensors): such a node, once released, cannot
  /// be swept again. A node whose partials there are all +1 or -1, or fixed by its shape
  /// alone (mean), does not.
  virtual bool keeps_values(std::uint8_t const* used) const {
    (void)used;
    return true;
  }
  /// Bytes the node holds for its backward pass (for tape_stats).
  virtual std::size_t bytes() const noexcept { return 0; }
  /// Whether a backward pass with every output adjoint zero could still give a non-zero
  /// contribution: a partial or a kept value that is infinite or NaN (0 * inf is NaN), or a
  /// backward pass the node cannot vouch for (a user's vjp). The plain sweep skips a node
  /// whose output adjoints are all zero; torch runs such a node when the sweep reaches it, so
  /// for a node that answers true the sweep is made again with reachability (tape::sweep).
  /// Asked only of a skipped node, so the scan costs nothing on the common path.
  virtual bool nonfinite() const = 0;
  /// The lowest index backward may add to (the sweep stops below every index it wrote).
  virtual index_type lowest_input() const noexcept { return 1; }
};
/// The base of a node whose inputs are listed in one place, Derived::for_inputs(f): it calls
/// f(first, count) for each run of consecutive input indices (count 1 for a lone one; index
/// 0, a constant, may appear) and returns true as soon as f does. mark_inputs and
/// any_input_marked follow from it.
template <class T, class Derived>
struct tape_node_with_inputs : tape_node<T> {
  void mark_inputs(std::uint8_t* reached) const final {
    static_cast<Derived const&>(*this).for_inputs([reached](index_type first, std::size_t count) {
      std::fill_n(reached + first, count, std::uint8_t{1});
      return false;
    });
  }
  bool any_input_marked(std::uint8_t const* marks) const final {
    return static_cast<Derived const&>(*this).for_inputs(
        [marks](index_type first, std::size_t count) { return detail::any_marked(marks, first, count); });
  }
  index_type lowest_input() const noexcept final {
    index_type low = ~index_type{0};
    static_cast<Derived const&>(*this).for_inputs([&low](index_type first, std::size_t) {
      if (first != 0 && first < low) low = first;
      return false;
    });
    return low;
  }
};

namespace detail {

/// Deletes a node: one made by make_node lives in the node memory and is only destroyed;
/// one made with new (std::make_unique) is deleted.
struct node_deleter {
  bool in_node_memory = false;  ///< made by make_node: destroyed in place, not deleted
  node_deleter() = default;
  /// A deleter for a node in the node memory (in_memory) or made with new.
  explicit node_deleter(bool in_memory) noexcept : in_node_memory(in_memory) {}
  /// From std::make_unique's deleter: a node made with new.
  template <class U>
  node_deleter(std::default_delete<U>) noexcept {}  // NOLINT: converts from make_unique's
  /// Destroys (node memory) or deletes (new) the node.
  template <class N>
  void operator()(N* p) const noexcept {
    if (in_node_memory)
      p->~N();
    else
      delete p;
  }
};
/// A node as the tape keeps it: released from its node_ptr, destroyed by drop_nodes.
template <class Node>
struct owned_node {
  Node* p;
  node_deleter deleter;
  Node* operator->() const noexcept { return p; }
  Node& operator*() const noexcept { return *p; }
};
}  // namespace detail

}  // namespace adx
