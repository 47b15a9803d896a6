// adx::linalg as users call it: batches that broadcast, float, empty matrices, operands of
// different nesting levels and expressions, one tape node per operation, third derivatives,
// the edge values (singular det and slogdet, negative logdet) and the errors' words.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::check_values;

namespace {
tensor<double> const A3{{4.0, 1.0, 0.5}, {1.0, 3.0, 0.2}, {0.5, 0.2, 2.0}};
tensor<double> const B3{{1.0, 2.0}, {0.5, -1.0}, {0.3, 0.7}};
}  // namespace

TEST_CASE("linalg: batch axes broadcast as torch's, and each batch element is its own system") {
  tensor<double> A = tensor<double>::generate(shape{2, 1, 3, 3}, [](std::size_t i) {
    return A3[i % 9] + (i / 9 == 1 ? 0.5 * double(i % 3 == (i / 3) % 3) : 0.0);
  });
  tensor<double> const B =
      tensor<double>::generate(shape{4, 3, 2}, [](std::size_t i) { return B3[i % 6] * double(1 + i / 6); });
  auto const X = linalg::solve(A, B);
  CHECK(X.shape() == shape{2, 4, 3, 2});
  for (std::size_t p = 0; p < 2; ++p)
    for (std::size_t q = 0; q < 4; ++q) {
      auto const Ap = A.slice(0, long(p), long(p) + 1).reshape(shape{3, 3});
      auto const Bq = B.slice(0, long(q), long(q) + 1).reshape(shape{3, 2});
      auto const want = linalg::solve(Ap, Bq);
      for (std::size_t i = 0; i < 6; ++i) CHECK(adx_test::close(X[(p * 4 + q) * 6 + i], want[i], 1e-14, 1e-15));
    }
  // the gradient of a broadcast operand sums over the batch elements that used it
  tensor<var<double>> Bv(B3);
  tensor<var<double>> Av(A);
  var<double> const l = sum(linalg::solve(Av, Bv));
  auto const g = gradients(l, std::vector{Bv});
  tensor<double> const ones(shape{3, 2}, 1.0);
  // B is shared by both batch elements: its gradient is A_0^-T 1 + A_1^-T 1
  tensor<double> const want = linalg::solve(A.slice(0, 0, 1).reshape(shape{3, 3}).transpose(), ones) +
                              linalg::solve(A.slice(0, 1, 2).reshape(shape{3, 3}).transpose(), ones);
  check_values(*g[0], std::vector<double>(want.begin(), want.end()), 1e-13, 1e-14);
  // a batch of vectors: B's shape is A's without the last axis
  auto const x = linalg::solve(A.reshape(shape{2, 3, 3}), tensor<double>{{1.0, 2.0, 3.0}, {0.5, 0.5, 0.5}});
  CHECK(x.shape() == shape{2, 3});
}

TEST_CASE("linalg: float matrices stay float, through LAPACK's single precision") {
  tensor<float> const A = tensor<float>::generate(A3.shape(), [](std::size_t i) { return float(A3[i]); });
  auto const L = linalg::cholesky(A);
  static_assert(std::is_same_v<decltype(L), tensor<float> const>);
  auto const Ld = linalg::cholesky(A3);
  for (std::size_t i = 0; i < 9; ++i) CHECK(std::abs(double(L[i]) - Ld[i]) < 1e-6);
  tensor<var<float>> Av(A);
  var<float> const d = sum(linalg::det(Av));
  auto const g = gradients(d, std::vector{Av});
  auto const cof = tensor<double>(linalg::inv(A3).transpose() * linalg::det(A3).item());
  for (std::size_t i = 0; i < 9; ++i) CHECK(std::abs(double((*g[0])[i]) - cof[i]) < 1e-4);
}

TEST_CASE("linalg: empty matrices and empty batches give empty results") {
  tensor<double> const E(shape{0, 0});
  CHECK(linalg::det(E).item() == 1.0);  // the empty product, as torch
  CHECK(linalg::inv(E).shape() == shape{0, 0});
  CHECK(linalg::cholesky(E).shape() == shape{0, 0});
  CHECK(linalg::solve(tensor<double>(shape{0, 3, 3}), tensor<double>(shape{0, 3, 2})).shape() == shape{0, 3, 2});
  tensor<var<double>> Ev(shape{0, 0});
  CHECK(linalg::eigh(Ev)[0].shape() == shape{0});
}

