// adx::linalg against PyTorch 1.13 (test/reference/linalg_public.json): values, gradients of the
// weighted loss by reverse mode, Hessians by forward over reverse (var<dual<double>>) and by
// reverse over reverse (var<var<double>>), Hessian-vector products, third derivatives by
// nested duals, and the error cases.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::tensor_of;

namespace {

nlohmann::json const& suite() {
  static nlohmann::json const j = adx_test::read_reference("linalg_public.json");
  return j;
}
nlohmann::json const& linalg_case(std::string const& name) {
  for (auto const& c : suite()["cases"])
    if (c["name"] == name) return c;
  FAIL("no linalg case " << name);
  static nlohmann::json const none;
  return none;
}

template <class S>
using tensors = std::vector<tensor<S>>;

/// The expected tensors of a key that is one tensor (one output) or a list (several).
std::vector<nlohmann::json> listed(nlohmann::json const& v) {
  if (v.is_array()) return std::vector<nlohmann::json>(v.begin(), v.end());
  return {v};
}

/// The case's loss: sum_k sum(W_k * out_k).
template <class S, class F>
S weighted_loss(F const& f, tensors<S> const& in, std::vector<tensor<double>> const& w) {
  auto const out = f(in);
  REQUIRE(out.size() == w.size());
  S l = S(0);
  for (std::size_t k = 0; k < out.size(); ++k) l = S(l + sum(out[k] * w[k]));
  return l;
}

/// Inputs at element type S: those named in `seeded` get tangents from tangent(name, i) (dual
/// levels) or become variables; the others are constants.
template <class S>
tensors<S> lift(std::vector<tensor<double>> const& x) {
  tensors<S> r;
  for (auto const& t : x) r.push_back(tensor<S>(t));
  return r;
}

struct reference_inputs {
  std::vector<std::string> names;
  std::vector<tensor<double>> values;
  std::size_t at(std::string const& name) const {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    FAIL("no input " << name);
    return 0;
  }
};

/// A flat vector of the elements of the named inputs, in order.
std::size_t count_of(reference_inputs const& in, std::vector<std::string> const& names) {
  std::size_t n = 0;
  for (auto const& nm : names) n += in.values[in.at(nm)].size();
  return n;
}

/// d(grad L)/dx by forward over reverse: one var<dual<double>> recording per seeded element.
template <class F>
std::vector<double> hessian_forward_over_reverse(F const& f, reference_inputs const& in,
                                                 std::vector<std::string> const& layout,
                                                 std::vector<tensor<double>> const& w) {
  using S = var<dual<double>>;
  std::size_t const N = count_of(in, layout);
  std::vector<double> H(N * N);
  for (std::size_t col = 0; col < N; ++col) {
    tape_scope<S> scope;
    tensors<S> x;
    std::vector<tensor<S>> seeded;
    std::size_t offset = 0;
    for (std::size_t k = 0; k < in.names.size(); ++k) {
      auto const& v = in.values[k];
      bool const is_seeded = std::find(layout.begin(), layout.end(), in.names[k]) != layout.end();
      tensor<dual<double>> d = tensor<dual<double>>::generate(
          v.shape(), [&](std::size_t i) { return dual<double>(v[i], is_seeded && offset + i == col ? 1.0 : 0.0); });
      x.push_back(tensor<S>(d));
      if (is_seeded) offset += v.size();
    }
    S const l = weighted_loss(f, x, w);
    for (auto const& nm : layout) seeded.push_back(x[in.at(nm)]);
    auto const g = gradients(l, seeded);
    std::size_t row = 0;
    for (std::size_t k = 0; k < layout.size(); ++k)
      for (std::size_t i = 0; i < seeded[k].size(); ++i) H[(row++) * N + col] = g[k] ? (*g[k])[i].tangent() : 0.0;
  }
  return H;
}

/// The same Hessian by reverse over reverse: the gradient recorded (var<var<double>>), then one
/// sweep per gradient element.
template <class F>
std::vector<double> hessian_reverse_over_reverse(F const& f, reference_inputs const& in,
                                                 std::vector<std::string> const& layout,
                                                 std::vector<tensor<double>> const& w) {
  using S = var<var<double>>;
  std::size_t const N = count_of(in, layout);
  std::vector<double> H(N * N);
  tape_scope<var<double>> inner_scope;
  std::vector<tensor<var<double>>> inner;
  for (auto const& v : in.values) inner.push_back(tensor<var<double>>(v));
  tape_scope<S> outer_scope;
  tensors<S> x;
  for (auto const& v : inner) x.push_back(tensor<S>(v));
  S const l = weighted_loss(f, x, w);
  std::vector<tensor<S>> seeded;
  std::vector<tensor<var<double>>> seeded_inner;
  for (auto const& nm : layout) seeded.push_back(x[in.at(nm)]), seeded_inner.push_back(inner[in.at(nm)]);
  auto const g = gradients(l, seeded);
  std::size_t row = 0;
  for (std::size_t k = 0; k < layout.size(); ++k)
    for (std::size_t i = 0; i < seeded[k].size(); ++i, ++row) {
      if (!g[k]) continue;
      auto const gg = gradients((*g[k])[i], seeded_inner);
      std::size_t c = 0;
      for (std::size_t j = 0; j < layout.size(); ++j)
        for (std::size_t e = 0; e < seeded_inner[j].size(); ++e) H[row * N + c++] = gg[j] ? (*gg[j])[e] : 0.0;
    }
  return H;
}

/// Checks a case: f maps the inputs (in `names` order) to the outputs.
template <class F>
void check_case(std::string const& name, std::vector<std::string> const& names, F const& f) {
  auto const& c = linalg_case(name);
  auto const& e = c["expected"];
  double const rtol = c["tolerance"]["rtol"].get<double>(), atol = c["tolerance"]["atol"].get<double>();
  reference_inputs in{names, {}};
  for (auto const& nm : names) in.values.push_back(tensor_of(c["inputs"][nm]));
  INFO("case " << name);

  // values
  auto const values = f(in.values);
  auto const want = listed(e["value"]);
  REQUIRE(values.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) adx_test::check_tensor(values[k], want[k], rtol, atol);
  if (!e.contains("grad_ys")) return;
  std::vector<tensor<double>> w;
  for (auto const& t : listed(e["grad_ys"])) w.push_back(tensor_of(t));

  // gradients by reverse mode
  if (e.contains("grad")) {
    tape_scope<var<double>> scope;
    auto const x = lift<var<double>>(in.values);
    auto const l = weighted_loss(f, x, w);
    auto const g = gradients(l, x);
    for (auto const& item : e["grad"].items()) {
      std::string const nm = item.key();
      auto const& gw = item.value();
      INFO("gradient for " << nm);
      if (gw.is_null()) continue;
      auto const& got = g[in.at(nm)];
      REQUIRE(got.has_value());
      adx_test::check_tensor(*got, gw, rtol, atol);
    }
  }
  // Hessians: forward over reverse and reverse over reverse
  if (e.contains("hessian")) {
    std::vector<std::string> layout;
    for (auto const& item : e["hessian_layout"]) layout.push_back(item[0].get<std::string>());
    auto const want_h = adx_test::data(e["hessian"]);
    auto const fr = hessian_forward_over_reverse(f, in, layout, w);
    auto const rr = hessian_reverse_over_reverse(f, in, layout, w);
    REQUIRE(fr.size() == want_h.size());
    for (std::size_t i = 0; i < want_h.size(); ++i) {
      INFO("Hessian entry " << i);
      CHECK(adx_test::close(fr[i], want_h[i], rtol, atol));
      CHECK(adx_test::close(rr[i], want_h[i], rtol, atol));
    }
  }
  // Hessian-vector products over all of wrt: one var<dual<double>> recording with tangents v
  if (e.contains("hvp")) {
    using S = var<dual<double>>;
    tape_scope<S> scope;
    tensors<S> x;
    for (std::size_t k = 0; k < names.size(); ++k) {
      auto const& v = in.values[k];
      auto const& vs = e["hvp"]["v"];
      tensor<double> const dir = vs.contains(names[k]) ? tensor_of(vs[names[k]]) : tensor<double>(v.shape(), 0.0);
      x.push_back(tensor<S>(
          tensor<dual<double>>::generate(v.shape(), [&](std::size_t i) { return dual<double>(v[i], dir[i]); })));
    }
    auto const l = weighted_loss(f, x, w);
    auto const g = gradients(l, x);
    for (auto const& item : e["hvp"]["result"].items()) {
      std::string const nm = item.key();
      auto const& hv = item.value();
      INFO("Hessian-vector product for " << nm);
      auto const& got = g[in.at(nm)];
      REQUIRE(got.has_value());
      tensor<double> const t =
          tensor<double>::generate(got->shape(), [&](std::size_t i) { return (*got)[i].tangent(); });
      adx_test::check_tensor(t, hv, rtol, atol);
    }
  }
}

template <class S>
tensor<S> sym(tensor<S> const& a) {
  return tensor<S>((a + a.transpose()) * 0.5);
}

template <class V>
using element_t = typename std::remove_cvref_t<V>::value_type::value_type;

}  // namespace

