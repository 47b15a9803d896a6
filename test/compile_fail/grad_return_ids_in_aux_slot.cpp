// expect: return_ids was passed where has_aux goes
// MindSpore's grad(fn, grad_position, weights, has_aux, return_ids): return_ids in has_aux's place
// must not be read as has_aux (both are true flags).
#include <adx/adx.hpp>
int main() {
  auto f = [](auto const& x) { return x * x; };
  auto g = adx::grad(f, adx::position<0>, adx::none, adx::return_ids)(2.0);
  (void)g;
}
