// expect: has_aux was passed where the weights go
#include <adx/adx.hpp>
#include <tuple>
int main() {
  auto f = [](auto const& x, auto const& y) { return std::make_tuple(x * y, y); };
  auto g = adx::grad(f, adx::position<0>, adx::has_aux)(2.0, 3.0);
  (void)g;
}