TEST_CASE("linalg reference: solve, with a matrix, a vector and a batch of right-hand sides") {
  auto f = [](auto const& in) { return std::vector{linalg::solve(in[0], in[1])}; };
  check_case("solve_matrix_rhs_4x4", {"A", "B"}, f);
  check_case("solve_vector_rhs_3x3", {"A", "b"}, f);
  check_case("solve_batched_3d", {"A", "B"}, f);
  check_case("solve_spd_12x12", {"A", "B"}, f);
  check_case("solve_1x1", {"A", "B"}, f);
}

TEST_CASE("linalg reference: solve_triangular reads one triangle") {
  check_case("solve_triangular_lower_4x4", {"L", "B"},
             [](auto const& in) { return std::vector{linalg::solve_triangular(in[0], in[1], false)}; });
  check_case("solve_triangular_upper_3x3", {"U", "B"},
             [](auto const& in) { return std::vector{linalg::solve_triangular(in[0], in[1], true)}; });
}

TEST_CASE("linalg reference: cholesky, cholesky_solve and inv") {
  auto chol = [](auto const& in) { return std::vector{linalg::cholesky(sym(in[0]))}; };
  check_case("cholesky_3x3", {"A"}, chol);
  check_case("cholesky_6x6", {"A"}, chol);
  check_case("cholesky_solve_3x3", {"L", "B"},
             [](auto const& in) { return std::vector{linalg::cholesky_solve(in[1], linalg::tril(in[0]))}; });
  auto inv = [](auto const& in) { return std::vector{linalg::inv(in[0])}; };
  check_case("inv_3x3", {"A"}, inv);
  check_case("inv_12x12", {"A"}, inv);
}

