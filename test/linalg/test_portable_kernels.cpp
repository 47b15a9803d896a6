// linalg/portable.hpp, the portable factorizations behind the LAPACK dispatch point, for float,
// double and long double: on random matrices (fixed seeds; sizes 0 to 33, tall and wide for the
// SVD and QR) the residuals of each factorization and solve, measured in long double against
// n eps times the matrix's size; the info codes of a singular and of a non-positive-definite
// matrix; exact values on small cases; and, when adx is built with LAPACK, agreement with
// LAPACKE called directly (factors, solutions, eigenvalues and singular values, QR's signs).
#include <doctest/doctest.h>

#include <adx/config.hpp>
#include <adx/linalg/portable.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if ADX_WITH_LAPACK
#include <lapacke.h>
#endif

namespace pk = adx::detail::portable;

namespace {

using LD = long double;

constexpr std::size_t sizes[] = {0, 1, 2, 3, 5, 12, 33};
constexpr std::pair<std::size_t, std::size_t> shapes[] = {{0, 0},  {0, 3},  {3, 0},   {1, 1},   {2, 2},
                                                          {3, 3},  {5, 5},  {12, 12}, {33, 33}, {12, 5},
                                                          {5, 12}, {33, 7}, {7, 33},  {1, 5},   {5, 1}};

/// A dense row-major matrix of long double, for measuring residuals.
struct mat {
  std::size_t rows = 0, cols = 0;
  std::vector<LD> v;
  mat(std::size_t r, std::size_t c, LD fill = 0) : rows(r), cols(c), v(r * c, fill) {}
  LD& operator()(std::size_t i, std::size_t j) { return v[i * cols + j]; }
  LD operator()(std::size_t i, std::size_t j) const { return v[i * cols + j]; }
};

template <class T>
mat to_mat(std::size_t r, std::size_t c, T const* p) {
  mat m(r, c);
  for (std::size_t i = 0; i < r * c; ++i) m.v[i] = p[i];
  return m;
}

mat identity(std::size_t n) {
  mat m(n, n);
  for (std::size_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}

mat transpose(mat const& a) {
  mat t(a.cols, a.rows);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

mat operator*(mat const& a, mat const& b) {
  REQUIRE(a.cols == b.rows);
  mat c(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t k = 0; k < a.cols; ++k)
      for (std::size_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

mat abs(mat a) {
  for (auto& x : a.v) x = std::fabs(x);
  return a;
}

LD max_abs(mat const& a) {
  LD m = 0;
  for (LD x : a.v) m = std::max(m, std::fabs(x));
  return m;
}

LD max_diff(mat const& a, mat const& b) {
  REQUIRE(a.rows == b.rows);
  REQUIRE(a.cols == b.cols);
  LD m = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) m = std::max(m, std::fabs(a.v[i] - b.v[i]));
  return m;
}

LD frobenius(mat const& a) {
  LD s = 0;
  for (LD x : a.v) s += x * x;
  return std::sqrt(s);
}

LD inf_norm(mat const& a) {  // the largest row sum of |a|
  LD m = 0;
  for (std::size_t i = 0; i < a.rows; ++i) {
    LD s = 0;
    for (std::size_t j = 0; j < a.cols; ++j) s += std::fabs(a(i, j));
    m = std::max(m, s);
  }
  return m;
}

/// c (n + 1) eps of T: the scale of every bound below.
template <class T>
LD tol(std::size_t n, LD c = 4) {
  return c * LD(n + 1) * LD(std::numeric_limits<T>::epsilon());
}

/// An r x c matrix of uniform numbers in (-1, 1), the same for every T (drawn as double).
template <class T>
std::vector<T> random_matrix(std::size_t r, std::size_t c, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> a(r * c);
  for (auto& x : a) x = T(dist(gen));
  return a;
}

template <class T>
char const* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  return "long double";
}

template <class T>
constexpr bool lapack_type = ADX_WITH_LAPACK && (std::is_same_v<T, float> || std::is_same_v<T, double>);

bool same_or_both_nan(LD a, LD b) { return a == b || (std::isnan(a) && std::isnan(b)); }

#if ADX_WITH_LAPACK
// LAPACKE's row-major drivers, by element type
lapack_int getrf(lapack_int n, double* a, lapack_int* p) { return LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, a, n, p); }
lapack_int getrf(lapack_int n, float* a, lapack_int* p) { return LAPACKE_sgetrf(LAPACK_ROW_MAJOR, n, n, a, n, p); }
lapack_int getrs(char t, lapack_int n, lapack_int k, double const* a, lapack_int const* p, double* b) {
  return LAPACKE_dgetrs(LAPACK_ROW_MAJOR, t, n, k, a, n, p, b, k);
}
lapack_int getrs(char t, lapack_int n, lapack_int k, float const* a, lapack_int const* p, float* b) {
  return LAPACKE_sgetrs(LAPACK_ROW_MAJOR, t, n, k, a, n, p, b, k);
}
lapack_int potrf(lapack_int n, double* a) { return LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, n); }
lapack_int potrf(lapack_int n, float* a) { return LAPACKE_spotrf(LAPACK_ROW_MAJOR, 'L', n, a, n); }
lapack_int trtrs(char ul, char t, char d, lapack_int n, lapack_int k, double const* a, double* b) {
  return LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, ul, t, d, n, k, a, n, b, k);
}
lapack_int trtrs(char ul, char t, char d, lapack_int n, lapack_int k, float const* a, float* b) {
  return LAPACKE_strtrs(LAPACK_ROW_MAJOR, ul, t, d, n, k, a, n, b, k);
}
lapack_int syev(lapack_int n, double* a, double* w) { return LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'L', n, a, n, w); }
lapack_int syev(lapack_int n, float* a, float* w) { return LAPACKE_ssyev(LAPACK_ROW_MAJOR, 'V', 'L', n, a, n, w); }
lapack_int gesvd(lapack_int m, lapack_int n, double* a, double* s, double* u, double* vt, double* work) {
  return LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'S', 'S', m, n, a, n, s, u, std::min(m, n), vt, n, work);
}
lapack_int gesvd(lapack_int m, lapack_int n, float* a, float* s, float* u, float* vt, float* work) {
  return LAPACKE_sgesvd(LAPACK_ROW_MAJOR, 'S', 'S', m, n, a, n, s, u, std::min(m, n), vt, n, work);
}
lapack_int geqrf(lapack_int m, lapack_int n, double* a, double* tau) {
  return LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, m, n, a, n, tau);
}
lapack_int geqrf(lapack_int m, lapack_int n, float* a, float* tau) {
  return LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, m, n, a, n, tau);
}
lapack_int orgqr(lapack_int m, lapack_int k, lapack_int lda, double* a, double const* tau) {
  return LAPACKE_dorgqr(LAPACK_ROW_MAJOR, m, k, k, a, lda, tau);
}
lapack_int orgqr(lapack_int m, lapack_int k, lapack_int lda, float* a, float const* tau) {
  return LAPACKE_sorgqr(LAPACK_ROW_MAJOR, m, k, k, a, lda, tau);
}
#endif

