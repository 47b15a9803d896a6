// expect: grad_position selects an argument that is not floating point
// torch: "Only Tensors of floating point and complex dtype can require gradients".
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x) { return x * 2.0; });
  (void)g(adx::tensor<int>{1, 2});
}
