// expect: grad_position selects a position beyond fn's arguments
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x, auto const& y) { return x * y; }, adx::positions<0, 5>);
  (void)g(2.0, 3.0);
}