/// The row exchanges of piv applied to a copy of a, in order: P a.
mat permuted(mat a, std::vector<int> const& piv) {
  for (std::size_t k = 0; k < piv.size(); ++k)
    for (std::size_t j = 0; j < a.cols; ++j) std::swap(a(k, j), a(static_cast<std::size_t>(piv[k]), j));
  return a;
}

/// L (unit lower) and U (upper) of a packed LU factorization.
std::pair<mat, mat> unpack_lu(mat const& lu) {
  std::size_t const n = lu.rows;
  mat l = identity(n), u(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) (j < i ? l(i, j) : u(i, j)) = lu(i, j);
  return {l, u};
}

template <class T>
void check_lu(std::size_t n) {
  CAPTURE(n);
  auto const a = random_matrix<T>(n, n, 1000u + unsigned(n));
  auto lu = a;
  std::vector<int> piv(n, -1);
  CHECK(pk::lu_factor(n, lu.data(), piv.data()) == 0);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(static_cast<std::size_t>(piv[i]) >= i);
    CHECK(static_cast<std::size_t>(piv[i]) < n);
  }
  auto const [l, u] = unpack_lu(to_mat(n, n, lu.data()));
  mat const A = to_mat(n, n, a.data());
  LD const lu_size = max_abs(abs(l) * abs(u));
  CHECK(max_diff(l * u, permuted(A, piv)) <= tol<T>(n) * lu_size);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) CHECK(std::fabs(l(i, j)) <= 1);  // partial pivoting
  // solves with 3 right-hand sides: |B - op(A) X| <= c n eps |L| |U| |X|
  std::size_t const nrhs = 3;
  auto const b = random_matrix<T>(n, nrhs, 2000u + unsigned(n));
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    auto x = b;
    pk::lu_solve(trans, n, nrhs, lu.data(), piv.data(), x.data());
    mat const X = to_mat(n, nrhs, x.data()), B = to_mat(n, nrhs, b.data());
    mat const opA = trans ? transpose(A) : A;
    CHECK(max_diff(opA * X, B) <= tol<T>(n, 8) * inf_norm(abs(l) * abs(u)) * max_abs(X));
    if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
      auto lu_l = a;
      std::vector<lapack_int> ipiv(n + 1);
      auto const ln = static_cast<lapack_int>(n);
      CHECK(getrf(ln, lu_l.data(), ipiv.data()) == 0);
      for (std::size_t i = 0; i < n; ++i) CHECK(piv[i] == ipiv[i] - 1);
      CHECK(max_diff(to_mat(n, n, lu.data()), to_mat(n, n, lu_l.data())) <= tol<T>(n, 100) * max_abs(u));
      auto x_l = b;
      CHECK(getrs(trans ? 'T' : 'N', ln, nrhs, lu_l.data(), ipiv.data(), x_l.data()) == 0);
      CHECK(max_diff(X, to_mat(n, nrhs, x_l.data())) <= tol<T>(n, 1000) * max_abs(X));
