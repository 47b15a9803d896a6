// SPDX-License-Identifier: MIT
// adx: Eigen interop, optional: this header needs Eigen 3.3 or later (<Eigen/Core>) on the include
// path, and adx/adx.hpp does not include it. Include it with Eigen, before or after Eigen's own
// headers, and before Eigen's matrices of adx scalars are used.
//
// - Eigen::NumTraits and Eigen::ScalarBinaryOpTraits for dual<T> and var<T> at every nesting:
//   Eigen's matrices, products, reductions and decompositions (LLT, LDLT, PartialPivLU,
//   HouseholderQR, ...) run over adx scalars, and mix with matrices and scalars of the types
//   below them (var<double> with double). Every scalar operation Eigen does is an adx operation:
//   for var, one tape statement each. That is correct and slow; adx's tensor operations record
//   one tape node per matrix operation.
// - Zero-copy views between tensor<S> and Eigen's dense matrices: eigen_map (a tensor's elements
//   as an Eigen::Map), eigen_map_values (the values of a tensor of vars kept as a block), and
//   as_tensor / tensor_view (a tensor over an Eigen matrix's memory).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "adx/core/error.hpp"
#include "adx/forward.hpp"
#include "adx/reverse.hpp"
#include "adx/tensor.hpp"

namespace adx {

namespace detail {

/// True if U is one of the types below S in its nesting: S's value type, that one's, ... down
/// to the plain number (double and dual<double> for var<dual<double>>).
template <class U, class S>
inline constexpr bool nested_below = [] {
  if constexpr (!ad_scalar<S>)
    return false;
  else if constexpr (std::is_same_v<U, value_type_t<S>>)
    return true;
  else
    return nested_below<U, value_type_t<S>>;
}();

/// What Eigen::NumTraits says of an AD scalar S (dual<T> or var<T>): a real, signed,
/// non-integer number that needs constructing, with the limits of the plain number inside it
/// (as constants of S).
template <class S>
struct eigen_num_traits {
 private:
  using inner = innermost_t<S>;
  using below = Eigen::NumTraits<value_type_t<S>>;
  static constexpr int capped(long c) { return static_cast<int>(std::min<long>(c, Eigen::HugeCost)); }

 public:
  using Real = S;
  using NonInteger = S;
  using Nested = S;
  using Literal = S;
  // Costs in Eigen's units (a double's addition is 1): a dual carries two numbers of the level
  // below; a var operation also writes a tape statement.
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = capped(ad_traits<S>::is_reverse ? long{below::ReadCost} + 1 : 2L * below::ReadCost),
    AddCost = capped(ad_traits<S>::is_reverse ? long{below::AddCost} + 8 : 2L * below::AddCost),
    MulCost = capped(ad_traits<S>::is_reverse ? 2L * below::MulCost + 8 : 3L * below::MulCost + below::AddCost)
  };

