// adx/eigen.hpp: Eigen's matrices and decompositions over adx scalars, and the views between
// tensors and Eigen matrices. LLT, LDLT, PartialPivLU and HouseholderQR over var<double> give the
// closed-form gradients of a log-determinant and of b^T A^-1 c (computed in double by Eigen);
// over var<var<double>> and var<dual<double>> their second derivatives agree with central
// differences of the closed forms, and over dual<double> the directional derivatives do. Then
// products at GEMM and GEMV sizes mixed with double matrices and scalars, and the views both ways.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <adx/adx.hpp>
#include <adx/eigen.hpp>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

namespace {

using Md = Eigen::MatrixXd;
using Vd = Eigen::VectorXd;
template <class S>
using M = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <class S>
using V = Eigen::Matrix<S, Eigen::Dynamic, 1>;

// ---- inputs and closed forms, in double -------------------------------------------------------

Md base() {
  Md m(4, 4);
  m << 2.0, 0.3, -0.5, 0.1, 0.4, 1.5, 0.2, -0.3, -0.2, 0.6, 1.8, 0.5, 0.3, -0.1, 0.4, 2.2;
  return m;
}
/// A matrix whose symmetric part (X + X^T) / 2 is positive definite; X itself is not symmetric.
Md spd_input() {
  Md const m = base();
  return m * m.transpose() + Md::Identity(4, 4) + 0.2 * (m - m.transpose());
}
/// A general (non-symmetric) matrix with a positive determinant.
Md general_input() { return base(); }
Vd vector_of(double a, double b, double c, double d) {
  Vd v(4);
  v << a, b, c, d;
  return v;
}
Vd b_vector() { return vector_of(1.0, -2.0, 0.5, 3.0); }
Vd c_vector() { return vector_of(0.5, 1.0, -1.0, 2.0); }
/// Weights of a scalar of the gradient (for second derivatives), and a direction.
Md weights() {
  Md w(4, 4);
  for (Eigen::Index i = 0; i < 4; ++i)
    for (Eigen::Index j = 0; j < 4; ++j) w(i, j) = std::sin(1.0 + double(i) + 2.0 * double(j));
  return w;
}
Md direction() { return weights().transpose() * 0.5 + Md::Identity(4, 4) * 0.3; }

Md sym(Md const& m) { return (m + m.transpose()) / 2.0; }

/// d logdet(sym X) / dX = sym(A^-1) = A^-1 (A = sym X, symmetric).
Md llt_logdet_gradient(Md const& x) { return sym(x).inverse(); }
/// d logdet(A) / dA = A^-T.
Md lu_logdet_gradient(Md const& a) { return a.inverse().transpose(); }
/// d (b^T A^-1 c) / dA = -A^-T b c^T A^-T.
Md bilinear_gradient(Md const& a) {
  Md const ait = a.inverse().transpose();
  return -(ait * b_vector()) * (c_vector().transpose() * ait);
}
/// d (b^T A^-1 c) / dX with A = sym X: the symmetric part of the above.
Md sym_bilinear_gradient(Md const& x) { return sym(bilinear_gradient(sym(x))); }

// ---- the functions under test, over any scalar, through Eigen --------------------------------

/// log det(sym X) = 2 sum log diag(L), L the Cholesky factor (Eigen's LLT).
template <class S>
S llt_logdet(M<S> const& x) {
  M<S> const a = (x + x.transpose()) * 0.5;
  Eigen::LLT<M<S>> const llt(a);
  REQUIRE(llt.info() == Eigen::Success);
  return 2.0 * llt.matrixLLT().diagonal().array().log().sum();
}
/// log det A through Eigen's PartialPivLU.
template <class S>
S lu_logdet(M<S> const& a) {
  Eigen::PartialPivLU<M<S>> const lu(a);
  return log(lu.determinant());
}
/// b^T (sym X)^-1 c through Eigen's LLT. (Eigen solves in the right-hand side's scalar type: c
/// is cast to S first; b, a double vector, mixes with y.)
template <class S>
S llt_bilinear(M<S> const& x) {
  M<S> const a = (x + x.transpose()) * 0.5;
  V<S> const y = a.llt().solve(c_vector().cast<S>());
  return b_vector().dot(y);
}
/// b^T (sym X)^-1 c through Eigen's LDLT.
template <class S>
S ldlt_bilinear(M<S> const& x) {
  M<S> const a = (x + x.transpose()) * 0.5;
  V<S> const y = a.ldlt().solve(c_vector().cast<S>());
  return (b_vector().transpose() * y)(0);
}
/// b^T A^-1 c through Eigen's PartialPivLU.
template <class S>
S lu_bilinear(M<S> const& a) {
  V<S> const y = a.partialPivLu().solve(c_vector().cast<S>());
  return y.dot(b_vector());
}
/// b^T A^-1 c through Eigen's HouseholderQR.
template <class S>
S qr_bilinear(M<S> const& a) {
  V<S> const y = a.householderQr().solve(c_vector().cast<S>());
  return b_vector().dot(y);
}

// ---- derivatives ------------------------------------------------------------------------------

/// A matrix of independent variables (S(number) makes one, at every level of a var nesting).
template <class S>
M<S> variables(Md const& x0) {
  M<S> x(x0.rows(), x0.cols());
  for (Eigen::Index i = 0; i < x0.rows(); ++i)
    for (Eigen::Index j = 0; j < x0.cols(); ++j) x(i, j) = S(x0(i, j));
  return x;
}

/// f(x0) and d f / dX at x0, by reverse mode (var<double>).
template <class F>
std::pair<double, Md> value_and_gradient(F const& f, Md const& x0) {
  tape_scope<var<double>> scope;
  M<var<double>> const x = variables<var<double>>(x0);
  var<double> const y = f(x);
  backward(y);
  return {y.value(), x.unaryExpr([](var<double> const& v) { return v.adjoint(); })};
}

/// The first derivatives (their values) and the derivative of sum(W o grad f) in X, through
/// var<var<double>> (reverse over reverse).
template <class F>
std::pair<Md, Md> reverse_over_reverse(F const& f, Md const& x0, Md const& w) {
  tape_scope<var<var<double>>> scope;
  M<var<var<double>>> const x = variables<var<var<double>>>(x0);
  var<var<double>> const y = f(x);
  backward(y);
  M<var<double>> const g = x.unaryExpr([](var<var<double>> const& v) { return v.adjoint(); });
  var<double> const gw = (g.array() * w.array()).sum();  // var<double> with double: mixed
  backward(gw);
  return {g.cast<double>(), x.unaryExpr([](var<var<double>> const& v) { return v.value().adjoint(); })};
}

/// The gradient and the Hessian times v (as matrices), through var<dual<double>> (forward over
/// reverse).
template <class F>
std::pair<Md, Md> forward_over_reverse(F const& f, Md const& x0, Md const& v) {
  tape_scope<var<dual<double>>> scope;
  M<var<dual<double>>> x(x0.rows(), x0.cols());
  for (Eigen::Index i = 0; i < x0.rows(); ++i)
    for (Eigen::Index j = 0; j < x0.cols(); ++j) x(i, j) = var<dual<double>>(dual<double>(x0(i, j), v(i, j)));
  var<dual<double>> const y = f(x);
  backward(y);
  M<dual<double>> const g = x.unaryExpr([](var<dual<double>> const& e) { return e.adjoint(); });
  return {g.cast<double>(), g.unaryExpr([](dual<double> const& d) { return d.tangent(); })};
}

/// f(x0) and its derivative along v, through dual<double>.
template <class F>
std::pair<double, double> forward_derivative(F const& f, Md const& x0, Md const& v) {
  M<dual<double>> x(x0.rows(), x0.cols());
  for (Eigen::Index i = 0; i < x0.rows(); ++i)
    for (Eigen::Index j = 0; j < x0.cols(); ++j) x(i, j) = dual<double>(x0(i, j), v(i, j));
  dual<double> const y = f(x);
  return {y.value(), y.tangent()};
}

/// (phi(x0 + h E_ij) - phi(x0 - h E_ij)) / 2h for every element (i, j).
template <class F>
Md central_differences(F const& phi, Md const& x0, double h = 1e-5) {
  Md d(x0.rows(), x0.cols());
  for (Eigen::Index i = 0; i < x0.rows(); ++i)
    for (Eigen::Index j = 0; j < x0.cols(); ++j) {
      Md up = x0, down = x0;
      up(i, j) += h;
      down(i, j) -= h;
      d(i, j) = (phi(up) - phi(down)) / (2 * h);
    }
  return d;
}
/// (G(x0 + h v) - G(x0 - h v)) / 2h, G matrix-valued.
template <class G>
Md central_difference_along(G const& grad, Md const& x0, Md const& v, double h = 1e-5) {
  return (grad(Md(x0 + h * v)) - grad(Md(x0 - h * v))) / (2 * h);
}

void check_matrix(Md const& got, Md const& want, double rtol, double atol) {
  REQUIRE(got.rows() == want.rows());
  REQUIRE(got.cols() == want.cols());
  for (Eigen::Index i = 0; i < got.rows(); ++i)
    for (Eigen::Index j = 0; j < got.cols(); ++j) {
      INFO("element (" << i << ", " << j << "): " << got(i, j) << " against " << want(i, j));
      CHECK(close(got(i, j), want(i, j), rtol, atol));
    }
}

/// The checks of one function f (written over any scalar) whose closed-form gradient is grad:
/// the value, the gradient (var<double>), the second derivatives (var<var<double>> against
/// central differences of sum(W o grad)), the Hessian-vector product (var<dual<double>> against
/// a central difference of grad along v) and the directional derivative (dual<double>).
template <class F, class G>
void check_all_orders(F const& f, G const& grad, Md const& x0, double value) {
  auto const [y, g] = value_and_gradient(f, x0);
  CHECK(close(y, value, 1e-12));
  check_matrix(g, grad(x0), 1e-9, 1e-12);

  Md const w = weights();
  auto const [g2, h] = reverse_over_reverse(f, x0, w);
  check_matrix(g2, grad(x0), 1e-9, 1e-12);
  Md const h_fd = central_differences([&](Md const& x) { return (grad(x).array() * w.array()).sum(); }, x0);
  check_matrix(h, h_fd, 1e-6, 1e-8);

  Md const v = direction();
  auto const [g3, hv] = forward_over_reverse(f, x0, v);
  check_matrix(g3, grad(x0), 1e-9, 1e-12);
  check_matrix(hv, central_difference_along(grad, x0, v), 1e-6, 1e-8);

  auto const [y4, dy] = forward_derivative(f, x0, v);
  CHECK(close(y4, value, 1e-12));
  CHECK(close(dy, (grad(x0).array() * v.array()).sum(), 1e-10, 1e-12));
}

}  // namespace

