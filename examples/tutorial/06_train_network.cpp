// examples/tutorial/06_train_network.cpp: a small network trained by gradient descent.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace adx;

  // Data: y = sin(3 x) at 32 points in [-1, 1], as a [32, 1] batch.
  constexpr std::size_t n = 32;
  tensor<double> x = zeros<double>(shape{n, 1}), y = zeros<double>(shape{n, 1});
  for (std::size_t i = 0; i < n; ++i) {
    x(i, 0) = -1 + 2.0 * static_cast<double>(i) / (n - 1);
    y(i, 0) = std::sin(3 * x(i, 0));
  }

  // The model: dense(1 -> 12), tanh, dense(12 -> 1). Its weights are parameters: tensors of
  // variables with a name, seeded deterministically.
  nn::dense<double> hidden(1, 12, /*seed=*/1), out(12, 1, /*seed=*/2);
  auto loss = [&](auto const& inputs, auto const& targets) { return nn::mse_loss(out(tanh(hidden(inputs))), targets); };
  parameter_list<double> params = hidden.trainable_params();
  for (auto& p : out.trainable_params()) params.push_back(p);

  // value_and_grad(loss, none, params): the loss and its gradient with respect to each
  // parameter (MindSpore's weights); the optimiser takes one gradient-descent step on each.
  optim::sgd<double> opt(params, {.lr = 0.2});
  double first = 0, last = 0;
  for (int step = 0; step <= 5000; ++step) {
    auto [value, grads] = value_and_grad(loss, none, params)(x, y);
    last = primal(value);
    if (step == 0) first = last;
    if (step % 1000 == 0) std::printf("step %4d: loss %.6f\n", step, last);
    opt.step(grads);
  }

  bool const ok = last < 1e-3 && last < first / 100;
  std::printf("loss %.6f -> %.6f: %s\n", first, last, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
