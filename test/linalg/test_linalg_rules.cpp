// Every linalg operation, sizes 1 to 12 and a batch, on random well-conditioned inputs: the
// gradient by reverse mode against forward mode and central differences, and the
// Hessian-vector product by forward over reverse against reverse over reverse, nested duals
// and central differences of the gradient.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;

namespace {

using inputs = std::vector<tensor<double>>;

/// An n x n matrix with singular values kept away from 0 (diagonally dominant), batched when b > 0.
tensor<double> well_conditioned(std::size_t n, std::size_t b, std::uint64_t seed) {
  shape const sh = b ? shape{b, n, n} : shape{n, n};
  tensor<double> a = random_normal(sh, seed, 0.0, 0.5);
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((i / n) % n == i % n) a[i] += 2.5 + 0.1 * double(i % n);
  return a;
}
/// A symmetric positive definite matrix M M^T / n + I.
tensor<double> spd(std::size_t n, std::size_t b, std::uint64_t seed) {
  tensor<double> const m = random_normal(b ? shape{b, n, n} : shape{n, n}, seed);
  tensor<double> s = matmul(m, m.transpose(-2, -1)) * (1.0 / double(n));
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((i / n) % n == i % n) s[i] += 1.0;
  return s;
}
/// A symmetric matrix with well separated eigenvalues: Q diag(1, 2, ..., n) Q^T plus noise-free shift.
tensor<double> separated_symmetric(std::size_t n, std::size_t b, std::uint64_t seed) {
  auto const [Q, R] = linalg::qr(random_normal(b ? shape{b, n, n} : shape{n, n}, seed));
  tensor<double> d(b ? shape{b, n} : shape{n});
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = 1.0 + double(i % n) - 0.3 * double(n) + 0.05 * double(i / n);
  (void)R;
  tensor<double> const D =
      b ? tensor<double>(d.reshape(shape{b, 1, n}) * linalg::diag(tensor<double>(shape{n}, 1.0))) : linalg::diag(d);
  return matmul(matmul(Q, D), Q.transpose(-2, -1));
}

template <class S>
tensor<S> sym(tensor<S> const& a) {
  return tensor<S>((a + a.transpose(-2, -1)) * 0.5);
}

/// One operation under test: its inputs for size n (batch b; 0: none) and the tensor it gives.
struct operation {
  std::string name;
  std::function<inputs(std::size_t n, std::size_t b)> make;
  bool batches = true;
};

template <class S>
using tensors = std::vector<tensor<S>>;

/// f over the element types the checks use; the value is one tensor.
#define ADX_LINALG_OP(...)                                                        \
  [&](auto const& in) {                                                           \
    using S = typename std::remove_cvref_t<decltype(in)>::value_type::value_type; \
    (void)sizeof(S);                                                              \
    return tensor<S>(__VA_ARGS__);                                                \
  }

template <class S, class F>
S loss(F const& f, tensors<S> const& x, tensor<double> const& w) {
  return S(sum(f(x) * w));
}

template <class S, class T>
tensors<S> at(inputs const& x, std::vector<tensor<T>> const* tangents = nullptr) {
  tensors<S> r;
  for (std::size_t k = 0; k < x.size(); ++k) {
    if constexpr (std::is_same_v<S, dual<double>> || std::is_same_v<S, var<dual<double>>>) {
      r.push_back(tensor<S>(tensor<dual<double>>::generate(
          x[k].shape(), [&](std::size_t i) { return dual<double>(x[k][i], tangents ? (*tangents)[k][i] : 0.0); })));
    } else {
      r.push_back(tensor<S>(x[k]));
    }
  }
  return r;
}

inputs shifted(inputs const& x, inputs const& v, double h) {
  inputs r;
  for (std::size_t k = 0; k < x.size(); ++k) r.push_back(tensor<double>(x[k] + h * v[k]));
  return r;
}

template <class F>
inputs gradient_at(F const& f, inputs const& x, tensor<double> const& w) {
  tape_scope<var<double>> scope;
  auto const xv = at<var<double>, double>(x);
  auto const g = gradients(loss(f, xv, w), xv);
  inputs r;
  for (std::size_t k = 0; k < x.size(); ++k) r.push_back(g[k] ? *g[k] : tensor<double>(x[k].shape(), 0.0));
  return r;
}

double dot(inputs const& a, inputs const& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t i = 0; i < a[k].size(); ++i) s += a[k][i] * b[k][i];
  return s;
}