  /// The plain number's machine epsilon, as a constant of S (no variable is made).
  static S epsilon() { return constant<S>(std::numeric_limits<inner>::epsilon()); }
  /// Eigen's default tolerance for the plain number (isApprox, rank decisions), as a constant.
  static S dummy_precision() { return constant<S>(Eigen::NumTraits<inner>::dummy_precision()); }
  /// The largest finite plain number, as a constant.
  static S highest() { return constant<S>(std::numeric_limits<inner>::max()); }
  /// The most negative finite plain number, as a constant.
  static S lowest() { return constant<S>(std::numeric_limits<inner>::lowest()); }
  /// Infinity, as a constant.
  static S infinity() { return constant<S>(std::numeric_limits<inner>::infinity()); }
  /// A quiet NaN, as a constant.
  static S quiet_NaN() { return constant<S>(std::numeric_limits<inner>::quiet_NaN()); }
  /// The plain number's decimal digits (what Eigen prints).
  static int digits10() { return std::numeric_limits<inner>::digits10; }
  /// The plain number's mantissa bits.
  static int digits() { return std::numeric_limits<inner>::digits; }
  /// The plain number's smallest binary exponent.
  static int min_exponent() { return std::numeric_limits<inner>::min_exponent; }
  /// The plain number's largest binary exponent.
  static int max_exponent() { return std::numeric_limits<inner>::max_exponent; }
};

/// The rows and columns of a tensor's Eigen map: [r, c] for rank 2, [n, 1] for rank 1.
inline std::pair<Eigen::Index, Eigen::Index> eigen_extents(char const* op, shape const& sh) {
  if (sh.rank() == 2) return {static_cast<Eigen::Index>(sh[0]), static_cast<Eigen::Index>(sh[1])};
  if (sh.rank() == 1) return {static_cast<Eigen::Index>(sh[0]), 1};
  throw_shape_error(op, "maps a tensor of rank 1 or 2", sh);
}

/// The tensor shape of an Eigen expression: [n] for a vector at compile time, [rows, cols]
/// otherwise.
template <class Derived>
shape tensor_shape(Eigen::DenseBase<Derived> const& m) {
  auto const r = static_cast<std::size_t>(m.rows()), c = static_cast<std::size_t>(m.cols());
  if constexpr (Derived::IsVectorAtCompileTime)
    return shape{r * c};
  else
    return shape{r, c};
}

/// Whether m's coefficients lie in row-major order at m.data() (a RowMajor matrix or map, a
/// vector of unit stride, a block of whole rows of a RowMajor matrix).
template <class Derived>
bool row_major_contiguous(Eigen::DenseBase<Derived> const& m) {
  if constexpr ((Derived::Flags & Eigen::DirectAccessBit) != 0)
    return (m.cols() <= 1 || m.derived().colStride() == 1) && (m.rows() <= 1 || m.derived().rowStride() == m.cols());
  else
    return false;
}

/// x's value at the level of U, a type below x's (x.value(), x.value().value(), ...).
template <class U, class X>
U value_at(X const& x) {
  if constexpr (std::is_same_v<X, U>)
    return x;
  else
    return value_at<U>(x.value());
}

/// Two Eigen scalars of which one is an AD scalar and the other a type below it.
template <class A, class B>
concept eigen_mixed_scalars = nested_below<A, B> || nested_below<B, A>;

/// X's coefficients as S: X itself when its scalar is S, else a plain matrix of constants
/// (a number, or a value of a lower level, as a constant of S: no new variable).
template <class S, class X>
decltype(auto) eigen_promoted(X const& x) {
  if constexpr (std::is_same_v<typename X::Scalar, S>)
    return (x);
  else
    return x.unaryExpr([](typename X::Scalar const& v) { return to_value<S>(v); }).eval();
}

/// Eigen's dense products (GEMM, GEMV) of an AD scalar's matrix with a matrix of a type below
/// it: Eigen's GEMM and GEMV kernels mix two scalar types only where their product converts to
/// the right-hand one (real and complex), so the lower side is made constants of the AD scalar
/// and the product is Eigen's over one scalar type.
template <class Lhs, class Rhs>
struct eigen_mixed_product {
  using S = typename Eigen::ScalarBinaryOpTraits<typename Lhs::Scalar, typename Rhs::Scalar>::ReturnType;
  template <class L, class R>
  using impl = Eigen::internal::generic_product_impl<std::remove_cvref_t<L>, std::remove_cvref_t<R>>;

  template <class Dst>
  static void evalTo(Dst& dst, Lhs const& lhs, Rhs const& rhs) {
    decltype(auto) l = eigen_promoted<S>(lhs);
    decltype(auto) r = eigen_promoted<S>(rhs);
    impl<decltype(l), decltype(r)>::evalTo(dst, l, r);
  }
  template <class Dst>
  static void addTo(Dst& dst, Lhs const& lhs, Rhs const& rhs) {
    decltype(auto) l = eigen_promoted<S>(lhs);
    decltype(auto) r = eigen_promoted<S>(rhs);
    impl<decltype(l), decltype(r)>::addTo(dst, l, r);
  }
  template <class Dst>
  static void subTo(Dst& dst, Lhs const& lhs, Rhs const& rhs) {
    decltype(auto) l = eigen_promoted<S>(lhs);
    decltype(auto) r = eigen_promoted<S>(rhs);
    impl<decltype(l), decltype(r)>::subTo(dst, l, r);
  }
  template <class Dst, class A>
  static void scaleAndAddTo(Dst& dst, Lhs const& lhs, Rhs const& rhs, A const& alpha) {
    decltype(auto) l = eigen_promoted<S>(lhs);
    decltype(auto) r = eigen_promoted<S>(rhs);
    impl<decltype(l), decltype(r)>::scaleAndAddTo(dst, l, r, alpha);
  }
};

template <class X>
concept eigen_plain_object = std::is_base_of_v<Eigen::PlainObjectBase<std::remove_cvref_t<X>>, std::remove_cvref_t<X>>;

}  // namespace detail