TEST_CASE("linalg: one tape node per operation, whatever the size") {
  tape_scope<var<double>> scope;
  tensor<var<double>> A(tensor<double>(A3 + 0.0));
  auto const before = tape<double>::current().stats().nodes;
  auto const L = linalg::cholesky(A);
  CHECK(tape<double>::current().stats().nodes == before + 1);
  auto const [s, l] = linalg::slogdet(A);
  CHECK(tape<double>::current().stats().nodes == before + 2);
  (void)L, (void)s, (void)l;
}

TEST_CASE("linalg: operands of different levels meet at the higher one, and expressions are taken") {
  tensor<var<double>> B(B3);
  auto const X = linalg::solve(A3, B);  // A constant, B variables
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(X)>, tensor<var<double>>>);
  var<double> const l = sum(X);
  auto const g = gradients(l, std::vector{B});
  tensor<double> const want = linalg::solve(A3.transpose(), tensor<double>(shape{3, 2}, 1.0));
  check_values(*g[0], std::vector<double>(want.begin(), want.end()), 1e-14, 1e-15);
  tensor<var<double>> A(A3);
  auto const Y = linalg::solve(A * 2.0 + 1.0, B3);  // an unevaluated expression
  tensor<double> const y = linalg::solve(tensor<double>(A3 * 2.0 + 1.0), B3);
  check_values(adx_test::primals(Y), std::vector<double>(y.begin(), y.end()), 1e-14, 1e-15);
}

TEST_CASE("linalg: third derivatives of log det through three nested reverse levels") {
  // d^3/dt^3 logdet(A + t V) at t = 0 is 2 tr((A^-1 V)^3)
  tensor<double> const V{{0.3, -0.1, 0.2}, {0.4, 0.1, 0.0}, {-0.2, 0.5, 0.3}};
  using V3 = var<var<var<double>>>;
  tape_scope<var<double>> s1;
  var<double> t1 = 0.0;
  tape_scope<var<var<double>>> s2;
  var<var<double>> t2 = t1;
  tape_scope<V3> s3;
  V3 t3 = t2;
  tensor<V3> const M = tensor<V3>(A3) * 0.0 + A3 + t3 * V;
  V3 const y = linalg::logdet(M).item();
  auto const d1 = gradients(y, std::vector{t3});
  auto const d2 = gradients(*d1[0], std::vector{t2});
  auto const d3 = gradients(*d2[0], std::vector{t1});
  tensor<double> const P = linalg::solve(A3, V);
  tensor<double> const P3 = matmul(matmul(P, P), P);
  CHECK(adx_test::close(*d3[0], 2 * linalg::trace(P3).item(), 1e-12, 1e-13));
  tensor<double> const P2 = matmul(P, P);
  CHECK(adx_test::close(primal(*d2[0]), -linalg::trace(P2).item(), 1e-12, 1e-13));
}

TEST_CASE("linalg: det at a singular matrix has the cofactor gradient in every mode") {
  tensor<double> const S{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {7.0, 8.0, 9.0}};
  std::vector<double> const cof{-3, 6, -3, 6, -12, 6, -3, 6, -3};
  tensor<var<double>> Sv(S);
  auto const g = gradients(linalg::det(Sv).item(), std::vector{Sv});
  check_values(*g[0], cof, 1e-12, 1e-12);
  // forward mode along each unit direction
  for (std::size_t e = 0; e < 9; ++e) {
    tensor<dual<double>> const Sd = tensor<dual<double>>::generate(
        S.shape(), [&](std::size_t i) { return dual<double>(S[i], i == e ? 1.0 : 0.0); });
    CHECK(adx_test::close(linalg::det(Sd).item().tangent(), cof[e], 1e-12, 1e-12));
  }
}

