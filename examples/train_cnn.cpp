// A small convolutional network trained to classify generated 8x8 images: a bar that is
// horizontal, vertical or diagonal, at a random place, over noise. nn::conv2d, relu, max
// pooling, a dense layer, cross-entropy with integer labels and Adam, then the accuracy on
// images the network has not seen.
//
//   model: conv2d(1 -> 6, 3x3, padding 1), relu, max_pool2d 2x2, dense(6*4*4 -> 3)
//   data:  240 training images, 120 test images (seeded); trained to >= 95% test accuracy
#include <adx/adx.hpp>

#include <cstdio>
#include <random>
#include <vector>

namespace {

/// n images [n, 1, 8, 8] and their labels: 0 a horizontal bar, 1 a vertical one, 2 a diagonal.
std::pair<adx::tensor<double>, std::vector<long>> make_images(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> noise(-0.3, 0.3);
  std::uniform_int_distribution<int> place(1, 6), kind(0, 2);
  adx::tensor<double> x(adx::shape{n, 1, 8, 8});
  std::vector<long> labels(n);
  for (std::size_t i = 0; i < n; ++i) {
    int const k = kind(gen), p = place(gen);
    labels[i] = k;
    for (std::size_t r = 0; r < 8; ++r)
      for (std::size_t c = 0; c < 8; ++c) {
        bool const on = (k == 0 && static_cast<int>(r) == p) || (k == 1 && static_cast<int>(c) == p) ||
                        (k == 2 && static_cast<int>(r) - static_cast<int>(c) == p - 4);
        x(i, 0, r, c) = (on ? 1.0 : 0.0) + noise(gen);
      }
  }
  return {x, labels};
}

}  // namespace

int main() {
  using namespace adx;
  auto const train = make_images(240, 1), test = make_images(120, 2);
  tensor<double> const& train_x = train.first;
  std::vector<long> const& train_y = train.second;
  tensor<double> const& test_x = test.first;
  std::vector<long> const& test_y = test.second;

  nn::sequential net{nn::conv2d<double>(1, 6, {3, 3}, /*seed=*/1, {.padding = {1, 1}}), nn::act::relu{},
                     [](auto const& t) {
                       return max_pool2d(t, {2, 2});
                     },
                     nn::act::flatten{},  // [N, 6, 4, 4] to [N, 96]
                     nn::dense<double>(6 * 4 * 4, 3, /*seed=*/2)};
  optim::adam<double> opt(net.trainable_params(), {.lr = 0.02});
  auto const loss = [&](auto const& images) { return nn::cross_entropy(net(images), train_y); };

  double first = 0, last = 0;
  for (int epoch = 0; epoch < 60; ++epoch) {
    auto [value, grads] = value_and_grad(loss, none, net.trainable_params())(train_x);
    last = primal(value);
    if (epoch == 0) first = last;
    if (epoch % 10 == 0) std::printf("epoch %2d: loss %.4f\n", epoch, last);
    opt.step(grads);
  }

  // accuracy on the test images: the class of the largest logit
  tensor<long> const predicted = argmax(tensor<var<double>>(net(test_x)), 1);
  std::size_t right = 0;
  for (std::size_t i = 0; i < test_y.size(); ++i) right += predicted(i) == test_y[i] ? 1 : 0;
  double const accuracy = static_cast<double>(right) / static_cast<double>(test_y.size());
  bool const ok = accuracy >= 0.95 && last < first / 4;
  std::printf("loss %.4f -> %.4f, test accuracy %.1f%%: %s\n", first, last, 100 * accuracy, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