#endif
    }
  }
  pk::lu_solve(false, n, 0, lu.data(), piv.data(), static_cast<T*>(nullptr));  // no right-hand side
}

template <class T>
void check_lu_singular() {
  {  // [[1, 2], [2, 4]]: pivot on row 1, then U(1, 1) = 0
    std::vector<T> a{1, 2, 2, 4};
    std::vector<int> piv(2);
    CHECK(pk::lu_factor(2, a.data(), piv.data()) == 2);
    CHECK(piv == std::vector<int>{1, 1});
    CHECK(a == std::vector<T>{2, 4, T(0.5), 0});
  }
  // a zero column below the diagonal at step 1, a nonzero pivot after it: info 2 and the whole
  // factorization P A = L U all the same
  std::vector<T> const a0{1, 2, 3, 2, 4, 5, 0, 0, 1};
  auto a = a0;
  std::vector<int> piv(3);
  CHECK(pk::lu_factor(3, a.data(), piv.data()) == 2);
  CHECK(piv == std::vector<int>{1, 1, 2});
  CHECK(a == std::vector<T>{2, 4, 5, T(0.5), 0, T(0.5), 0, 0, 1});
  auto const [l, u] = unpack_lu(to_mat(3, 3, a.data()));
  CHECK(max_diff(l * u, permuted(to_mat(3, 3, a0.data()), piv)) == 0);
  if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
    auto al = a0;
    std::vector<lapack_int> ipiv(3);
    CHECK(getrf(3, al.data(), ipiv.data()) == 2);
    CHECK(al == a);
    for (std::size_t i = 0; i < 3; ++i) CHECK(piv[i] == ipiv[i] - 1);
#endif
  }
}

template <class T>
void check_cholesky(std::size_t n) {
  CAPTURE(n);
  // A = M M^T + n I, symmetric positive definite; the strict upper triangle holds NaN, unread
  auto const m = random_matrix<T>(n, n, 3000u + unsigned(n));
  mat const M = to_mat(n, n, m.data());
  mat A = M * transpose(M);
  for (std::size_t i = 0; i < n; ++i) A(i, i) += LD(n);
  std::vector<T> a(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a[i * n + j] = j <= i ? T(A(i, j)) : std::numeric_limits<T>::quiet_NaN();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) A(i, j) = A(j, i) = a[i * n + j];  // A as rounded to T
  auto l = a;
  CHECK(pk::cholesky_factor(n, l.data()) == 0);
  mat const L = to_mat(n, n, l.data());
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(L(i, i) > 0);
    for (std::size_t j = i + 1; j < n; ++j) CHECK(L(i, j) == 0);
  }
  CHECK(max_diff(L * transpose(L), A) <= tol<T>(n) * max_abs(abs(L) * transpose(abs(L))));
  if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
    auto ll = a;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) ll[i * n + j] = 0;
    CHECK(potrf(static_cast<lapack_int>(n), ll.data()) == 0);
    CHECK(max_diff(L, to_mat(n, n, ll.data())) <= tol<T>(n, 100) * max_abs(L));