TEST_CASE("linalg: slogdet of a singular matrix, logdet of a negative determinant") {
  tensor<double> const S{{1.0, 2.0}, {2.0, 4.0}};
  auto const [sign, logabs] = linalg::slogdet(S);
  CHECK(sign.item() == 0.0);
  CHECK(logabs.item() == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(linalg::logdet(tensor<double>{{0.0, 1.0}, {1.0, 0.0}}).item()));
  CHECK(linalg::logdet(S).item() == -std::numeric_limits<double>::infinity());
}

TEST_CASE("linalg: errors name the function, the shape and the batch element") {
  tensor<double> A =
      tensor<double>::generate(shape{2, 2, 2}, [](std::size_t i) { return i < 4 ? double(i == 0 || i == 3) : 1.0; });
  CHECK_THROWS_WITH_AS(linalg::inv(A),
                       doctest::Contains("linalg.inv: the input matrix is singular: U(1,1) of its LU factorization is "
                                         "zero (input of shape [2, 2, 2], batch element 1)"),
                       linalg_error);
  CHECK_THROWS_WITH_AS(
      linalg::cholesky(tensor<double>{{1.0, 0.0}, {0.0, -1.0}}),
      doctest::Contains("leading minor of order 2 is not positive-definite (input of shape [2, 2], batch element 0)"),
      linalg_error);
  CHECK_THROWS_WITH_AS(linalg::solve(A3, tensor<double>{1.0, 2.0}),
                       doctest::Contains("the number of rows of B must equal the order of A"), shape_error);
  CHECK_THROWS_WITH_AS(linalg::det(tensor<double>{1.0, 2.0}),
                       doctest::Contains("linalg.det: needs a matrix or a batch of matrices"), shape_error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(A3, "max"), doctest::Contains("ord must be"), value_error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(A3, 3.0), doctest::Contains("ord must be"), value_error);
}

TEST_CASE("linalg: structural functions move elements (tril, triu, diagonal, diag, trace)") {
  check_values(linalg::tril(A3), {4, 0, 0, 1, 3, 0, 0.5, 0.2, 2});
  check_values(linalg::triu(A3, 1), {0, 1, 0.5, 0, 0, 0.2, 0, 0, 0});
  check_values(linalg::diagonal(A3), {4, 3, 2});
  check_values(linalg::diag(tensor<double>{1.0, 2.0}), {1, 0, 0, 2});
  CHECK(linalg::trace(A3).item() == 9.0);
  tensor<var<double>> Av(A3);
  auto const before = tape<double>::current().stats().statements;
  auto const t = linalg::tril(Av);
  CHECK(tape<double>::current().stats().statements == before);  // nothing recorded
  auto const g = gradients(var<double>(sum(t * A3)), std::vector{Av});
  check_values(*g[0], {4, 0, 0, 1, 3, 0, 0.5, 0.2, 2});
}

TEST_CASE("linalg: norm as torch.linalg.norm (a vector's p-norms, a matrix's norms) with torch's gradients") {
  tensor<double> const v{3.0, -4.0};
  CHECK(linalg::norm(v).item() == 5.0);
  CHECK(linalg::norm(v, 1.0).item() == 7.0);
  CHECK(linalg::norm(v, INFINITY).item() == 4.0);
  CHECK(linalg::norm(v, -INFINITY).item() == 3.0);
  tensor<double> const A{{1.0, 2.0}, {3.0, 4.0}};
  CHECK(adx_test::close(linalg::norm(A).item(), std::sqrt(30.0), 1e-15, 0));
  CHECK(adx_test::close(linalg::norm(A, "nuc").item(), 5.8309518948453, 1e-13, 0));
  // torch.linalg.norm(v, 3) and torch.linalg.norm(A, 2), float64, and their gradients
  tensor<var<double>> x(v);
  var<double> const n3 = linalg::norm(x, 3.0).item();
  CHECK(adx_test::close(n3.val(), 4.497941445275415, 1e-14, 0));
  check_values(*gradients(n3, std::vector{x})[0], {0.4448513517305356, -0.7908468475209521}, 1e-14, 1e-15);
  tensor<var<double>> Av(A);
  var<double> const n2 = linalg::norm(Av, 2.0).item();
  CHECK(adx_test::close(n2.val(), 5.464985704219043, 1e-14, 0));
  check_values(*gradients(n2, std::vector{Av})[0],
               {0.2330424601316969, 0.3306883952871801, 0.5268045304253642, 0.7475382155592232}, 1e-12, 1e-14);
  // ord 0 counts the non-zero elements; a negative ord is sum(|x|^p)^(1/p), 0 with a zero element
  CHECK(linalg::norm(tensor<double>{3.0, 0.0, -4.0}, 0.0).item() == 2.0);
  CHECK(linalg::norm(tensor<double>{3.0, 0.0, -4.0}, -1.0).item() == 0.0);
  CHECK(adx_test::close(linalg::norm(tensor<double>{3.0, 1.0, -4.0}, -1.5).item(), 0.8321032515512563, 1e-14, 0));
  CHECK_THROWS_WITH_AS(linalg::norm(v, std::nan("")), doctest::Contains("ord is NaN"), value_error);
}

