// Third derivatives by repeated gradients, as repeated tf.gradients (the seed documents'
// first example): each gradient of a var<var<var<double>>> is a var<var<double>>, itself
// differentiable, and so on down to a double.
//
//   f(a) = a^2 sin(a):  f' = 2a sin a + a^2 cos a,  f'' = (2 - a^2) sin a + 4a cos a,
//   f''' = (6 - a^2) cos a - 6a sin a.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using adx::var;
  double const at = 0.7;
  adx::tape_scope<var<var<var<double>>>> scope;
  var<var<var<double>>> a = at;
  var<var<var<double>>> f = a * a * sin(a);

  auto d1 = adx::gradients(f, a);  // one optional per input: [f'(a)]
  var<var<double>> const f1 = *d1[0];
  auto d2 = adx::gradients(f1, a.value());  // f1 lives one level down: its input too
  var<double> const f2 = *d2[0];
  auto d3 = adx::gradients(f2, a.value().value());
  double const f3 = *d3[0];

  double const s = std::sin(at), c = std::cos(at);
  double const want[] = {2 * at * s + at * at * c, (2 - at * at) * s + 4 * at * c, (6 - at * at) * c - 6 * at * s};
  double const got[] = {adx::primal(f1), adx::primal(f2), f3};
  bool ok = true;
  for (int k = 0; k < 3; ++k) {
    std::printf("f%.*s(%.1f) = % .15f   (closed form % .15f)\n", k + 1, "'''", at, got[k], want[k]);
    ok = ok && std::abs(got[k] - want[k]) <= 1e-13 * (1 + std::abs(want[k]));
  }
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