#endif
  }
}

template <class T>
void check_cholesky_not_pd() {
  struct case_t {
    std::size_t n;
    std::vector<T> a;
    std::size_t info;
  };
  // [[1, 2], [2, 1]]: 1 - 4 < 0 at order 2; [[4, 2, 2], [2, 5, 3], [2, 3, 1]]: 1 - 1 - 1 at order 3;
  // [[-1]] at order 1; a zero pivot [[1, 1], [1, 1]] at order 2
  std::vector<case_t> const cases{
      {2, {1, 2, 2, 1}, 2}, {3, {4, 2, 2, 2, 5, 3, 2, 3, 1}, 3}, {1, {-1}, 1}, {2, {1, 1, 1, 1}, 2}};
  for (auto const& c : cases) {
    CAPTURE(c.n);
    auto a = c.a;
    CHECK(pk::cholesky_factor(c.n, a.data()) == c.info);
    for (std::size_t i = 0; i < c.n; ++i)
      for (std::size_t j = i + 1; j < c.n; ++j) CHECK(a[i * c.n + j] == 0);
    if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
      auto al = c.a;
      CHECK(static_cast<std::size_t>(potrf(static_cast<lapack_int>(c.n), al.data())) == c.info);
#endif
    }
  }
  std::vector<T> a{4, 2, 2, 2, 5, 3, 2, 3, 1};
  pk::cholesky_factor(3, a.data());
  CHECK(a == std::vector<T>{2, 0, 0, 1, 2, 0, 1, 1, -1});  // L's first columns, then the failed pivot
}

template <class T>
void check_triangular(std::size_t n) {
  CAPTURE(n);
  std::size_t const nrhs = 4;
  auto const r = random_matrix<T>(n, n, 4000u + unsigned(n));
  auto const b = random_matrix<T>(n, nrhs, 5000u + unsigned(n));
  T const nan = std::numeric_limits<T>::quiet_NaN();
  for (bool lower : {true, false})
    for (bool trans : {false, true})
      for (bool unit : {false, true}) {
        CAPTURE(lower);
        CAPTURE(trans);
        CAPTURE(unit);
        // well conditioned: off-diagonal elements below 1/n, a diagonal in (1, 2); NaN where unread
        std::vector<T> a(n * n), clean(n * n, T(0));
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            bool const inside = lower ? j < i : j > i;
            T const x = i == j ? T(1.5) + r[i * n + j] / 2 : r[i * n + j] / T(n);
            a[i * n + j] = (inside || (i == j && !unit)) ? x : nan;
            clean[i * n + j] = (inside || i == j) ? (i == j && unit ? T(1) : x) : T(0);
          }
        auto x = b;
        pk::triangular_solve(lower, trans, unit, n, nrhs, a.data(), x.data());
        mat const A = to_mat(n, n, clean.data()), X = to_mat(n, nrhs, x.data()), B = to_mat(n, nrhs, b.data());
        mat const opA = trans ? transpose(A) : A;
        CHECK(max_diff(opA * X, B) <= tol<T>(n) * inf_norm(A) * max_abs(X));
        if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
          auto xl = b;
          CHECK(trtrs(lower ? 'L' : 'U', trans ? 'T' : 'N', unit ? 'U' : 'N', static_cast<lapack_int>(n),
                      static_cast<lapack_int>(nrhs), clean.data(), xl.data()) == 0);
          CHECK(max_diff(X, to_mat(n, nrhs, xl.data())) <= tol<T>(n, 16) * max_abs(X));
#endif
        }
      }
}

/// Checks w (ascending) and v of symmetric_eigen for the symmetric A (only its lower triangle in a).
template <class T>
void check_eigen_result(std::size_t n, mat const& A, std::vector<T> const& w, std::vector<T> const& v) {
  mat const V = to_mat(n, n, v.data());
  mat W(n, n);
  for (std::size_t i = 0; i < n; ++i) W(i, i) = w[i];
  for (std::size_t i = 1; i < n; ++i) CHECK(w[i - 1] <= w[i]);
  CHECK(max_diff(A * V, V * W) <= tol<T>(n, 8) * frobenius(A));
  CHECK(max_diff(transpose(V) * V, identity(n)) <= tol<T>(n, 8));
}