TEST_CASE("eigen: NumTraits and ScalarBinaryOpTraits of dual and var at every nesting") {
  using N2 = Eigen::NumTraits<var<var<double>>>;
  static_assert(std::is_same_v<N2::Real, var<var<double>>> && std::is_same_v<N2::NonInteger, var<var<double>>>);
  static_assert(std::is_same_v<N2::Nested, var<var<double>>> && std::is_same_v<N2::Literal, var<var<double>>>);
  static_assert(N2::IsComplex == 0 && N2::IsInteger == 0 && N2::IsSigned == 1 && N2::RequireInitialization == 1);
  static_assert(int(N2::ReadCost) > int(Eigen::NumTraits<var<double>>::ReadCost) &&
                int(N2::MulCost) > int(Eigen::NumTraits<var<double>>::MulCost) &&
                int(Eigen::NumTraits<var<double>>::AddCost) > int(Eigen::NumTraits<double>::AddCost));
  var<var<double>> const eps = N2::epsilon();
  CHECK(primal(eps) == DBL_EPSILON);
  CHECK(eps.index() == 0);  // a constant at both levels: no new variable
  CHECK(eps.value().index() == 0);
  CHECK(primal(N2::highest()) == DBL_MAX);
  CHECK(primal(N2::lowest()) == -DBL_MAX);
  CHECK(primal(N2::dummy_precision()) == Eigen::NumTraits<double>::dummy_precision());
  CHECK(N2::digits10() == DBL_DIG);
  CHECK(std::isinf(primal(N2::infinity())));
  CHECK(std::isnan(primal(Eigen::NumTraits<dual<double>>::quiet_NaN())));
  CHECK(primal(Eigen::NumTraits<dual<float>>::epsilon()) == FLT_EPSILON);
  CHECK(Eigen::NumTraits<var<dual<float>>>::digits10() == FLT_DIG);
  M<dual<double>> p(2, 2);
  p << 1, 2, 3, 4.5;  // numbers: constants
  std::ostringstream os;
  os << p;  // Eigen's printing, of the values
  CHECK(os.str() == "  1   2\n  3 4.5");

  using Eigen::ScalarBinaryOpTraits;
  static_assert(std::is_same_v<ScalarBinaryOpTraits<var<double>, double>::ReturnType, var<double>>);
  static_assert(std::is_same_v<ScalarBinaryOpTraits<double, var<double>>::ReturnType, var<double>>);
  static_assert(std::is_same_v<ScalarBinaryOpTraits<dual<double>, double>::ReturnType, dual<double>>);
  static_assert(std::is_same_v<ScalarBinaryOpTraits<double, dual<double>>::ReturnType, dual<double>>);
  static_assert(std::is_same_v<ScalarBinaryOpTraits<var<dual<double>>, dual<double>>::ReturnType, var<dual<double>>>);
  static_assert(std::is_same_v<ScalarBinaryOpTraits<double, var<var<double>>>::ReturnType, var<var<double>>>);
  static_assert(std::is_same_v<ScalarBinaryOpTraits<var<double>, var<double>>::ReturnType, var<double>>);
}