TEST_CASE("linalg reference: det (a singular matrix too: the cofactor gradient), slogdet and logdet") {
  auto det = [](auto const& in) { return std::vector{linalg::det(in[0])}; };
  check_case("det_2x2", {"A"}, det);
  check_case("det_3x3", {"A"}, det);
  check_case("det_5x5", {"A"}, det);
  check_case("det_singular_3x3", {"A"}, det);
  auto slogdet = [](auto const& in) {
    auto const [s, l] = linalg::slogdet(in[0]);
    return std::vector{s, l};
  };
  check_case("slogdet_3x3_negative_det", {"A"}, slogdet);
  check_case("slogdet_singular_3x3", {"A"}, slogdet);
  auto logdet = [](auto const& in) { return std::vector{linalg::logdet(in[0])}; };
  check_case("logdet_spd_3x3", {"A"}, logdet);
  check_case("logdet_spd_12x12", {"A"}, logdet);
}

TEST_CASE("linalg reference: eigh, eigvalsh (a repeated eigenvalue too) and svdvals") {
  check_case("eigh_eigenvalues_4x4", {"A"}, [](auto const& in) { return std::vector{linalg::eigh(sym(in[0]))[0]}; });
  check_case("eigh_sqrtm_3x3", {"A"}, [](auto const& in) {
    auto const [w, V] = linalg::eigh(sym(in[0]));
    using S = element_t<decltype(in)>;
    tensor<S> const M = matmul(matmul(V, linalg::diag(tensor<S>(sqrt(w)))), V.transpose());
    return std::vector{w, M};
  });
  check_case("eigh_top2_projector_5x5", {"A"}, [](auto const& in) {
    auto const V = linalg::eigh(sym(in[0]))[1].slice(1, 3, 5);
    using S = element_t<decltype(in)>;
    return std::vector{tensor<S>(matmul(V, V.transpose()))};
  });
  check_case("eigh_repeated_eigenvalue_4x4", {"A"},
             [](auto const& in) { return std::vector{linalg::eigvalsh(in[0])}; });
  check_case("svdvals_5x3", {"A"}, [](auto const& in) { return std::vector{linalg::svdvals(in[0])}; });
  check_case("norm_nuc_4x3", {"A"}, [](auto const& in) { return std::vector{linalg::matrix_norm(in[0], "nuc")}; });
  check_case("norm_fro_3x4", {"A"}, [](auto const& in) { return std::vector{linalg::matrix_norm(in[0])}; });
}

