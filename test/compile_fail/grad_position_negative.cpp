// expect: grad_position must be >= 0
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x) { return x * x; }, adx::position<-1>);
  (void)g;
}
