// examples/tutorial/05_tensors.cpp: gradients through tensors.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

int main() {
  using namespace adx;

  // A least-squares loss L(w) = sum((X w - y)^2). Tensors hold any scalar; with var elements
  // the product is one tape node and the elementwise expression another.
  tensor<double> X{{1.0, 2.0, 0.5}, {0.3, -1.0, 2.0}, {1.5, 0.2, -0.7}, {-0.4, 0.9, 1.1}};
  tensor<double> y{1.0, -2.0, 0.5, 3.0};
  auto loss = [&](auto const& w) { return sum(square(matmul(X, w) - y)); };

  // PyTorch's way: record, then ask for the gradient of the recorded output.
  tape_scope<var<double>> scope;
  tensor<var<double>> w(tensor<double>{0.2, -0.1, 0.4});  // independent variables
  var<double> L = loss(w);
  tensor<double> gw = *autograd::grad(L, w)[0];  // one std::optional per input, as torch's tuple
  std::cout << "dL/dw = " << gw << "\n";

  // JAX's and MindSpore's way: transform the function.
  tensor<double> gw2 = grad(loss)(tensor<double>{0.2, -0.1, 0.4});
  std::cout << "grad(loss)(w) = " << gw2 << "\n";

  // The closed form: 2 X^T (X w - y).
  double const wv[] = {0.2, -0.1, 0.4};
  bool ok = true;
  for (std::size_t j = 0; j < 3; ++j) {
    double want = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      double r = -y(i);
      for (std::size_t k = 0; k < 3; ++k) r += X(i, k) * wv[k];
      want += 2 * X(i, j) * r;
    }
    ok = ok && std::abs(gw(j) - want) < 1e-12 && std::abs(gw2(j) - want) < 1e-12;
  }
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
