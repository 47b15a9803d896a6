// expect: grad_position must be int or tuple: write adx::position<N>
// A runtime int cannot choose the result's type: the position must be a compile-time constant.
#include <adx/adx.hpp>
int main() {
  int p = 0;
  auto g = adx::grad([](auto const& x) { return x * x; }, p);
  (void)g;
}