TEST_CASE(
    "linalg: the blocked reverse Cholesky over numbers equals the matrix rule over AD values, sizes past a block") {
  // var<double> takes the blocked in-place rule (lapack.hpp); the first derivatives of
  // var<var<double>> take the rule written with tensor operations
  for (std::size_t n : {47, 48, 49, 100, 130}) {
    INFO("n = " << n);
    tensor<double> const M = random_normal(shape{n, n}, n);
    tensor<double> const A =
        tensor<double>(matmul(M, M.transpose()) * (1.0 / double(n))) + linalg::diag(tensor<double>(shape{n}, 1.0));
    tensor<double> const W = random_normal(shape{n, n}, n + 1);
    tensor<double> fast, generic;
    {
      tape_scope<var<double>> scope;
      tensor<var<double>> x(A);
      fast = *gradients(var<double>(sum(linalg::cholesky(x) * W)), std::vector{x})[0];
    }
    {
      tape_scope<var<double>> inner;
      tape_scope<var<var<double>>> outer;
      tensor<var<var<double>>> x(A);
      auto const g = *gradients(var<var<double>>(sum(linalg::cholesky(x) * W)), std::vector{x})[0];
      generic = adx_test::primals(g);
    }
    for (std::size_t i = 0; i < n * n; ++i) CHECK(adx_test::close(fast[i], generic[i], 1e-10, 1e-12));
  }
  // cholesky_solve with an upper factor: X = (U^T U)^-1 B
  tensor<double> const U{{2.0, 0.5, -0.3}, {0.0, 1.5, 0.2}, {0.0, 0.0, 1.1}};
  tensor<double> const B{{1.0, 0.0}, {2.0, 1.0}, {-1.0, 3.0}};
  tensor<double> const X = linalg::cholesky_solve(B, U, true);
  tensor<double> const want = linalg::solve(tensor<double>(matmul(U.transpose(), U)), B);
  check_values(X, std::vector<double>(want.begin(), want.end()), 1e-13, 1e-14);
}

TEST_CASE(
    "linalg: solve and logdet of one matrix share its factorization, and memory changed in place is factored again") {
  tape_scope<var<double>> scope;
  tensor<var<double>> A(A3);
  var<double> const f = sum(linalg::solve(A, B3)) + linalg::logdet(A).item();
  auto const g = *gradients(f, std::vector{A})[0];
  // d/dA [sum(A^-1 B) + logdet A] = -A^-T 1 (A^-1 B)^T summed over B's columns + A^-T
  tensor<double> const X = linalg::solve(A3, B3);
  tensor<double> const y = linalg::solve(A3.transpose(), tensor<double>(shape{3, 2}, 1.0));
  tensor<double> const want = tensor<double>(-matmul(y, X.transpose())) + linalg::inv(A3).transpose();
  check_values(g, std::vector<double>(want.begin(), want.end()), 1e-13, 1e-14);
  // a tensor over memory it does not own (as over an Eigen matrix): a change in place is seen
  std::vector<double> m{2.0, 0.0, 0.0, 4.0};
  tensor<double> const view = detail::tensor_access::borrowed(shape{2, 2}, m.data());
  CHECK(linalg::solve(view, tensor<double>{2.0, 4.0})[0] == 1.0);
  m[0] = 1.0;
  CHECK(linalg::solve(view, tensor<double>{2.0, 4.0})[0] == 2.0);
}