TEST_CASE("linalg reference: qr (sign-free functions of it), lstsq and matrix_exp") {
  check_case("qr_tall_5x3_normalized", {"A"}, [](auto const& in) {
    using S = element_t<decltype(in)>;
    auto const qr = linalg::qr(in[0]);
    auto const& Q = qr[0];
    auto const& R = qr[1];
    tensor<double> const s =
        tensor<double>::generate(shape{3}, [&](std::size_t i) { return primal(R(i, i)) < 0 ? -1.0 : 1.0; });
    return std::vector{tensor<S>(Q * s), tensor<S>(R * s.reshape(shape{3, 1}))};
  });
  check_case("qr_square_3x3_absdiagR_and_QR", {"A"}, [](auto const& in) {
    using S = element_t<decltype(in)>;
    auto const [Q, R] = linalg::qr(in[0]);
    return std::vector{tensor<S>(abs(linalg::diagonal(R))), tensor<S>(matmul(Q, R))};
  });
  check_case("lstsq_tall_6x3", {"A", "B"}, [](auto const& in) { return std::vector{linalg::lstsq(in[0], in[1])}; });
  auto expm = [](auto const& in) { return std::vector{linalg::matrix_exp(in[0])}; };
  check_case("matrix_exp_3x3", {"A"}, expm);
  check_case("matrix_exp_5x5", {"A"}, expm);
}

TEST_CASE(
    "linalg reference: a multivariate normal log density, Gaussian process likelihoods, ridge and least squares") {
  check_case("mvn_logpdf_cholesky_3d", {"x", "mu", "F"}, [](auto const& in) {
    using S = element_t<decltype(in)>;
    auto const& x = in[0];
    auto const& mu = in[1];
    auto const& F = in[2];
    tensor<S> const Sigma = matmul(F, F.transpose()) + linalg::diag(tensor<double>{0.5, 0.5, 0.5});
    auto const L = linalg::cholesky(Sigma);
    auto const z = linalg::solve_triangular(L, tensor<S>(x - mu).reshape(shape{3, 1}), false);
    S const logp = -0.5 * sum(z * z) - sum(log(linalg::diagonal(L))) - 1.5 * std::log(2 * std::numbers::pi);
    return std::vector{tensor<S>::scalar(logp)};
  });
  auto nlml = [](auto const& in) {
    using S = element_t<decltype(in)>;
    auto const& X = in[0];
    auto const& y = in[1];
    std::size_t const n = X.shape()[0], d = X.shape()[1];
    tensor<S> const diff = X.reshape(shape{n, 1, d}) - X.reshape(shape{1, n, d});
    tensor<S> const D = sum(diff * diff, -1);
    tensor<double> const I = linalg::diag(tensor<double>(shape{n}, 1.0));
    tensor<S> const K = in[3] * exp(-0.5 * D / (in[2] * in[2])) + in[4] * I;
    auto const L = linalg::cholesky(K);
    auto const alpha = linalg::cholesky_solve(y.reshape(shape{n, 1}), L);
    S const v = 0.5 * sum(y.reshape(shape{n, 1}) * alpha) + sum(log(linalg::diagonal(L))) +
                0.5 * double(n) * std::log(2 * std::numbers::pi);
    return std::vector{tensor<S>::scalar(v)};
  };
  check_case("gp_nlml_rbf_8pts_1d", {"X", "y", "ell", "sf2", "sn2"}, nlml);
  check_case("gp_nlml_rbf_12pts_2d", {"X", "y", "ell", "sf2", "sn2"}, nlml);
  auto ridge = [](auto const& in) {
    using S = element_t<decltype(in)>;
    auto const& X = in[0];
    tensor<double> const I = linalg::diag(tensor<double>(shape{X.shape()[1]}, 1.0));
    tensor<S> const G = matmul(X.transpose(), X) + in[2] * I;
    return std::vector{linalg::solve(G, tensor<S>(matmul(X.transpose(), in[1])))};
  };
  check_case("ridge_closed_form_lambda", {"X", "y", "lam"}, ridge);
  check_case("least_squares_normal_equations", {"X", "y"}, [](auto const& in) {
    using S = element_t<decltype(in)>;
    auto const& X = in[0];
    auto const& y = in[1];
    auto const beta = linalg::solve(tensor<S>(matmul(X.transpose(), X)), tensor<S>(matmul(X.transpose(), y)));
    tensor<S> const r = matmul(X, beta) - y;
    return std::vector{beta, tensor<S>::scalar(S(sum(r * r)))};
  });
}