template <class F>
void check_operation(std::string const& name, F const& f, inputs const& x, std::uint64_t seed) {
  INFO(name << ", input shape " << x[0].shape());
  auto const y = f(x);
  tensor<double> const w = random_normal(y.shape(), seed + 1);
  inputs v;
  for (std::size_t k = 0; k < x.size(); ++k) v.push_back(random_normal(x[k].shape(), seed + 2 + k));

  // gradient: reverse, forward, central differences
  inputs const g = gradient_at(f, x, w);
  double const gv = dot(g, v);
  auto const xd = at<dual<double>, double>(x, &v);
  double const fwd = loss(f, xd, w).tangent();
  double const h = 1e-5;
  double const fd =
      (loss(f, at<double, double>(shifted(x, v, h)), w) - loss(f, at<double, double>(shifted(x, v, -h)), w)) / (2 * h);
  CHECK(adx_test::close(fwd, gv, 1e-10, 1e-10));
  CHECK(adx_test::close(fd, gv, 1e-6, 1e-7));

  // Hessian-vector product: forward over reverse
  inputs hv_fr;
  {
    tape_scope<var<dual<double>>> scope;
    auto const xs = at<var<dual<double>>, double>(x, &v);
    auto const gg = gradients(loss(f, xs, w), xs);
    for (std::size_t k = 0; k < x.size(); ++k)
      hv_fr.push_back(gg[k]
                          ? tensor<double>::generate(x[k].shape(), [&](std::size_t i) { return (*gg[k])[i].tangent(); })
                          : tensor<double>(x[k].shape(), 0.0));
  }
  // reverse over reverse: the gradient recorded, then the gradient of <g, v>
  inputs hv_rr;
  {
    tape_scope<var<double>> inner_scope;
    std::vector<tensor<var<double>>> inner;
    for (auto const& t : x) inner.push_back(tensor<var<double>>(t));
    tape_scope<var<var<double>>> outer_scope;
    tensors<var<var<double>>> xs;
    for (auto const& t : inner) xs.push_back(tensor<var<var<double>>>(t));
    auto const gg = gradients(loss(f, xs, w), xs);
    var<double> gvv = 0.0;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (gg[k]) gvv = var<double>(gvv + sum(*gg[k] * v[k]));
    auto const h2 = gradients(gvv, inner);
    for (std::size_t k = 0; k < x.size(); ++k) hv_rr.push_back(h2[k] ? *h2[k] : tensor<double>(x[k].shape(), 0.0));
  }
  // central differences of the gradient, and v^T H v by nested duals
  inputs const gp = gradient_at(f, shifted(x, v, h), w), gm = gradient_at(f, shifted(x, v, -h), w);
  for (std::size_t k = 0; k < x.size(); ++k)
    for (std::size_t i = 0; i < x[k].size(); ++i) {
      INFO("input " << k << ", element " << i);
      CHECK(adx_test::close(hv_rr[k][i], hv_fr[k][i], 1e-9, 1e-9));
      CHECK(adx_test::close((gp[k][i] - gm[k][i]) / (2 * h), hv_fr[k][i], 1e-5, 1e-6));
    }
  using D2 = dual<dual<double>>;
  tensors<D2> x2;
  for (std::size_t k = 0; k < x.size(); ++k)
    x2.push_back(tensor<D2>::generate(
        x[k].shape(), [&](std::size_t i) { return D2(dual<double>(x[k][i], v[k][i]), dual<double>(v[k][i], 0.0)); }));
  CHECK(adx_test::close(loss(f, x2, w).tangent().tangent(), dot(v, hv_fr), 1e-9, 1e-9));
}

template <class F>
void check_sizes(std::string const& name, F const& f, std::function<inputs(std::size_t, std::size_t)> const& make,
                 bool batches = true) {
  std::uint64_t seed = 100;
  for (std::size_t n : {1, 2, 3, 5, 8, 12}) check_operation(name, f, make(n, 0), seed += 10);
  if (batches) check_operation(name, f, make(3, 2), seed += 10);
}

}  // namespace

