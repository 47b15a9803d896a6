// expect: grad_position. and .weight. can not be None at the same time
// mindspore.grad(net, grad_position=None, weights=None) is a ValueError; in adx the types show it.
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x) { return x * x; }, adx::none, adx::none);
  (void)g;
}
