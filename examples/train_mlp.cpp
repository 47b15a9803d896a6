// A two-layer network trained with Adam on a small regression problem, with MindSpore's API
// (value_and_grad over the trainable parameters), nn::dense layers and an optimiser of
// adx::optim with a cosine learning-rate schedule.
//
//   target: y = sin(2 x1) + 0.5 x2 over 64 points in [-1, 1]^2
//   model:  dense(2 -> 16), tanh, dense(16 -> 1); mean squared error, trained to below 0.002
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace adx;
  constexpr std::size_t n = 64;
  tensor<double> x = zeros<double>(shape{n, 2}), y = zeros<double>(shape{n, 1});
  for (std::size_t i = 0; i < n; ++i) {
    double const x1 = -1 + 2.0 * static_cast<double>(i % 8) / 7, x2 = -1 + 2.0 * static_cast<double>(i / 8) / 7;
    x(i, 0) = x1;
    x(i, 1) = x2;
    y(i, 0) = std::sin(2 * x1) + 0.5 * x2;
  }

  nn::dense<double> hidden(2, 16, /*seed=*/1, true, "hidden"), out(16, 1, /*seed=*/2, true, "out");
  auto loss = [&](auto const& inputs, auto const& targets) { return nn::mse_loss(out(tanh(hidden(inputs))), targets); };
  parameter_list<double> params = hidden.trainable_params();
  for (auto& p : out.trainable_params()) params.push_back(p);

  optim::adam<double> opt(params, {.lr = 0.02});
  optim::cosine_annealing_lr schedule(opt, /*t_max=*/2000, /*eta_min=*/1e-4);
  double first = 0, last = 0;
  for (int epoch = 0; epoch <= 2000; ++epoch) {
    auto [value, grads] = value_and_grad(loss, none, params)(x, y);  // d loss / d each parameter
    if (epoch == 0) first = primal(value);
    last = primal(value);
    if (epoch % 400 == 0) std::printf("epoch %4d: loss %.6f\n", epoch, last);
    opt.step(grads);  // one Adam step with the gradients in the parameters' order
    schedule.step();
  }
  bool const ok = last < 2e-3 && last < first / 100;
  std::printf("loss %.6f -> %.6f: %s\n", first, last, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