TEST_CASE("linalg reference: ridge regression's first three derivatives in lambda by nested duals") {
  auto const& c = linalg_case("ridge_closed_form_lambda");
  auto const X = tensor_of(c["inputs"]["X"]);
  auto const y = tensor_of(c["inputs"]["y"]);
  double const lam = tensor_of(c["inputs"]["lam"])[0];
  auto const W = tensor_of(c["expected"]["grad_ys"]);
  auto const want = c["expected"]["derivs_lam"].get<std::vector<double>>();
  using D1 = dual<double>;
  using D2 = dual<D1>;
  using D3 = dual<D2>;
  D3 const l3(D2(D1(lam, 1.0), D1(1.0, 0.0)), D2(D1(1.0, 0.0), D1(0.0, 0.0)));
  tensor<double> const I = linalg::diag(tensor<double>(shape{3}, 1.0));
  tensor<D3> const G = matmul(X.transpose(), X) + tensor<D3>::scalar(l3) * I;
  auto const w = linalg::solve(G, tensor<double>(matmul(X.transpose(), y)));
  D3 const L = sum(w * W);
  double const rtol = 1e-9, atol = 1e-11;
  CHECK(adx_test::close(L.val().val().val(), want[0], rtol, atol));
  CHECK(adx_test::close(L.tangent().val().val(), want[1], rtol, atol));
  CHECK(adx_test::close(L.tangent().tangent().val(), want[2], rtol, atol));
  CHECK(adx_test::close(L.tangent().tangent().tangent(), want[3], rtol, atol));
}

TEST_CASE("linalg reference: the error cases raise adx errors naming the function") {
  auto in = [](char const* name, char const* input) { return tensor_of(linalg_case(name)["inputs"][input]); };
  CHECK_THROWS_WITH_AS(linalg::solve(in("error_solve_singular", "A"), in("error_solve_singular", "b")),
                       doctest::Contains("linalg.solve: the input matrix is singular: U(1,1)"), linalg_error);
  CHECK_THROWS_WITH_AS(
      linalg::cholesky(in("error_cholesky_not_pd", "A")),
      doctest::Contains("linalg.cholesky: the input is not positive-definite: its leading minor of order 2"),
      linalg_error);
  CHECK_THROWS_WITH_AS(linalg::det(in("error_det_nonsquare", "A")),
                       doctest::Contains("linalg.det: needs square matrices (shape [2, 3])"), shape_error);
  CHECK_THROWS_WITH_AS(linalg::inv(in("error_inv_nonsquare", "A")),
                       doctest::Contains("linalg.inv: needs square matrices (shape [3, 2])"), shape_error);
  CHECK_THROWS_WITH_AS(
      linalg::solve(in("error_solve_shape_mismatch", "A"), in("error_solve_shape_mismatch", "B")),
      doctest::Contains("linalg.solve: the number of rows of B must equal the order of A (shapes [3, 3] and [2, 2])"),
      shape_error);
}