TEST_CASE("linalg rules: solve, inv and solve_triangular, every mode against central differences") {
  auto square_and_rhs = [](std::size_t n, std::size_t b) {
    return inputs{well_conditioned(n, b, 7 * n + b), random_normal(b ? shape{b, n, 2} : shape{n, 2}, 11 * n)};
  };
  check_sizes("solve", ADX_LINALG_OP(linalg::solve(in[0], in[1])), square_and_rhs);
  check_sizes("solve, left = false", ADX_LINALG_OP(linalg::solve(in[0], in[1].transpose(-2, -1), false)),
              square_and_rhs);
  check_sizes(
      "solve, a vector", ADX_LINALG_OP(linalg::solve(in[0], in[1].slice(-1, 0, 1).reshape(shape{in[1].shape()[0]}))),
      [&](std::size_t n, std::size_t) { return square_and_rhs(n, 0); }, false);
  check_sizes("inv", ADX_LINALG_OP(linalg::inv(in[0])), square_and_rhs);
  check_sizes("solve_triangular, upper", ADX_LINALG_OP(linalg::solve_triangular(in[0], in[1], true)), square_and_rhs);
  check_sizes("solve_triangular, lower, unit",
              ADX_LINALG_OP(linalg::solve_triangular(in[0], in[1], false, {.unitriangular = true})), square_and_rhs);
  check_sizes("solve_triangular, lower, right",
              ADX_LINALG_OP(linalg::solve_triangular(in[0], in[1].transpose(-2, -1), false, {.left = false})),
              square_and_rhs);
}

TEST_CASE("linalg rules: cholesky, cholesky_solve, cholesky_inverse, every mode against central differences") {
  auto spd_and_rhs = [](std::size_t n, std::size_t b) {
    return inputs{spd(n, b, 5 * n + b), random_normal(b ? shape{b, n, 2} : shape{n, 2}, 13 * n)};
  };
  check_sizes("cholesky", ADX_LINALG_OP(linalg::cholesky(sym(in[0]))), spd_and_rhs);
  check_sizes("cholesky, upper", ADX_LINALG_OP(linalg::cholesky(sym(in[0]), true)), spd_and_rhs);
  check_sizes("cholesky_solve", ADX_LINALG_OP(linalg::cholesky_solve(in[1], linalg::cholesky(sym(in[0])))),
              spd_and_rhs);
  check_sizes("cholesky_inverse", ADX_LINALG_OP(linalg::cholesky_inverse(linalg::cholesky(sym(in[0])))), spd_and_rhs);
}

TEST_CASE("linalg rules: det, slogdet, logdet and trace, every mode against central differences") {
  auto square = [](std::size_t n, std::size_t b) { return inputs{well_conditioned(n, b, 3 * n + b)}; };
  check_sizes("det", ADX_LINALG_OP(linalg::det(in[0])), square);
  check_sizes("slogdet", ADX_LINALG_OP(linalg::slogdet(in[0])[1]), square);
  check_sizes("logdet", ADX_LINALG_OP(linalg::logdet(in[0])),
              [](std::size_t n, std::size_t b) { return inputs{spd(n, b, n)}; });
  check_sizes("trace", ADX_LINALG_OP(linalg::trace(in[0])), square);
}

