// expect: There are duplicate positions in .grad_position.
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x, auto const& y) { return x * y; }, adx::positions<1, 1>);
  (void)g;
}