/// Eigen's dense matrix of S in a tensor's layout: dynamic extents, row-major.
template <class S>
using eigen_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// Eigen's dynamic column vector of S.
template <class S>
using eigen_vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// A tensor's elements as an Eigen matrix, in place: rank 2 [r, c] maps to r x c, rank 1 [n] to
/// n x 1 (shape_error otherwise). Writes through the map are writes to the tensor: the tensor
/// makes its elements its own first, as its non-const data() does (a buffer shared with another
/// tensor is copied, a block of variables kept as values gets its elements), so they reach no
/// other tensor. The map is valid, and writes through it reach only this tensor, until the
/// tensor is copied, assigned, reshaped, sliced or converted (then map it again).
///
///     tensor<double> t{{1.0, 2.0}, {3.0, 4.0}};
///     eigen_map(t)(0, 1) = 5.0;                          // t(0, 1) == 5
template <tensor_type X>
requires std::is_same_v<X, tensor<typename X::scalar_type>> Eigen::Map<eigen_matrix<typename X::scalar_type>> eigen_map(
    X& t) {
  auto const [r, c] = detail::eigen_extents("eigen_map", t.shape());
  return Eigen::Map<eigen_matrix<typename X::scalar_type>>(t.data(), r, c);
}
/// A tensor's elements as a read-only Eigen matrix, in place (rank 2 or 1, as above). A tensor
/// of vars kept as a block of variables makes its elements first (once, for every copy of it).
/// Valid while the tensor, or a copy sharing its elements, lives unchanged. A class derived from
/// a tensor (adx::parameter) is mapped read-only.
template <class S>
Eigen::Map<eigen_matrix<S> const> eigen_map(tensor<S> const& t) {
  auto const [r, c] = detail::eigen_extents("eigen_map", t.shape());
  return Eigen::Map<eigen_matrix<S> const>(t.data(), r, c);
}
/// Does not compile: the map of a temporary tensor would outlive its elements.
template <class S>
void eigen_map(tensor<S>&&) = delete;

/// A rank-1 tensor's elements as an Eigen column vector, in place (eigen_map's rules).
template <tensor_type X>
requires std::is_same_v<X, tensor<typename X::scalar_type>> Eigen::Map<eigen_vector<typename X::scalar_type>>
eigen_vector_map(X& t) {
  if (t.rank() != 1) detail::throw_shape_error("eigen_vector_map", "maps a tensor of rank 1", t.shape());
  return Eigen::Map<eigen_vector<typename X::scalar_type>>(t.data(), static_cast<Eigen::Index>(t.size()));
}
/// A rank-1 tensor's elements as a read-only Eigen column vector, in place.
template <class S>
Eigen::Map<eigen_vector<S> const> eigen_vector_map(tensor<S> const& t) {
  if (t.rank() != 1) detail::throw_shape_error("eigen_vector_map", "maps a tensor of rank 1", t.shape());
  return Eigen::Map<eigen_vector<S> const>(t.data(), static_cast<Eigen::Index>(t.size()));
}
/// Does not compile: the map of a temporary tensor would outlive its elements.
template <class S>
void eigen_vector_map(tensor<S>&&) = delete;

/// The values (one level down) of a tensor of vars that is one block of variables kept as
/// values (made from numbers, or the output of a product or an elementwise node), as a
/// read-only Eigen matrix (rank 2 or 1, as eigen_map), in place: no var element is made.
/// Throws adx::error for a tensor with elements of its own (written to, or gathered); its
/// values are then a copy: `auto v = t.values();` and `eigen_map(v)`. Valid while the tensor,
/// or a copy sharing its block, lives.
template <class T>
Eigen::Map<eigen_matrix<T> const> eigen_map_values(tensor<var<T>> const& t) {
  auto const [r, c] = detail::eigen_extents("eigen_map_values", t.shape());
  T const* v = detail::tensor_access::kept_values(t);
  if (v == nullptr && t.size() != 0)
    throw error(
        "adx: eigen_map_values: the tensor has var elements of its own, not a block of variables kept as values; "
        "copy its values with t.values() and map that tensor");
  return Eigen::Map<eigen_matrix<T> const>(v, r, c);
}
/// Does not compile: the map of a temporary tensor would outlive its values.
template <class T>
void eigen_map_values(tensor<var<T>>&&) = delete;

