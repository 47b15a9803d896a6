// expect: mix precisions .say float and double., with each other or with an AD argument
// An unselected var<float> argument raises the call to a float tape: a selected double would
// then be differentiated in float.
#include <adx/adx.hpp>
int main() {
  adx::tape_scope<adx::var<float>> scope;
  adx::var<float> b = 3.0f;
  auto f = [](auto const& a, auto const& c) { return a * a * c; };
  auto g = adx::grad(f, adx::position<0>)(1.0, b);
  (void)g;
}
