// expect: When 'has_aux' is True, origin 'fn' requires more than one outputs
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x) { return x * x; }, adx::position<0>, adx::none, adx::has_aux);
  (void)g(2.0);
}
