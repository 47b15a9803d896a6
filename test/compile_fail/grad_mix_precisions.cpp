// expect: mix precisions .say float and double.
// One call differentiates on one tape type: a float and a double argument cannot share it, and
// taking the first argument's type would compute the double's gradient in float.
#include <adx/adx.hpp>
int main() {
  auto f = [](auto const& a, auto const& b) { return a + b * b; };
  auto g = adx::grad(f, adx::positions<0, 1>)(1.0f, 2.0);
  (void)g;
}