TEST_CASE("linalg rules: eigh, svdvals and the matrix norms, every mode against central differences") {
  auto symmetric = [](std::size_t n, std::size_t b) { return inputs{separated_symmetric(n, b, 17 * n + b)}; };
  check_sizes("eigh: eigenvalues", ADX_LINALG_OP(linalg::eigh(sym(in[0]))[0]), symmetric);
  check_sizes(
      "eigh: V diag(sin w) V^T", ADX_LINALG_OP([&] {
        auto const [w, V] = linalg::eigh(sym(in[0]));
        std::size_t const n = w.shape()[w.rank() - 1];
        tensor<S> const Vs = V * tensor<S>(sin(w)).reshape(V.rank() == 3 ? shape{V.shape()[0], 1, n} : shape{1, n});
        return tensor<S>(matmul(Vs, V.transpose(-2, -1)));
      }()),
      symmetric);
  auto general = [](std::size_t n, std::size_t b) { return inputs{well_conditioned(n, b, 19 * n + b)}; };
  check_sizes("svdvals", ADX_LINALG_OP(linalg::svdvals(in[0])), general);
  check_sizes("svdvals, tall",
              ADX_LINALG_OP(linalg::svdvals(
                  tensor<S>(in[0].slice(-1, 0, std::max<long>(1, long(in[0].shape()[in[0].rank() - 1]) - 1))))),
              general);
  check_sizes("svdvals, wide",
              ADX_LINALG_OP(linalg::svdvals(
                  tensor<S>(in[0].slice(-2, 0, std::max<long>(1, long(in[0].shape()[in[0].rank() - 2]) - 1))))),
              general);
  check_sizes("matrix_norm fro", ADX_LINALG_OP(linalg::matrix_norm(in[0])), general);
  check_sizes("matrix_norm nuc", ADX_LINALG_OP(linalg::matrix_norm(in[0], "nuc")), general);
  check_sizes("matrix_norm 2", ADX_LINALG_OP(linalg::matrix_norm(in[0], 2.0)), general);
  check_sizes("matrix_norm -2", ADX_LINALG_OP(linalg::matrix_norm(in[0], -2.0)), general);
  check_sizes("matrix_norm 1", ADX_LINALG_OP(linalg::matrix_norm(in[0], 1.0)), general);
  check_sizes("matrix_norm inf", ADX_LINALG_OP(linalg::matrix_norm(in[0], INFINITY)), general);
}

TEST_CASE("linalg rules: qr (square, tall, wide), lstsq and matrix_exp, every mode against central differences") {
  auto general = [](std::size_t n, std::size_t b) { return inputs{well_conditioned(n, b, 23 * n + b)}; };
  // a sign-free function of Q and R: Q diag(s) and diag(s) R with s = sign(diag(R)) fixed
  auto normalized = [](auto const& A) {
    using S = typename std::remove_cvref_t<decltype(A)>::value_type;
    auto const [Q, R] = linalg::qr(A);
    auto const d = linalg::diagonal(R);
    tensor<double> const s =
        tensor<double>::generate(d.shape(), [&](std::size_t i) { return primal(d[i]) < 0 ? -1.0 : 1.0; });
    shape col = s.shape();
    col.push_back(1);
    tensor<S> const Qn = Q * (s.rank() == 2 ? s.reshape(shape{s.shape()[0], 1, s.shape()[1]}) : s);
    tensor<S> const Rn = R * s.reshape(col);
    return concat({Qn.reshape({-1}), Rn.reshape({-1})});
  };
  check_sizes("qr", ADX_LINALG_OP(normalized(in[0])), general);
  check_sizes("qr, tall",
              ADX_LINALG_OP(normalized(
                  tensor<S>(in[0].slice(-1, 0, std::max<long>(1, long(in[0].shape()[in[0].rank() - 1]) - 1))))),
              general);
  check_sizes("qr, wide",
              ADX_LINALG_OP(normalized(
                  tensor<S>(in[0].slice(-2, 0, std::max<long>(1, long(in[0].shape()[in[0].rank() - 2]) - 1))))),
              general);
  auto tall_and_rhs = [](std::size_t n, std::size_t) {
    return inputs{random_normal(shape{n + 2, n}, 29 * n), random_normal(shape{n + 2, 2}, 31 * n)};
  };
  check_sizes("lstsq, tall", ADX_LINALG_OP(linalg::lstsq(in[0], in[1])), tall_and_rhs, false);
  auto wide_and_rhs = [](std::size_t n, std::size_t) {
    return inputs{random_normal(shape{n, n + 2}, 37 * n), random_normal(shape{n, 2}, 41 * n)};
  };
  check_sizes("lstsq, wide (minimum norm)", ADX_LINALG_OP(linalg::lstsq(in[0], in[1])), wide_and_rhs, false);
  auto scaled = [](std::size_t n, std::size_t b) {
    return inputs{tensor<double>(random_normal(b ? shape{b, n, n} : shape{n, n}, 43 * n) * (n > 5 ? 1.5 : 0.4))};
  };
  check_sizes("matrix_exp", ADX_LINALG_OP(linalg::matrix_exp(in[0])), scaled);
}