/// a with the lower triangle of A and NaN above it.
template <class T>
std::vector<T> lower_with_nan(mat const& A) {
  std::size_t const n = A.rows;
  std::vector<T> a(n * n, std::numeric_limits<T>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) a[i * n + j] = T(A(i, j));
  return a;
}

template <class T>
void check_eigen(std::size_t n) {
  CAPTURE(n);
  auto const r = random_matrix<T>(n, n, 6000u + unsigned(n));
  mat A(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) A(i, j) = A(j, i) = r[i * n + j];
  auto const a = lower_with_nan<T>(A);
  auto const a_before = a;
  std::vector<T> w(n), v(n * n);
  CHECK(pk::symmetric_eigen(n, a.data(), w.data(), v.data()) == 0);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_or_both_nan(a[i], a_before[i]));  // a not modified
  check_eigen_result(n, A, w, v);
  if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
    std::vector<T> al(n * n), wl(n);
    for (std::size_t i = 0; i < n * n; ++i) al[i] = T(A.v[i]);
    CHECK(syev(static_cast<lapack_int>(n), al.data(), wl.data()) == 0);
    mat const V = to_mat(n, n, v.data()), VL = to_mat(n, n, al.data());
    mat const overlap = transpose(V) * VL;
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(std::fabs(LD(w[j]) - LD(wl[j])) <= tol<T>(n, 8) * frobenius(A));
      CHECK(std::fabs(overlap(j, j)) >= 1 - tol<T>(n, 100));  // the same eigenvector, up to its sign
    }
#endif
  }
}

template <class T>
void check_eigen_special() {
  {  // exact values: [[2, 1], [1, 2]] has 1 and 3, with (1, -1) / sqrt 2 and (1, 1) / sqrt 2
    std::vector<T> const a{2, 0, 1, 2};
    std::vector<T> w(2), v(4);
    CHECK(pk::symmetric_eigen(2, a.data(), w.data(), v.data()) == 0);
    CHECK(std::fabs(w[0] - 1) <= 4 * std::numeric_limits<T>::epsilon());
    CHECK(std::fabs(w[1] - 3) <= 8 * std::numeric_limits<T>::epsilon());
    CHECK(std::fabs(std::fabs(v[0]) - std::sqrt(T(0.5))) <= 4 * std::numeric_limits<T>::epsilon());
    CHECK(v[0] * v[2] < 0);  // the eigenvector of 1 is (1, -1) / sqrt 2 up to sign
    CHECK(v[1] * v[3] > 0);
  }
  std::size_t const n = 6;
  // a diagonal (sorted on output), zero, a multiple of the identity, a rank-one x x^T, repeated
  // eigenvalues Q diag(1, 1, 2, 2, 2, -3) Q^T with Q from a QR, and all ones
  std::vector<mat> cases;
  mat d(n, n);
  for (std::size_t i = 0; i < n; ++i) d(i, i) = LD((i * 7) % 5) - 2;
  cases.push_back(d);
  cases.push_back(mat(n, n));
  cases.push_back(identity(n));
  for (auto& x : cases.back().v) x *= 3;
  auto const x = random_matrix<T>(n, 1, 7000u);
  cases.push_back(to_mat(n, 1, x.data()) * transpose(to_mat(n, 1, x.data())));
  auto const g = random_matrix<T>(n, n, 7001u);
  std::vector<T> q(n * n), r(n * n);
  pk::qr(n, n, g.data(), q.data(), r.data());
  mat D(n, n);
  LD const diag[n] = {1, 1, 2, 2, 2, -3};
  for (std::size_t i = 0; i < n; ++i) D(i, i) = diag[i];
  mat const Q = to_mat(n, n, q.data());
  cases.push_back(Q * D * transpose(Q));
  cases.push_back(mat(n, n, 1));  // all ones: n, and 0 n - 1 times
  for (std::size_t c = 0; c < cases.size(); ++c) {
    CAPTURE(c);
    auto const a = lower_with_nan<T>(cases[c]);
    mat A(n, n);  // as rounded to T
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) A(i, j) = A(j, i) = a[i * n + j];
    std::vector<T> w(n), v(n * n);
    CHECK(pk::symmetric_eigen(n, a.data(), w.data(), v.data()) == 0);
    check_eigen_result(n, A, w, v);
    if (c == 0) CHECK(w == std::vector<T>{-2, -2, -1, 0, 1, 2});
    if (c == 1) CHECK(w == std::vector<T>(n, T(0)));
    if (c == 2) CHECK(w == std::vector<T>(n, T(3)));
    if (c == 4)
      for (std::size_t i = 0; i < n; ++i)
        CHECK(std::fabs(w[i] - T(diag[(i + n - 1) % n])) <= tol<T>(n, 8) * frobenius(A));
    if (c == 5)
      for (std::size_t i = 0; i < n; ++i) CHECK(std::fabs(w[i] - (i + 1 == n ? T(n) : T(0))) <= tol<T>(n, 8) * LD(n));
  }
  {  // a NaN in the lower triangle: NaN out and "not converged"
    std::vector<T> a{1, 0, std::numeric_limits<T>::quiet_NaN(), 1};
    std::vector<T> w(2), v(4);
    CHECK(pk::symmetric_eigen(2, a.data(), w.data(), v.data()) > 0);
    CHECK(std::isnan(w[0]));
    CHECK(std::isnan(v[3]));
  }
}