TEST_CASE("eigen: LLT log-determinant, all orders") {
  Md const x0 = spd_input();
  check_all_orders([](auto const& x) { return llt_logdet(x); }, llt_logdet_gradient, x0,
                   std::log(sym(x0).determinant()));
}

TEST_CASE("eigen: PartialPivLU log-determinant, all orders") {
  Md const a0 = general_input();
  REQUIRE(a0.determinant() > 0);
  check_all_orders([](auto const& a) { return lu_logdet(a); }, lu_logdet_gradient, a0, std::log(a0.determinant()));
}

TEST_CASE("eigen: solves of LLT, LDLT, PartialPivLU and HouseholderQR, all orders") {
  Md const x0 = spd_input(), a0 = general_input();
  double const sym_value = b_vector().dot(sym(x0).inverse() * c_vector());
  double const general_value = b_vector().dot(a0.inverse() * c_vector());
  SUBCASE("LLT") {
    check_all_orders([](auto const& x) { return llt_bilinear(x); }, sym_bilinear_gradient, x0, sym_value);
  }
  SUBCASE("LDLT") {
    check_all_orders([](auto const& x) { return ldlt_bilinear(x); }, sym_bilinear_gradient, x0, sym_value);
  }
  SUBCASE("PartialPivLU") {
    check_all_orders([](auto const& a) { return lu_bilinear(a); }, bilinear_gradient, a0, general_value);
  }
  SUBCASE("HouseholderQR") {
    check_all_orders([](auto const& a) { return qr_bilinear(a); }, bilinear_gradient, a0, general_value);
  }
}

