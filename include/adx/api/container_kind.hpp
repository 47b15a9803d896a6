// SPDX-License-Identifier: MIT
// adx: how the API layer sees an argument or a result: a scalar, a std::vector or a tensor of
// elements. One trait for every API (the function transforms' inputs and outputs, the gradient
// APIs' outputs and inputs, custom_function's arguments, MindSpore's arguments): its element
// type, its shape and size, element i, and the same container of another element type.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "adx/tensor/shape.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx::detail {

/// A scalar: one element, shape [].
template <class X>
struct container_kind {
  using element = X;
  /// The same container with elements of type E.
  template <class E>
  using with = E;
  static constexpr bool is_tensor = false;
  static shape shape_of(X const&) { return {}; }
  static std::size_t size(X const&) { return 1; }
  static X const& at(X const& x, std::size_t) { return x; }
  /// The same container with element g(i, x_i) of type E.
  template <class E, class G>
  static E map(X const& x, G&& g) {
    return g(std::size_t{0}, x);
  }
};
/// A std::vector: shape [n].
template <class X, class A>
struct container_kind<std::vector<X, A>> {
  using element = X;
  template <class E>
  using with = std::vector<E>;
  static constexpr bool is_tensor = false;
  static shape shape_of(std::vector<X, A> const& x) { return shape{x.size()}; }
  static std::size_t size(std::vector<X, A> const& x) { return x.size(); }
  static X const& at(std::vector<X, A> const& x, std::size_t i) { return x[i]; }
  template <class E, class G>
  static std::vector<E> map(std::vector<X, A> const& x, G&& g) {
    std::vector<E> r;
    r.reserve(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) r.push_back(g(i, x[i]));
    return r;
  }
};
/// A tensor: its own shape, elements in row-major order.
template <class X>
struct container_kind<tensor<X>> {
  using element = X;
  template <class E>
  using with = tensor<E>;
  static constexpr bool is_tensor = true;
  static shape shape_of(tensor<X> const& x) { return x.shape(); }
  static std::size_t size(tensor<X> const& x) { return x.size(); }
  static X const& at(tensor<X> const& x, std::size_t i) { return x.data()[i]; }
  template <class E, class G>
  static tensor<E> map(tensor<X> const& x, G&& g) {
    tensor<E> r(x.shape());
    E* o = r.data();
    for (std::size_t i = 0; i < x.size(); ++i) o[i] = g(i, x.data()[i]);
    return r;
  }
};

template <class X>
using kind_of = container_kind<std::remove_cvref_t<X>>;
template <class X>
using element_of = typename kind_of<X>::element;

}  // namespace adx::detail
