// expect: different AD scalar types at the same nesting level
#include <adx/adx.hpp>
int main() {
  adx::var<double> x = 1.0;
  adx::var<float> y = 1.0f;
  auto e = x + y;
  (void)e;
}
