// expect: grad_position is an empty tuple
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x) { return x * x; }, adx::positions<>);
  (void)g;
}