/// Checks s (descending, >= 0), u and vt of svd for the m x n A.
template <class T>
void check_svd_result(std::size_t m, std::size_t n, mat const& A, std::vector<T> const& s, std::vector<T> const& u,
                      std::vector<T> const& vt) {
  std::size_t const k = std::min(m, n);
  mat const U = to_mat(m, k, u.data()), VT = to_mat(k, n, vt.data());
  mat S(k, k);
  for (std::size_t i = 0; i < k; ++i) {
    S(i, i) = s[i];
    CHECK(s[i] >= 0);
    if (i > 0) CHECK(s[i - 1] >= s[i]);
  }
  std::size_t const len = std::max(m, n);
  CHECK(max_diff(U * S * VT, A) <= tol<T>(len, 8) * std::max(frobenius(A), LD(1e-300)));
  CHECK(max_diff(transpose(U) * U, identity(k)) <= tol<T>(len, 8));
  CHECK(max_diff(VT * transpose(VT), identity(k)) <= tol<T>(len, 8));
}

template <class T>
void check_svd(std::size_t m, std::size_t n) {
  CAPTURE(m);
  CAPTURE(n);
  std::size_t const k = std::min(m, n);
  auto const a = random_matrix<T>(m, n, 8000u + unsigned(100 * m + n));
  auto const a_before = a;
  T const sentinel = T(-7);
  std::vector<T> s(k + 1, sentinel), u(m * k + 1, sentinel), vt(k * n + 1, sentinel);
  CHECK(pk::svd(m, n, a.data(), s.data(), u.data(), vt.data()) == 0);
  CHECK(a == a_before);
  CHECK(s.back() == sentinel);  // nothing written past the k values, the m x k u, the k x n vt
  CHECK(u.back() == sentinel);
  CHECK(vt.back() == sentinel);
  s.pop_back();
  u.pop_back();
  vt.pop_back();
  mat const A = to_mat(m, n, a.data());
  check_svd_result(m, n, A, s, u, vt);
  std::vector<T> s_only(k);
  CHECK(pk::svd(m, n, a.data(), s_only.data(), static_cast<T*>(nullptr), static_cast<T*>(nullptr)) == 0);
  CHECK(s_only == s);
  if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
    if (k == 0) return;
    auto al = a;
    std::vector<T> sl(k), ul(m * k), vtl(k * n), work(k);
    CHECK(gesvd(static_cast<lapack_int>(m), static_cast<lapack_int>(n), al.data(), sl.data(), ul.data(), vtl.data(),
                work.data()) == 0);
    mat const uu = transpose(to_mat(m, k, u.data())) * to_mat(m, k, ul.data());
    mat const vv = to_mat(k, n, vt.data()) * transpose(to_mat(k, n, vtl.data()));
    for (std::size_t j = 0; j < k; ++j) {
      CHECK(std::fabs(LD(s[j]) - LD(sl[j])) <= tol<T>(std::max(m, n), 8) * frobenius(A));
      // the same singular vectors, each pair up to one sign
      CHECK(std::fabs(uu(j, j)) >= 1 - tol<T>(std::max(m, n), 100));
      CHECK(std::fabs(vv(j, j)) >= 1 - tol<T>(std::max(m, n), 100));
      CHECK(uu(j, j) * vv(j, j) > 0);
    }
#endif
  }
}

