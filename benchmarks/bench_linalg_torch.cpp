// linalg_bench, LibTorch (C++ API, CPU, double, one thread): `torch`.
//
// The inputs are leaf tensors (requires_grad) made once; each iteration runs the function with
// torch.linalg, backward, copies every gradient into a double buffer and drops the .grad
// (zero_grad with set_to_none, as a training loop does). mvn is written as
// torch.distributions.MultivariateNormal.log_prob computes it (solve_triangular against the
// Cholesky factor, the log of its diagonal).
#include <torch/torch.h>

#include <cstring>
#include <memory>
#include <tuple>

#include "linalg_problems.hpp"
#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {
namespace {

/// n as LibTorch's size type.
int64_t i64(std::size_t n) { return static_cast<int64_t>(n); }

/// A tensor of the elements of v from offset on (a copy), no gradient.
torch::Tensor data(std::vector<double> const& v, std::size_t offset, std::vector<int64_t> sizes) {
  return torch::from_blob(const_cast<double*>(v.data() + offset), sizes, torch::kDouble).clone();
}
/// A leaf tensor with requires_grad of the elements of v from offset on.
torch::Tensor leaf(std::vector<double> const& v, std::size_t offset, std::vector<int64_t> sizes) {
  return data(v, offset, std::move(sizes)).requires_grad_(true);
}
/// p's gradient into g (its elements in row-major order), then p.grad = None.
double* copy_grad(torch::Tensor& p, double* g) {
  auto const gr = p.grad().contiguous();
  std::memcpy(g, gr.data_ptr<double>(), static_cast<std::size_t>(gr.numel()) * sizeof(double));
  p.mutable_grad().reset();
  return g + gr.numel();
}

/// mvn in LibTorch.
struct mvn_torch {
  mvn_problem const& p;        ///< the instance
  torch::Tensor z, Sigma, mu;  ///< the data and the leaves
  /// The tensors of q's data and point.
  explicit mvn_torch(mvn_problem const& q)
      : p(q),
        z(data(q.z, 0, {i64(q.N)})),
        Sigma(leaf(q.x0, 0, {i64(q.N), i64(q.N)})),
        mu(leaf(q.x0, q.N * q.N, {i64(q.N)})) {}
  /// The density and its gradient into g.
  double gradient(double* g) {
    auto const L = torch::linalg::cholesky(Sigma);
    auto const r = torch::linalg::solve_triangular(L, (z - mu).unsqueeze(-1), /*upper=*/false, /*left=*/true,
                                                   /*unitriangular=*/false);
    auto f = -0.5 * r.pow(2).sum() - L.diagonal().log().sum() - half_log_2pi(p.N);
    f.backward();
    copy_grad(mu, copy_grad(Sigma, g));
    return f.item<double>();
  }
};

/// gp in LibTorch: the hyperparameters 0-dimensional leaves.
struct gp_torch {
  gp_problem const& p;                   ///< the instance
  torch::Tensor D, I, ell, sf2, sn2, y;  ///< the data and the leaves
  /// The tensors of q's data and point.
  explicit gp_torch(gp_problem const& q)
      : p(q),
        D(data(q.D, 0, {i64(q.N), i64(q.N)})),
        I(torch::eye(i64(q.N), torch::kDouble)),
        ell(leaf(q.x0, 0, {})),
        sf2(leaf(q.x0, 1, {})),
        sn2(leaf(q.x0, 2, {})),
        y(leaf(q.x0, 3, {i64(q.N), 1})) {}
  /// nlml and its gradient into g.
  double gradient(double* g) {
    auto const K = sf2 * torch::exp(D * (-0.5 / (ell * ell))) + sn2 * I;
    auto const L = torch::linalg::cholesky(K);
    auto const alpha = torch::cholesky_solve(y, L);
    auto f = 0.5 * (y * alpha).sum() + L.diagonal().log().sum() + half_log_2pi(p.N);
    f.backward();
    copy_grad(y, copy_grad(sn2, copy_grad(sf2, copy_grad(ell, g))));
    return f.item<double>();
  }
};

/// solve_logdet in LibTorch.
struct solve_logdet_torch {
  solve_logdet_problem const& p;  ///< the instance
  torch::Tensor W, A, B;          ///< the data and the leaves
  /// The tensors of q's data and point.
  explicit solve_logdet_torch(solve_logdet_problem const& q)
      : p(q),
        W(data(q.W, 0, {i64(q.N), i64(q.K)})),
        A(leaf(q.x0, 0, {i64(q.N), i64(q.N)})),
        B(leaf(q.x0, q.N * q.N, {i64(q.N), i64(q.K)})) {}
  /// f and its gradient into g.
  double gradient(double* g) {
    // log det A as torch.linalg.slogdet's logabsdet (det A > 0 here)
    auto f = (W * torch::linalg::solve(A, B, /*left=*/true)).sum() + std::get<1>(torch::linalg::slogdet(A));
    f.backward();
    copy_grad(B, copy_grad(A, g));
    return f.item<double>();
  }
};

}  // namespace

/// torch for every problem and size, on one thread.
void register_linalg_torch() {
  torch::set_num_threads(1);
  torch::set_num_interop_threads(1);
  static std::vector<std::unique_ptr<mvn_torch>> mvns;
  static std::vector<std::unique_ptr<gp_torch>> gps;
  static std::vector<std::unique_ptr<solve_logdet_torch>> sls;
  for (auto const& p : mvn_problems()) {
    mvns.push_back(std::make_unique<mvn_torch>(p));
    add_object_gradient(p.name, "torch", p.n(), *mvns.back());
  }
  for (auto const& p : gp_problems()) {
    gps.push_back(std::make_unique<gp_torch>(p));
    add_object_gradient(p.name, "torch", p.n(), *gps.back());
  }
  for (auto const& p : solve_logdet_problems()) {
    sls.push_back(std::make_unique<solve_logdet_torch>(p));
    add_object_gradient(p.name, "torch", p.n(), *sls.back());
  }
}

}  // namespace adx_bench::tensor_suite
