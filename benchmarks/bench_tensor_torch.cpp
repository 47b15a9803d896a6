// tensor_bench, LibTorch (C++ API, CPU, double, one thread): `torch`.
//
// The parameters are leaf tensors (requires_grad) made once; each iteration drops their .grad
// (zero_grad with set_to_none, as a training loop does), runs the program, backward, and copies
// every gradient into a double buffer, which is what the adx and hand versions return too.
#include <torch/torch.h>

#include <cstring>

#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {
namespace {

torch::Tensor leaf(std::vector<double> const& v, std::size_t offset, std::vector<int64_t> sizes) {
  auto t = torch::from_blob(const_cast<double*>(v.data() + offset), sizes, torch::kDouble).clone();
  return t.requires_grad_(true);
}
torch::Tensor data(std::vector<double> const& v, std::vector<int64_t> sizes) {
  return torch::from_blob(const_cast<double*>(v.data()), sizes, torch::kDouble).clone();
}
void copy_grad(torch::Tensor& p, double* g) {
  auto const gr = p.grad().contiguous();
  std::memcpy(g, gr.data_ptr<double>(), static_cast<std::size_t>(gr.numel()) * sizeof(double));
  p.mutable_grad().reset();  // zero_grad(set_to_none = true)
}

int64_t i64(std::size_t n) { return static_cast<int64_t>(n); }

struct mlp_torch {
  mlp_problem const& p;
  torch::Tensor X, labels, W1, b1, W2, b2;
  explicit mlp_torch(mlp_problem const& q) : p(q) {
    X = data(q.X, {i64(q.B), i64(q.D)});
    std::vector<int64_t> lab(q.labels.begin(), q.labels.end());
    labels = torch::from_blob(lab.data(), {i64(q.B)}, torch::kLong).clone();
    W1 = leaf(q.x0, 0, {i64(q.D), i64(q.H)});
    b1 = leaf(q.x0, q.off_b1(), {i64(q.H)});
    W2 = leaf(q.x0, q.off_W2(), {i64(q.H), i64(q.C)});
    b2 = leaf(q.x0, q.off_b2(), {i64(q.C)});
  }
  double gradient(double* g) {
    auto h = torch::tanh(X.matmul(W1) + b1);
    auto z = h.matmul(W2) + b2;
    auto loss = torch::nn::functional::cross_entropy(z, labels);  // mean over the batch
    loss.backward();
    copy_grad(W1, g);
    copy_grad(b1, g + p.off_b1());
    copy_grad(W2, g + p.off_W2());
    copy_grad(b2, g + p.off_b2());
    return loss.item<double>();
  }
};

struct matmul_torch {
  matmul_problem const& p;
  torch::Tensor W, A, B;
  explicit matmul_torch(matmul_problem const& q) : p(q) {
    auto const n = i64(q.N);
    W = data(q.W, {n, n});
    A = leaf(q.x0, 0, {n, n});
    B = leaf(q.x0, q.N * q.N, {n, n});
  }
  double gradient(double* g) {
    auto loss = (A.matmul(B) * W).sum();
    loss.backward();
    copy_grad(A, g);
    copy_grad(B, g + p.N * p.N);
    return loss.item<double>();
  }
};

struct elementwise_torch {
  elementwise_problem const& p;
  torch::Tensor a, b, c, d;
  explicit elementwise_torch(elementwise_problem const& q) : p(q) {
    auto const n = i64(q.N);
    a = leaf(q.x0, 0, {n});
    b = leaf(q.x0, q.N, {n});
    c = leaf(q.x0, 2 * q.N, {n});
    d = leaf(q.x0, 3 * q.N, {n});
  }
  double gradient(double* g) {
    auto f = (a * b + torch::sin(c) / d).sum();
    f.backward();
    copy_grad(a, g);
    copy_grad(b, g + p.N);
    copy_grad(c, g + 2 * p.N);
    copy_grad(d, g + 3 * p.N);
    return f.item<double>();
  }
  torch::Tensor forward() {
    torch::NoGradGuard no_grad;
    return a * b + torch::sin(c) / d;
  }
};

/// The advection problem's tensor form (tensor_adx.hpp's, op for op) in LibTorch: the input is a
/// leaf made once, as the parameters above; each step records its slices, two arithmetic
/// expressions of several operations each, and a cat.
struct advection_torch {
  advection const& p;
  torch::Tensor x;
  explicit advection_torch(advection const& q) : p(q), x(leaf(q.x0, 0, {i64(advection::n)})) {}
  double gradient(double* g) {
    constexpr int64_t n = advection::n;
    constexpr double c = advection::c;
    torch::Tensor q = x;
    for (int step = 0; step < advection::steps; ++step) {
      auto const l = q.slice(0, 0, n - 1), r = q.slice(0, 1, n);
      auto const flux = 0.5 * c * (l + r + c * (l - r));
      auto const inner = q.slice(0, 1, n - 1) + flux.slice(0, 0, n - 2) - flux.slice(0, 1, n - 1);
      q = torch::cat({inner.slice(0, n - 3, n - 2), inner, inner.slice(0, 0, 1)});
    }
    auto f = (q * q).sum();
    f.backward();
    copy_grad(x, g);
    return f.item<double>();
  }
};

}  // namespace

void register_torch() {
  torch::set_num_threads(1);
  torch::set_num_interop_threads(1);
  static std::vector<std::unique_ptr<mlp_torch>> mlps;
  for (auto const& p : mlp_problems()) {
    mlps.push_back(std::make_unique<mlp_torch>(p));
    add_object_gradient(p.name, "torch", p.n(), *mlps.back());
  }
  static std::vector<std::unique_ptr<matmul_torch>> mms;
  for (auto const& p : matmul_problems()) {
    mms.push_back(std::make_unique<matmul_torch>(p));
    add_object_gradient(p.name, "torch", p.n(), *mms.back());
  }
  static advection_torch adv(instance<advection>());
  add_object_gradient(advection::name, "torch", advection::n, adv);
  static elementwise_torch ew(elementwise_instance());
  add_object_gradient(ew.p.name, "torch", ew.p.n(), ew);
  add(
      "elementwise_fwd", "torch", kind::output,
      [](benchmark::State& st) {
        for (auto _ : st) {
          auto y = ew.forward();
          benchmark::DoNotOptimize(y.data_ptr<double>());
          benchmark::ClobberMemory();
        }
      },
      [] {
        auto const y = ew.forward().contiguous();
        double const* p = y.data_ptr<double>();
        return std::vector<double>(p, p + y.numel());
      });
}

}  // namespace adx_bench::tensor_suite
