// expect: has_aux and return_ids are compile-time flags
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad([](auto const& x) { return x * x; }, adx::position<0>, adx::none, true);
  (void)g;
}
