// examples/tutorial/01_first_derivative.cpp: a first derivative, in forward mode.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace adx;

  // A dual number carries a value and a tangent. Start from x = 2 with tangent 1 (dx/dx = 1),
  // compute as usual, and the result's tangent is the derivative.
  dual<double> x(2.0, 1.0);
  dual<double> y = x * x * sin(x);
  std::printf("f(2) = %.6f   f'(2) = %.6f\n", y.value(), y.tangent());

  // derivative<K> does the same for any function written over a generic scalar (`auto`), and
  // gives the first K derivatives at once: {f, f', ..., f^(K)}.
  auto f = [](auto t) { return t * t * sin(t); };
  auto d = derivative<3>(f, 2.0);
  std::printf("f, f', f'', f''' at 2: %.6f %.6f %.6f %.6f\n", d[0], d[1], d[2], d[3]);

  // Check against the derivatives worked out by hand.
  double const s = std::sin(2.0), c = std::cos(2.0);
  double const want[] = {4 * s, 4 * s + 4 * c, 2 * s + 8 * c - 4 * s, 6 * c - 12 * s - 4 * c};
  bool ok = std::abs(y.tangent() - want[1]) < 1e-12;
  for (int k = 0; k < 4; ++k) ok = ok && std::abs(d[k] - want[k]) < 1e-12;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