TEST_CASE("eigen: PartialPivLU determinant's sign and value over var<double>") {
  Md a0 = general_input();
  a0.row(0).swap(a0.row(2));  // a row exchange: the determinant changes sign
  REQUIRE(a0.determinant() < 0);
  tape_scope<var<double>> scope;
  M<var<double>> const a = variables<var<double>>(a0);
  var<double> const det = a.partialPivLu().determinant();
  CHECK(close(det.value(), a0.determinant(), 1e-12));
  backward(det);
  check_matrix(a.unaryExpr([](var<double> const& v) { return v.adjoint(); }),
               a0.determinant() * a0.inverse().transpose(), 1e-10, 1e-12);  // d det / dA = det A^-T
}

TEST_CASE("eigen: products, sums and norms of var<double> matrices with double matrices and scalars") {
  // 24 x 24: Eigen's GEMM and GEMV kernels (small products take its coefficient loops)
  Eigen::Index const n = 24;
  Md x0(n, n), d1(n, n), d2(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      x0(i, j) = std::sin(0.3 * double(i) + 0.7 * double(j));
      d1(i, j) = std::cos(0.2 * double(i) - 0.5 * double(j));
      d2(i, j) = 0.1 * double((i * 7 + j * 3) % 5) - 0.2;
    }
  Vd const dv = d1.col(3);
  Vd const ones = Vd::Ones(n);
  tape_scope<var<double>> scope;
  M<var<double>> const x = variables<var<double>>(x0);

  SUBCASE("values and gradients") {
    M<var<double>> const xd = x * d1;                     // var x double (GEMM)
    M<var<double>> const dx = d2 * x;                     // double x var (GEMM)
    M<var<double>> const xtx = x.transpose() * x;         // var x var (GEMM)
    V<var<double>> const xv = x * dv;                     // var x double vector (GEMV)
    V<var<double>> const vx = d2.transpose() * x.col(0);  // double x var vector (GEMV)
    check_matrix(xd.cast<double>(), x0 * d1, 1e-12, 1e-12);
    check_matrix(dx.cast<double>(), d2 * x0, 1e-12, 1e-12);
    check_matrix(xtx.cast<double>(), x0.transpose() * x0, 1e-12, 1e-12);
    check_matrix(xv.cast<double>(), x0 * dv, 1e-12, 1e-12);
    check_matrix(vx.cast<double>(), d2.transpose() * x0.col(0), 1e-12, 1e-12);
    var<double> const y =
        xd.sum() + 2.0 * dx.sum() + 0.5 * xtx.sum() + xv.sum() + x.norm() + (2.0 * x - d1 + x * 1.0).sum();
    double const y0 = (x0 * d1).sum() + 2.0 * (d2 * x0).sum() + 0.5 * (x0.transpose() * x0).sum() + (x0 * dv).sum() +
                      x0.norm() + (3.0 * x0 - d1).sum();
    CHECK(close(y.value(), y0, 1e-12));
    backward(y);
    Md const want = ones * (d1 * ones).transpose()                      // sum(X D1)
                    + 2.0 * (d2.transpose() * ones) * ones.transpose()  // sum(D2 X)
                    + (x0 * ones) * ones.transpose()                    // sum(X^T X) / 2 = |X 1|^2 / 2
                    + ones * dv.transpose()                             // sum(X v)
                    + x0 / x0.norm()                                    // |X|
                    + 3.0 * Md::Ones(n, n);
    check_matrix(x.unaryExpr([](var<double> const& v) { return v.adjoint(); }), want, 1e-10, 1e-10);
  }
  SUBCASE("a double matrix assigned to a matrix of vars makes independent variables, as var x = 2.0 does") {
    M<var<double>> const z = d1;
    CHECK(z(2, 5).is_active());
    CHECK(z(2, 5).value() == d1(2, 5));
    M<var<double>> const zc = d1.cast<var<double>>();  // the same by cast
    CHECK(zc(2, 5).is_active());
    CHECK(zc(2, 5).index() != z(2, 5).index());
    var<double> const s = (z.array() * x.array()).sum();
    backward(s);
    CHECK(close(z(2, 5).adjoint(), x0(2, 5)));
    CHECK(close(x(2, 5).adjoint(), d1(2, 5)));
  }
}