template <class T>
void check_svd_special() {
  // zero singular values, whose vectors must still complete orthonormal sets: rank one x y^T,
  // all ones (identical columns: rotations that cancel them exactly), zero matrices
  struct case_t {
    std::size_t m, n;
    int kind;  // 0: x y^T, 1: ones, 2: zero
  };
  for (auto const& c :
       {case_t{5, 4, 0}, {4, 5, 0}, {4, 4, 0}, {12, 7, 1}, {7, 12, 1}, {12, 12, 1}, {3, 2, 2}, {2, 3, 2}}) {
    std::size_t const m = c.m, n = c.n, k = std::min(m, n);
    CAPTURE(m);
    CAPTURE(n);
    auto const x = random_matrix<T>(m, 1, 9000u), y = random_matrix<T>(1, n, 9001u);
    std::vector<T> a(m * n, T(c.kind == 1 ? 1 : 0));
    if (c.kind == 0)
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) a[i * n + j] = x[i] * y[j];
    std::vector<T> s(k), u(m * k), vt(k * n);
    CHECK(pk::svd(m, n, a.data(), s.data(), u.data(), vt.data()) == 0);
    check_svd_result(m, n, to_mat(m, n, a.data()), s, u, vt);
    LD const s0 = c.kind == 0   ? frobenius(to_mat(m, 1, x.data())) * frobenius(to_mat(1, n, y.data()))
                  : c.kind == 1 ? std::sqrt(LD(m * n))
                                : 0;
    CHECK(std::fabs(s[0] - s0) <= tol<T>(12) * (s0 + 1));
    for (std::size_t i = 1; i < k; ++i) CHECK(s[i] <= tol<T>(12) * (s0 + 1));
  }
  {  // an infinite element: NaN out and "not converged"
    std::vector<T> a{1, std::numeric_limits<T>::infinity(), 0, 1};
    std::vector<T> s(2), u(4), vt(4);
    CHECK(pk::svd(2, 2, a.data(), s.data(), u.data(), vt.data()) > 0);
    CHECK(std::isnan(s[0]));
  }
}

template <class T>
void check_qr(std::size_t m, std::size_t n) {
  CAPTURE(m);
  CAPTURE(n);
  std::size_t const k = std::min(m, n);
  auto const a = random_matrix<T>(m, n, 10000u + unsigned(100 * m + n));
  auto const a_before = a;
  T const sentinel = T(-7);
  std::vector<T> q(m * k + 1, sentinel), r(k * n + 1, sentinel);
  pk::qr(m, n, a.data(), q.data(), r.data());
  CHECK(a == a_before);
  CHECK(q.back() == sentinel);
  CHECK(r.back() == sentinel);
  mat const A = to_mat(m, n, a.data()), Q = to_mat(m, k, q.data()), R = to_mat(k, n, r.data());
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < i; ++j) CHECK(R(i, j) == 0);
  CHECK(max_diff(Q * R, A) <= tol<T>(std::max(m, n), 8) * std::max(frobenius(A), LD(1e-300)));
  CHECK(max_diff(transpose(Q) * Q, identity(k)) <= tol<T>(m, 8));
  if constexpr (lapack_type<T>) {
#if ADX_WITH_LAPACK
    if (k == 0) return;
    auto f = a;
    std::vector<T> tau(k);
    auto const lm = static_cast<lapack_int>(m), ln = static_cast<lapack_int>(n), lk = static_cast<lapack_int>(k);
    CHECK(geqrf(lm, ln, f.data(), tau.data()) == 0);
    mat RL(k, n);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i; j < n; ++j) RL(i, j) = f[i * n + j];
    CHECK(orgqr(lm, lk, ln, f.data(), tau.data()) == 0);
    mat QL(m, k);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < k; ++j) QL(i, j) = f[i * n + j];
    // the same factors, signs included (a sign difference would be of order 1)
    CHECK(max_diff(R, RL) <= tol<T>(std::max(m, n), 100) * frobenius(A));
    CHECK(max_diff(Q, QL) <= tol<T>(std::max(m, n), 100));
    for (std::size_t i = 0; i < k; ++i) CHECK(R(i, i) * RL(i, i) > 0);
#endif
  }
}

