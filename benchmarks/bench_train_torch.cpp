// train_bench, LibTorch (C++ API, CPU, double, one thread): the convolutional networks'
// gradients as a torch training step computes them. The parameters are leaf tensors made once;
// each call drops their .grad (zero_grad with set_to_none), runs forward and backward, and
// copies every gradient into a double buffer, as adx's version returns it.
#include <torch/torch.h>

#include <cstring>
#include <map>
#include <vector>

#include "train_problems.hpp"

namespace adx_bench::train {
namespace {

struct torch_net {
  torch::Tensor x, r;
  std::vector<torch::Tensor> w, b;
  std::vector<int64_t> pad;
  explicit torch_net(conv_problem const& p) {
    auto const i64 = [](std::size_t n) { return static_cast<int64_t>(n); };
    auto const blob = [](std::vector<double> const& v, std::size_t at, std::vector<int64_t> sizes) {
      return torch::from_blob(const_cast<double*>(v.data() + at), sizes, torch::kDouble).clone();
    };
    x = blob(p.x, 0, {i64(p.batch), i64(p.channels), i64(p.size), i64(p.size)});
    std::size_t const last = p.layers.size() - 1, s = p.out_size(last);
    r = blob(p.r, 0, {i64(p.batch), i64(p.layers[last].out), i64(s), i64(s)});
    for (std::size_t l = 0; l < p.layers.size(); ++l) {
      auto const& L = p.layers[l];
      w.push_back(
          blob(p.params, p.offset(l), {i64(L.out), i64(p.in_channels(l)), i64(L.k), i64(L.k)}).requires_grad_(true));
      b.push_back(blob(p.params, p.offset(l) + p.weight_size(l), {i64(L.out)}).requires_grad_(true));
      pad.push_back(i64(L.pad));
    }
  }
  double gradient(double* g) {
    namespace F = torch::nn::functional;
    torch::Tensor y = F::conv2d(x, w[0], F::Conv2dFuncOptions().bias(b[0]).padding(pad[0]));
    for (std::size_t l = 1; l < w.size(); ++l)
      y = F::conv2d(torch::tanh(y), w[l], F::Conv2dFuncOptions().bias(b[l]).padding(pad[l]));
    auto loss = (r * y).sum();
    loss.backward();
    for (std::size_t l = 0; l < w.size(); ++l)
      for (torch::Tensor* t : {&w[l], &b[l]}) {
        auto const gr = t->grad().contiguous();
        std::memcpy(g, gr.data_ptr<double>(), static_cast<std::size_t>(gr.numel()) * sizeof(double));
        g += gr.numel();
        t->mutable_grad().reset();  // zero_grad(set_to_none = true)
      }
    return loss.item<double>();
  }
};

}  // namespace

double torch_conv_gradient(conv_problem const& p, double* g) {
  static std::map<conv_problem const*, torch_net> nets;
  auto it = nets.find(&p);
  if (it == nets.end()) it = nets.emplace(&p, torch_net(p)).first;
  return it->second.gradient(g);
}

void torch_one_thread() { torch::set_num_threads(1); }

}  // namespace adx_bench::train