TEST_CASE("eigen: eigen_map of a tensor, mutable and const") {
  SUBCASE("writes through a mutable map land in the tensor, not in a copy that shared its buffer") {
    tensor<double> t{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
    tensor<double> const u = t;  // shares t's buffer
    auto m = eigen_map(t);
    static_assert(std::is_same_v<decltype(m), Eigen::Map<eigen_matrix<double>>>);
    CHECK(m.rows() == 2);
    CHECK(m.cols() == 3);
    CHECK(m(0, 1) == 2.0);  // row-major
    CHECK(m(1, 0) == 4.0);
    m(1, 2) = 60.0;
    m.row(0) *= 10.0;
    CHECK(t(1, 2) == 60.0);
    CHECK(t(0, 2) == 30.0);
    CHECK(u(1, 2) == 6.0);
    CHECK(u(0, 2) == 3.0);
    CHECK(m.data() == t.data());
  }
  SUBCASE("a const map reads in place; rank 1 maps to a column") {
    tensor<double> const t{{1.0, 2.0}, {3.0, 4.0}};
    auto const m = eigen_map(t);
    static_assert(std::is_same_v<std::remove_const_t<decltype(m)>, Eigen::Map<eigen_matrix<double> const>>);
    CHECK(m.data() == t.data());
    CHECK((m * m).sum() == 7.0 + 10.0 + 15.0 + 22.0);
    tensor<double> r{1.0, 2.0, 3.0};
    CHECK(eigen_map(r).rows() == 3);
    CHECK(eigen_map(r).cols() == 1);
    auto v = eigen_vector_map(r);
    static_assert(std::is_same_v<decltype(v), Eigen::Map<eigen_vector<double>>>);
    v(1) = 20.0;
    CHECK(r(1) == 20.0);
    CHECK(v.dot(v) == 1.0 + 400.0 + 9.0);
  }
  SUBCASE("other ranks are shape errors") {
    tensor<double> t3(shape{2, 2, 2});
    CHECK_THROWS_AS(eigen_map(t3), shape_error);
    tensor<double> t2{{1.0, 2.0}, {3.0, 4.0}};
    CHECK_THROWS_AS(eigen_vector_map(t2), shape_error);
  }
}

namespace {
template <class T>
concept maps = requires(T&& t) {
  eigen_map(std::forward<T>(t));
};
}  // namespace

TEST_CASE("eigen: eigen_map of tensors of vars: blocks kept as values, copies, gradients") {
  static_assert(maps<tensor<double>&> && maps<tensor<double> const&> && !maps<tensor<double>>);
  static_assert(std::is_same_v<decltype(eigen_map(std::declval<parameter<double>&>())),
                               Eigen::Map<eigen_matrix<var<double>> const>>);  // a parameter: read-only
  tape_scope<var<double>> scope;
  tensor<double> const v0{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}};
  tensor<var<double>> const x(v0);  // one block of variables, kept as values

  SUBCASE("eigen_map_values reads the block's values in place, without making elements") {
    auto const vals = eigen_map_values(x);
    tensor<double> const xv = x.values();
    CHECK(vals.data() == xv.data());  // the block's values, which are v0's buffer
    CHECK(vals.data() == v0.data());
    CHECK(vals(1, 2) == -0.75);
    CHECK(vals.sum() == 2.5);
    tensor<var<double>> owned = x;
    owned(0, 0) = var<double>(3.0);  // a write: the tensor has elements of its own now
    CHECK_THROWS_AS(eigen_map_values(owned), error);
    auto const vals_after = eigen_map_values(x);  // x is still the block
    CHECK(vals_after(0, 0) == 0.5);
  }
  SUBCASE("a const map makes the elements: the block's variables, on which Eigen's sums record") {
    auto const m = eigen_map(std::as_const(x));
    CHECK(m(1, 0).index() == x(1, 0).index());
    CHECK(m(1, 0).value() == 1.5);
    Md w(2, 3);
    w << 1.0, 2.0, 3.0, 4.0, 5.0, 6.0;
    var<double> const s = (m.array() * w.array()).sum();
    CHECK(s.value() == 0.5 - 2.0 + 6.0 + 6.0 + 1.25 - 4.5);
    backward(s);
    for (Eigen::Index i = 0; i < 2; ++i)
      for (Eigen::Index j = 0; j < 3; ++j) CHECK(x(std::size_t(i), std::size_t(j)).adjoint() == w(i, j));
  }
  SUBCASE("a mutable map of a block gives the tensor its elements; a copy keeps the block") {
    tensor<var<double>> y = x;
    auto m = eigen_map(y);
    CHECK(m(0, 1).index() == x(0, 1).index());  // the same variables
    m(0, 1) = var<double>(7.0);
    CHECK(y(0, 1).value() == 7.0);
    CHECK(x(0, 1).value() == -1.0);
    CHECK(eigen_map_values(x)(0, 1) == -1.0);
  }
}