/// A tensor over an Eigen matrix's memory, without a copy: shape [n] for a vector at compile
/// time, [rows, cols] otherwise. The coefficients must lie in row-major order (a RowMajor
/// matrix or Map, a vector of unit stride, whole rows of a RowMajor matrix); shape_error
/// otherwise (a column-major matrix: use as_tensor, which copies it).
///
/// Lifetime: the Eigen object's memory must outlive the tensor and every tensor sharing its
/// buffer (copies, reshapes, contiguous slices, a tensor<var<T>> made from it, a recorded
/// product that keeps it as an operand), and must not change while they may read it (a
/// gradient sweep reads a product's kept operand). Writes through the tensor never reach the
/// Eigen memory: the buffer counts as shared, so the tensor copies it on its first write.
///
///     eigen_matrix<double> m(2, 3);
///     tensor<double> t = tensor_view(m);                 // shape [2, 3], reads m's memory
template <class Derived>
tensor<typename Derived::Scalar> tensor_view(Eigen::DenseBase<Derived> const& m) {
  using S = typename Derived::Scalar;
  static_assert((Derived::Flags & Eigen::DirectAccessBit) != 0,
                "adx: tensor_view needs an Eigen object with its coefficients in memory (a matrix, a Map, a "
                "block); as_tensor evaluates an expression");
  shape const sh = detail::tensor_shape(m);
  if (!detail::row_major_contiguous(m))
    detail::throw_shape_error("tensor_view",
                              "the Eigen coefficients are not in row-major order (a column-major matrix or a strided "
                              "block); as_tensor copies them",
                              sh);
  if (m.size() == 0) return tensor<S>(sh);
  return detail::tensor_access::borrowed(sh, m.derived().data());
}
/// Does not compile: a view of a temporary matrix would outlive its memory.
template <detail::eigen_plain_object M>
requires(!std::is_reference_v<M>) void tensor_view(M&&) = delete;

/// A tensor of an Eigen matrix's coefficients: over its memory, without a copy, where they lie
/// in row-major order (as tensor_view, with its lifetime rules); otherwise (a column-major
/// matrix, a strided block, an expression such as a product) a tensor of its own, evaluated
/// once into row-major order. Shape [n] for a vector at compile time, [rows, cols] otherwise.
template <class Derived>
tensor<typename Derived::Scalar> as_tensor(Eigen::DenseBase<Derived> const& m) {
  using S = typename Derived::Scalar;
  if constexpr ((Derived::Flags & Eigen::DirectAccessBit) != 0)
    if (detail::row_major_contiguous(m)) return tensor_view(m);
  auto owned = std::make_shared<eigen_matrix<S>>(m);
  return detail::tensor_access::from_buffer(detail::tensor_shape(m), std::shared_ptr<S>(owned, owned->data()));
}
/// A tensor that takes a temporary matrix (or array): its memory, without a copy, when it is
/// row-major, else its coefficients in row-major order; the tensor owns them.
template <detail::eigen_plain_object M>
requires(!std::is_reference_v<M>) tensor<typename M::Scalar> as_tensor(M&& m) {
  using S = typename M::Scalar;
  shape const sh = detail::tensor_shape(m);
  if (detail::row_major_contiguous(m)) {
    auto owned = std::make_shared<std::remove_const_t<M>>(std::move(m));  // (a const one is copied)
    return detail::tensor_access::from_buffer(sh, std::shared_ptr<S>(owned, owned->data()));
  }
  auto owned = std::make_shared<eigen_matrix<S>>(m);
  return detail::tensor_access::from_buffer(sh, std::shared_ptr<S>(owned, owned->data()));
}

}  // namespace adx

