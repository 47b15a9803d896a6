// adx::linalg at its edges, each case one that a probe written as a user writes programs found:
// NaN inputs, rank-deficient matrices under nested modes, norms at zero and at ties, the upper
// Cholesky factor, logdet of a negative determinant, matrix_exp's scaling, large singular det,
// batched lstsq, expressions in the structural functions and the solve's shape rules.
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
double const qnan = std::numeric_limits<double>::quiet_NaN();
bool all_nan(tensor<double> const& t) {
  for (double e : t)
    if (!std::isnan(e)) return false;
  return t.size() > 0;
}
template <class F>
tensor<double> gradient_of(F const& f, tensor<double> const& x0) {
  tape_scope<var<double>> scope;
  tensor<var<double>> x(x0);
  return *gradients(var<double>(f(x)), std::vector{x})[0];
}
}  // namespace

TEST_CASE("linalg: NaN in, NaN out, where LAPACKE would refuse the input and leave it as it was") {
  // solve: the column of B without NaN is solved, the other is NaN
  auto const X = linalg::solve(tensor<double>{{2.0, 0.0}, {0.0, 4.0}}, tensor<double>{{2.0, qnan}, {4.0, 8.0}});
  CHECK(X(0, 0) == 1.0);
  CHECK(X(1, 0) == 1.0);
  CHECK(std::isnan(X(0, 1)));
  tensor<double> const An{{1.0, qnan}, {0.0, 2.0}};
  CHECK(std::isnan(linalg::det(An).item()));
  CHECK(all_nan(linalg::inv(An)));
  CHECK(all_nan(linalg::svdvals(An)));
  CHECK(all_nan(linalg::eigvalsh(tensor<double>{{2.0, 0.0}, {qnan, 3.0}})));
  CHECK(all_nan(linalg::qr(An)[1]));
  auto const L = linalg::cholesky(tensor<double>{{4.0, 0.0}, {qnan, 9.0}});  // no error: a NaN factor
  CHECK(std::isnan(L(0, 0)));
  CHECK(L(0, 1) == 0.0);
  // the same in the backward pass: a NaN cotangent of solve reaches both of b's elements
  tensor<double> const g = gradient_of(
      [](auto const& b) {
        auto const x = linalg::solve(tensor<double>{{2.0, 1.0}, {1.0, 3.0}}, b);
        return sum(x * tensor<double>{qnan, 1.0});
      },
      tensor<double>{1.0, 2.0});
  CHECK(all_nan(g));
}

TEST_CASE("linalg: the 2-norm's derivatives at a rank-deficient matrix, through nested modes, are torch's") {
  tensor<double> const Y{{3.0, 1.0, 0.0}, {1.0, 2.0, 0.0}, {0.0, 0.0, 0.0}};
  auto f = [](auto const& x) { return sum(linalg::matrix_norm(x.reshape(shape{3, 3}), 2.0)); };
  tensor<double> const g1 = functional::jacrev(f, Y.reshape(shape{9}));
  tensor<double> const g2 =
      functional::jacrev([&](auto const& x) { return functional::jacrev(f, x); }, Y.reshape(shape{9}));
  tensor<double> const H = functional::hessian(f, Y.reshape(shape{9}));
  // torch 1.13: the Hessian's first row
  std::vector<double> const h0{
      0.17888543819998318, -0.08944271909999163, 0, -0.08944271909999156, -0.17888543819998312, 0, 0, 0, 0};
  for (std::size_t j = 0; j < 9; ++j) {
    CHECK(adx_test::close(H[j], h0[j], 1e-9, 1e-12));
    CHECK(adx_test::close(g2[j], h0[j], 1e-9, 1e-12));
  }
  for (double e : g1) CHECK(std::isfinite(e));
  // the nuclear norm's gradient under var<var<double>> is finite and equal to var<double>'s
  auto nuc = [](auto const& x) { return sum(linalg::matrix_norm(x.reshape(shape{3, 3}), "nuc")); };
  tensor<double> const gn = functional::jacrev(nuc, Y.reshape(shape{9}));
  tensor<double> const hn = functional::hessian(nuc, Y.reshape(shape{9}));
  for (std::size_t j = 0; j < 81; ++j) CHECK(std::isfinite(hn[j]));
  for (double e : gn) CHECK(std::isfinite(e));
}

TEST_CASE("linalg: norms at zero have the zero gradient, and tied extremes share it, as torch's") {
  tensor<double> const Z(shape{2, 2}, 0.0);
  check_values(gradient_of([](auto const& A) { return linalg::matrix_norm(A).item(); }, Z), {0, 0, 0, 0});
  check_values(gradient_of([](auto const& A) { return linalg::norm(A).item(); }, Z), {0, 0, 0, 0});
  check_values(gradient_of([](auto const& v) { return linalg::norm(v, 3.0).item(); }, tensor<double>(shape{3}, 0.0)),
               {0, 0, 0});
  tensor<double> const I{{1.0, 0.0}, {0.0, 1.0}};
  check_values(gradient_of([](auto const& A) { return linalg::matrix_norm(A, 2.0).item(); }, I), {0.5, 0, 0, 0.5},
               1e-12, 1e-12);
  tensor<double> const ones(shape{2, 2}, 1.0);
  check_values(gradient_of([](auto const& A) { return linalg::matrix_norm(A, 1.0).item(); }, ones),
               {0.5, 0.5, 0.5, 0.5});
}