namespace {
template <class T>
concept views = requires(T&& m) {
  tensor_view(std::forward<T>(m));
};
}  // namespace

TEST_CASE("eigen: tensor_view and as_tensor of Eigen matrices") {
  static_assert(views<eigen_matrix<double>&> && views<Eigen::Map<eigen_matrix<double>>> &&
                !views<eigen_matrix<double>>);
  SUBCASE("a RowMajor matrix: the tensor reads its memory; a write through the tensor copies") {
    eigen_matrix<double> m(2, 3);
    m << 1.0, 2.0, 3.0, 4.0, 5.0, 6.0;
    tensor<double> t = tensor_view(m);
    tensor<double> const& read = t;  // reads through the const tensor (a non-const access owns)
    CHECK(t.shape() == shape{2, 3});
    CHECK(read.data() == m.data());
    CHECK(read(1, 0) == 4.0);
    m(1, 0) = 40.0;  // seen by the tensor: the same memory
    CHECK(read(1, 0) == 40.0);
    tensor<double> const copy = t;
    t(0, 0) = 10.0;  // the tensor copies the buffer first: m keeps its numbers
    CHECK(m(0, 0) == 1.0);
    CHECK(read(0, 0) == 10.0);
    CHECK(read(1, 0) == 40.0);
    CHECK(copy(0, 0) == 1.0);
    CHECK(read.data() != m.data());
    CHECK(copy.data() == m.data());
  }
  SUBCASE("a column-major matrix: tensor_view refuses, as_tensor copies in row-major order") {
    Md const m = general_input();
    CHECK_THROWS_AS(tensor_view(m), shape_error);
    tensor<double> const t = as_tensor(m);
    CHECK(t.shape() == shape{4, 4});
    CHECK(t.data() != m.data());
    for (Eigen::Index i = 0; i < 4; ++i)
      for (Eigen::Index j = 0; j < 4; ++j) CHECK(t(std::size_t(i), std::size_t(j)) == m(i, j));
  }
  SUBCASE("maps, vectors, blocks and expressions") {
    std::vector<double> buf{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
    Eigen::Map<eigen_matrix<double>> const rm(buf.data(), 3, 2);
    tensor<double> const t = as_tensor(rm);
    CHECK(t.shape() == shape{3, 2});
    CHECK(t.data() == buf.data());
    CHECK(t(2, 1) == 6.0);
    Vd const v = c_vector();
    tensor<double> const tv = as_tensor(v);  // a vector at compile time: rank 1
    CHECK(tv.shape() == shape{4});
    CHECK(tv.data() == v.data());
    eigen_matrix<double> m(3, 3);
    m << 1, 2, 3, 4, 5, 6, 7, 8, 9;
    tensor<double> const rows = tensor_view(m.middleRows(1, 2));  // whole rows: contiguous
    CHECK(rows.shape() == shape{2, 3});
    CHECK(rows.data() == m.data() + 3);
    CHECK_THROWS_AS(tensor_view(m.col(1)), shape_error);  // stride 3
    tensor<double> const col = as_tensor(m.col(1));
    CHECK(col.shape() == shape{3});
    CHECK(col(2) == 8.0);
    tensor<double> const prod = as_tensor(m * m);  // an expression: evaluated once
    CHECK(prod(0, 0) == 30.0);
    CHECK(prod(2, 2) == 7.0 * 3 + 8.0 * 6 + 9.0 * 9);
  }
  SUBCASE("a temporary matrix is taken, not copied") {
    eigen_matrix<double> m(2, 2);
    m << 1.0, 2.0, 3.0, 4.0;
    double const* const p = m.data();
    tensor<double> t = as_tensor(std::move(m));
    CHECK(std::as_const(t).data() == p);
    CHECK(t.unique());
    t(1, 1) = 5.0;  // its own buffer: written in place
    CHECK(std::as_const(t).data() == p);
    CHECK(t(1, 1) == 5.0);
    eigen_matrix<double> const c = eigen_matrix<double>::Constant(2, 2, 3.0);
    tensor<double> const tc = as_tensor(std::move(c));  // a const one cannot be taken: copied
    CHECK(tc.data() != c.data());
    CHECK(tc(1, 0) == 3.0);
  }
  SUBCASE("a tensor of vars made from a view keeps the Eigen memory as its values; gradients flow") {
    eigen_matrix<double> m(2, 2);
    m << 1.0, -2.0, 0.5, 3.0;
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(tensor_view(m));
    CHECK(eigen_map_values(x).data() == m.data());
    var<double> const y = sum(x * x);
    CHECK(y.value() == 1.0 + 4.0 + 0.25 + 9.0);
    backward(y);
    CHECK(x(0, 1).adjoint() == -4.0);
    CHECK(x(1, 0).adjoint() == 1.0);
  }
  SUBCASE("an Eigen matrix of vars: the tensor holds the same variables") {
    tape_scope<var<double>> scope;
    eigen_matrix<var<double>> const m = variables<var<double>>(general_input());
    tensor<var<double>> const t = tensor_view(m);
    CHECK(t.data() == m.data());
    CHECK(t(0, 1).index() == m(0, 1).index());
    var<double> const y = sum(t * 3.0) + m.sum();
    backward(y);
    CHECK(m(0, 1).adjoint() == 4.0);
    CHECK(m(3, 2).adjoint() == 4.0);
  }
}

// ---- adx::linalg against Eigen ------------------------------------------------------------------
//
// The same four functions through adx::linalg (one tape node per matrix operation) on the Eigen
// matrices' elements (as_tensor): the closed forms at every order as above, and the same
// numbers as Eigen's elementwise path, first and second derivatives included.

namespace {

tensor<double> tensor_of(Vd const& v) {
  return tensor<double>(shape{std::size_t(v.size())}, std::vector<double>(v.data(), v.data() + v.size()));
}

template <class S>
S linalg_llt_logdet(M<S> const& x) {
  tensor<S> const t = as_tensor(x);
  tensor<S> const a = (t + t.transpose()) * 0.5;
  return S(2.0 * sum(log(linalg::diagonal(linalg::cholesky(a)))));
}
template <class S>
S linalg_lu_logdet(M<S> const& a) {
  return linalg::slogdet(as_tensor(a))[1].item();
}
template <class S>
S linalg_llt_bilinear(M<S> const& x) {
  tensor<S> const t = as_tensor(x);
  tensor<S> const a = (t + t.transpose()) * 0.5;
  auto const y = linalg::cholesky_solve(tensor_of(c_vector()).reshape(shape{4, 1}), linalg::cholesky(a));
  return S(sum(y.reshape(shape{4}) * tensor_of(b_vector())));
}
template <class S>
S linalg_lu_bilinear(M<S> const& a) {
  return S(sum(linalg::solve(as_tensor(a), tensor_of(c_vector())) * tensor_of(b_vector())));
}

/// f and g give the same value, gradient (var<double>) and second derivatives (var<var<double>>,
/// var<dual<double>>) at x0.
template <class F, class G>
void check_same_as_eigen(F const& f, G const& g, Md const& x0) {
  auto const [yf, gf] = value_and_gradient(f, x0);
  auto const [yg, gg] = value_and_gradient(g, x0);
  CHECK(close(yf, yg, 1e-13, 1e-15));
  check_matrix(gf, gg, 1e-12, 1e-14);
  auto const [g2f, hf] = reverse_over_reverse(f, x0, weights());
  auto const [g2g, hg] = reverse_over_reverse(g, x0, weights());
  check_matrix(hf, hg, 1e-11, 1e-13);
  auto const [g3f, hvf] = forward_over_reverse(f, x0, direction());
  auto const [g3g, hvg] = forward_over_reverse(g, x0, direction());
  check_matrix(hvf, hvg, 1e-11, 1e-13);
}

}  // namespace

TEST_CASE("eigen: adx::linalg's cholesky and solve against Eigen's LLT and PartialPivLU, every order") {
  Md const x0 = spd_input(), a0 = general_input();
  SUBCASE("log-determinant: cholesky against LLT") {
    check_all_orders([](auto const& x) { return linalg_llt_logdet(x); }, llt_logdet_gradient, x0,
                     std::log(sym(x0).determinant()));
    check_same_as_eigen([](auto const& x) { return linalg_llt_logdet(x); }, [](auto const& x) { return llt_logdet(x); },
                        x0);
  }
  SUBCASE("log-determinant: slogdet against PartialPivLU") {
    check_all_orders([](auto const& a) { return linalg_lu_logdet(a); }, lu_logdet_gradient, a0,
                     std::log(a0.determinant()));
    check_same_as_eigen([](auto const& a) { return linalg_lu_logdet(a); }, [](auto const& a) { return lu_logdet(a); },
                        a0);
  }
  SUBCASE("b^T A^-1 c: cholesky_solve against LLT") {
    check_all_orders([](auto const& x) { return linalg_llt_bilinear(x); }, sym_bilinear_gradient, x0,
                     b_vector().dot(sym(x0).inverse() * c_vector()));
    check_same_as_eigen([](auto const& x) { return linalg_llt_bilinear(x); },
                        [](auto const& x) { return llt_bilinear(x); }, x0);
  }
  SUBCASE("b^T A^-1 c: solve against PartialPivLU") {
    check_all_orders([](auto const& a) { return linalg_lu_bilinear(a); }, bilinear_gradient, a0,
                     b_vector().dot(a0.inverse() * c_vector()));
    check_same_as_eigen([](auto const& a) { return linalg_lu_bilinear(a); },
                        [](auto const& a) { return lu_bilinear(a); }, a0);
  }
}