namespace Eigen {

/// Eigen's description of adx::dual<T>: a real number type that needs constructing (limits of
/// the plain number inside, as constants).
template <class T>
struct NumTraits<adx::dual<T>> : adx::detail::eigen_num_traits<adx::dual<T>> {};
/// Eigen's description of adx::var<T>: a real number type that needs constructing (limits of
/// the plain number inside, as constants); its operations cost a tape statement.
template <class T>
struct NumTraits<adx::var<T>> : adx::detail::eigen_num_traits<adx::var<T>> {};

/// A dual mixes with the types below it (dual<double> with double): the result is the dual.
template <class T, class U, class BinaryOp>
requires adx::detail::nested_below<U, adx::dual<T>>
struct ScalarBinaryOpTraits<adx::dual<T>, U, BinaryOp> {
  using ReturnType = adx::dual<T>;  ///< the result's scalar
};
/// A type below a dual mixes with it: the result is the dual.
template <class T, class U, class BinaryOp>
requires adx::detail::nested_below<U, adx::dual<T>>
struct ScalarBinaryOpTraits<U, adx::dual<T>, BinaryOp> {
  using ReturnType = adx::dual<T>;  ///< the result's scalar
};
/// A var mixes with the types below it (var<double> with double, var<dual<double>> with
/// dual<double> and double): the result is the var.
template <class T, class U, class BinaryOp>
requires adx::detail::nested_below<U, adx::var<T>>
struct ScalarBinaryOpTraits<adx::var<T>, U, BinaryOp> {
  using ReturnType = adx::var<T>;  ///< the result's scalar
};
/// A type below a var mixes with it: the result is the var.
template <class T, class U, class BinaryOp>
requires adx::detail::nested_below<U, adx::var<T>>
struct ScalarBinaryOpTraits<U, adx::var<T>, BinaryOp> {
  using ReturnType = adx::var<T>;  ///< the result's scalar
};

namespace internal {

/// cast<U>() of a matrix of duals to a type below them: the values at that level (no tangent).
template <class T, class U>
requires adx::detail::nested_below<U, adx::dual<T>>
struct cast_impl<adx::dual<T>, U> {
  /// x's value at U's level.
  static U run(adx::dual<T> const& x) { return adx::detail::value_at<U>(x); }
};
/// cast<U>() of a matrix of vars to a type below them: the values at that level, through which
/// no derivative flows (as adx::value and adx::primal).
template <class T, class U>
requires adx::detail::nested_below<U, adx::var<T>>
struct cast_impl<adx::var<T>, U> {
  /// x's value at U's level.
  static U run(adx::var<T> const& x) { return adx::detail::value_at<U>(x); }
};

/// A matrix product (GEMM) of an AD scalar's matrix with one of a type below it: the lower side
/// as constants of the AD scalar, then Eigen's product over one scalar type.
template <class Lhs, class Rhs>
requires adx::detail::eigen_mixed_scalars<typename Lhs::Scalar, typename Rhs::Scalar>
struct generic_product_impl<Lhs, Rhs, DenseShape, DenseShape, GemmProduct>
    : adx::detail::eigen_mixed_product<Lhs, Rhs> {
};
/// A matrix-vector product (GEMV) of an AD scalar's matrix or vector with one of a type below it,
/// as the GEMM above.
template <class Lhs, class Rhs>
requires adx::detail::eigen_mixed_scalars<typename Lhs::Scalar, typename Rhs::Scalar>
struct generic_product_impl<Lhs, Rhs, DenseShape, DenseShape, GemvProduct>
    : adx::detail::eigen_mixed_product<Lhs, Rhs> {
};

/// Does not compile, with a message: Eigen solves into the right-hand side's scalar type, and its
/// kernels do not mix an AD scalar with a type below it there. Give solve() a right-hand side of
/// the decomposition's scalar (rhs.cast<S>()).
template <class Decomposition, class Rhs>
requires adx::detail::eigen_mixed_scalars<typename Decomposition::Scalar, typename Rhs::Scalar>
struct solve_traits<Decomposition, Rhs, Dense> {
  static_assert(sizeof(Rhs) == 0,
                "adx: an Eigen solve of a decomposition over one scalar type with a right-hand side of another (var "
                "and double, say) does not compile in Eigen's kernels: convert the right-hand side to the "
                "decomposition's scalar first, rhs.cast<S>()");
  /// Eigen's own choice (the right-hand side's scalar), so that the message above comes alone.
  using PlainObject =
      typename make_proper_matrix_type<typename Rhs::Scalar, Decomposition::ColsAtCompileTime, Rhs::ColsAtCompileTime,
                                       Rhs::PlainObject::Options, Decomposition::MaxColsAtCompileTime,
                                       Rhs::MaxColsAtCompileTime>::type;
};

}  // namespace internal

}  // namespace Eigen