template <class T>
void check_qr_special() {
  {  // nothing below the diagonal: no reflection (tau = 0), so Q = I and R = A, negative diagonal kept
    std::vector<T> const a{-2, 1, 0, 3};
    std::vector<T> q(4), r(4);
    pk::qr(2, 2, a.data(), q.data(), r.data());
    CHECK(q == std::vector<T>{1, 0, 0, 1});
    CHECK(r == a);
  }
  {  // (3, 4)^T: beta = -sign(3) 5, so R = -5 and Q = -(0.6, 0.8)^T
    std::vector<T> const a{3, 4};
    std::vector<T> q(2), r(1);
    pk::qr(2, 1, a.data(), q.data(), r.data());
    CHECK(std::fabs(r[0] + 5) <= 8 * std::numeric_limits<T>::epsilon());
    CHECK(std::fabs(q[0] + T(3) / 5) <= 4 * std::numeric_limits<T>::epsilon());
    CHECK(std::fabs(q[1] + T(4) / 5) <= 4 * std::numeric_limits<T>::epsilon());
  }
}

/// Size 0: every routine returns 0 and writes nothing.
template <class T>
void check_empty() {
  T const sentinel = T(-7);
  std::vector<T> buf(4, sentinel);
  std::vector<int> piv(2, -1);
  CHECK(pk::lu_factor(0, buf.data(), piv.data()) == 0);
  pk::lu_solve(false, 0, 3, buf.data(), piv.data(), buf.data());
  pk::lu_solve(true, 0, 3, buf.data(), piv.data(), buf.data());
  CHECK(pk::cholesky_factor(0, buf.data()) == 0);
  pk::triangular_solve(true, false, false, 0, 3, buf.data(), buf.data());
  CHECK(pk::symmetric_eigen(0, buf.data(), buf.data(), buf.data()) == 0);
  CHECK(pk::svd(0, 3, buf.data(), buf.data(), buf.data(), buf.data()) == 0);
  CHECK(pk::svd(3, 0, buf.data(), buf.data(), buf.data(), buf.data()) == 0);
  pk::qr(0, 3, buf.data(), buf.data(), buf.data());
  pk::qr(3, 0, buf.data(), buf.data(), buf.data());
  CHECK(buf == std::vector<T>(4, sentinel));
  CHECK(piv == std::vector<int>(2, -1));
}

template <class F>
void for_each_type(F&& f) {
  f(float{});
  f(double{});
  f(0.0L);
}

}  // namespace

TEST_CASE("linalg portable kernels: LU with partial pivoting and its solves") {
  for_each_type([](auto t) {
    using T = decltype(t);
    CAPTURE(std::string(type_name<T>()));
    for (std::size_t n : sizes) check_lu<T>(n);
    check_lu_singular<T>();
  });
}

TEST_CASE("linalg portable kernels: Cholesky and its info for matrices that are not positive definite") {
  for_each_type([](auto t) {
    using T = decltype(t);
    CAPTURE(std::string(type_name<T>()));
    for (std::size_t n : sizes) check_cholesky<T>(n);
    check_cholesky_not_pd<T>();
  });
}

TEST_CASE("linalg portable kernels: triangular solves (lower or upper / transposed or not / unit or not)") {
  for_each_type([](auto t) {
    using T = decltype(t);
    CAPTURE(std::string(type_name<T>()));
    for (std::size_t n : sizes) check_triangular<T>(n);
  });
}

TEST_CASE("linalg portable kernels: symmetric eigenvalues and eigenvectors by Jacobi") {
  for_each_type([](auto t) {
    using T = decltype(t);
    CAPTURE(std::string(type_name<T>()));
    for (std::size_t n : sizes) check_eigen<T>(n);
    check_eigen_special<T>();
  });
}

TEST_CASE("linalg portable kernels: thin SVD by one-sided Jacobi (square and tall and wide)") {
  for_each_type([](auto t) {
    using T = decltype(t);
    CAPTURE(std::string(type_name<T>()));
    for (auto [m, n] : shapes) check_svd<T>(m, n);
    check_svd_special<T>();
  });
}

TEST_CASE("linalg portable kernels: Householder QR with LAPACK's signs (square and tall and wide)") {
  for_each_type([](auto t) {
    using T = decltype(t);
    CAPTURE(std::string(type_name<T>()));
    for (auto [m, n] : shapes) check_qr<T>(m, n);
    check_qr_special<T>();
  });
}

TEST_CASE("linalg portable kernels: size 0 returns 0 and writes nothing") {
  for_each_type([](auto t) { check_empty<decltype(t)>(); });
}
