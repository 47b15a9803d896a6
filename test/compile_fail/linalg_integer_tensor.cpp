// expect: linalg functions need floating-point elements
#include <adx/adx.hpp>
int main() {
  adx::tensor<int> a{{1, 2}, {3, 4}};
  auto d = adx::linalg::det(a);  // an integer LU would truncate: convert to double first
  (void)d;
}