TEST_CASE("linalg: cholesky(A, upper = true) reads A's upper triangle, as torch") {
  tensor<double> const A{{4.0, 1.0, 0.5}, {1.0, 3.0, -0.2}, {0.3, -0.4, 2.0}};
  check_values(linalg::cholesky(A, true),
               {2.0, 0.5, 0.25, 0, 1.6583123951777, -0.19598237397554635, 0, 0, 1.3780750738225074}, 1e-14, 1e-15);
}

TEST_CASE("linalg: logdet of a negative determinant is NaN, and so is its gradient") {
  tensor<double> const g =
      gradient_of([](auto const& A) { return linalg::logdet(A).item(); }, tensor<double>{{1.0, 2.0}, {3.0, 4.0}});
  CHECK(all_nan(g));
}

TEST_CASE("linalg: matrix_exp's derivatives keep their accuracy whatever the cotangent's size, and inf gives NaN") {
  tensor<double> const A{{0.1, 0.4, -0.2}, {0.3, -0.5, 0.1}, {0.0, 0.2, 0.3}};
  tensor<double> const W{{1.0, -2.0, 0.5}, {0.3, 0.7, -1.1}, {2.0, 0.1, 0.4}};
  tensor<double> const g1 = gradient_of([&](auto const& x) { return sum(linalg::matrix_exp(x) * W); }, A);
  tensor<double> const g2 = gradient_of([&](auto const& x) { return sum(linalg::matrix_exp(x) * W * 1e14); }, A);
  for (std::size_t i = 0; i < 9; ++i) CHECK(adx_test::close(g2[i] / 1e14, g1[i], 1e-13, 1e-15));
  double const inf = std::numeric_limits<double>::infinity();
  CHECK(all_nan(linalg::matrix_exp(tensor<double>{{inf, 0.0}, {0.0, 1.0}})));
}

TEST_CASE("linalg: det's gradient at a 40 x 40 singular matrix is its cofactor matrix, without O(n^4) memory") {
  // A = Q diag(1, ..., 1, 0) Q^T: its cofactor matrix is q q^T, q Q's last column
  std::size_t const n = 40;
  auto const Q = linalg::qr(random_normal(shape{n, n}, 5))[0];
  tensor<double> D(shape{n, n}, 0.0);
  for (std::size_t i = 0; i + 1 < n; ++i) D(i, i) = 1.0;
  tensor<double> const A = matmul(matmul(Q, D), Q.transpose());
  tensor<double> const g = gradient_of([](auto const& x) { return linalg::det(x).item(); }, A);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) CHECK(adx_test::close(g(i, j), Q(i, n - 1) * Q(j, n - 1), 1e-8, 1e-10));
}

TEST_CASE("linalg: lstsq broadcasts batch axes of any rank") {
  tensor<double> const A = tensor<double>::generate(
      shape{2, 2, 5, 3}, [](std::size_t i) { return std::sin(1.0 + 1.3 * double(i) + 0.7 * double(i * i)); });
  tensor<double> const B =
      tensor<double>::generate(shape{2, 1, 5, 2}, [](std::size_t i) { return std::cos(double(i)); });
  auto const X = linalg::lstsq(A, B);
  CHECK(X.shape() == shape{2, 2, 3, 2});
  // each batch element against its own normal equations
  for (std::size_t p = 0; p < 2; ++p)
    for (std::size_t q = 0; q < 2; ++q) {
      tensor<double> const a = A.slice(0, long(p), long(p) + 1).slice(1, long(q), long(q) + 1).reshape(shape{5, 3});
      tensor<double> const b = B.slice(0, long(p), long(p) + 1).reshape(shape{5, 2});
      tensor<double> const want =
          linalg::solve(tensor<double>(matmul(a.transpose(), a)), tensor<double>(matmul(a.transpose(), b)));
      for (std::size_t i = 0; i < 6; ++i) CHECK(adx_test::close(X[(p * 2 + q) * 6 + i], want[i], 1e-12, 1e-13));
    }
}

TEST_CASE("linalg: structural functions take expressions, and solve's errors name the caller's shapes") {
  tensor<double> const A{{1.0, 2.0}, {3.0, 4.0}};
  check_values(linalg::tril(A * 2.0), {2, 0, 6, 8});
  check_values(linalg::triu(A + 1.0), {2, 3, 0, 5});
  check_values(linalg::diagonal(exp(A * 0.0)), {1, 1});
  CHECK(linalg::trace(A * A).item() == 17.0);  // elementwise: 1 + 16
  CHECK_THROWS_WITH_AS(linalg::trace(tensor<double>{1.0, 2.0}), doctest::Contains("linalg.trace"), shape_error);
  // a singular element of a broadcast batch: the message names the broadcast shape of A
  tensor<double> const S =
      tensor<double>::generate(shape{2, 1, 2, 2}, [](std::size_t i) { return i < 4 ? double(i % 3 == 0) : 1.0; });
  CHECK_THROWS_WITH_AS(linalg::solve(S, tensor<double>(shape{4, 2, 1}, 1.0)),
                       doctest::Contains("(input of shape [2, 4, 2, 2], batch element 4)"), linalg_error);
  // left = false: the caller's shapes, and a batch of vectors refused, as torch
  CHECK_THROWS_WITH_AS(linalg::solve(tensor<double>(shape{2, 3, 3}, 1.0), tensor<double>(shape{2, 3}, 1.0), false),
                       doctest::Contains("not of vectors (shapes [2, 3, 3] and [2, 3])"), shape_error);
  CHECK_THROWS_WITH_AS(
      linalg::solve(tensor<double>(shape{3, 3}, 1.0), tensor<double>(shape{4, 2, 1}, 1.0), false),
      doctest::Contains("number of columns of B must equal the order of A (shapes [3, 3] and [4, 2, 1])"), shape_error);
}
