// examples/tutorial/02_gradient.cpp: a gradient, in reverse mode.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <type_traits>
#include <vector>

int main() {
  using namespace adx;

  // Reverse mode records each assignment on a tape, then one backward sweep gives the
  // derivative of the output with respect to every variable. A tape_scope is one recording,
  // dropped when the scope ends.
  double dx = 0, dy = 0;
  {
    tape_scope<var<double>> scope;
    var<double> x = -1.2, y = 1.0;                                        // independent variables
    var<double> f = (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x);  // Rosenbrock
    backward(f);
    dx = x.adjoint();
    dy = y.adjoint();
  }
  std::printf("df/dx = %.6f   df/dy = %.6f\n", dx, dy);

  // gradient() does the recording for you, for a function of a std::vector, here the
  // Rosenbrock function in four dimensions. Write it over the vector's element type, which is
  // var<double> when gradient() calls it (`auto sum = 0 * v[0]` would be an unevaluated
  // expression, not a number to add to).
  auto rosenbrock = [](auto const& v) {
    typename std::decay_t<decltype(v)>::value_type sum = 0;
    for (std::size_t i = 0; i + 1 < v.size(); ++i)
      sum = sum + (1 - v[i]) * (1 - v[i]) + 100 * (v[i + 1] - v[i] * v[i]) * (v[i + 1] - v[i] * v[i]);
    return sum;
  };
  std::vector<double> g = gradient(rosenbrock, std::vector{-1.2, 1.0, 0.5, 2.0});
  std::printf("gradient: %.4f %.4f %.4f %.4f\n", g[0], g[1], g[2], g[3]);

  // Check against the partial derivatives worked out by hand.
  double const x = -1.2, y = 1.0;
  bool ok = std::abs(dx - (-2 * (1 - x) - 400 * x * (y - x * x))) < 1e-9 && std::abs(dy - 200 * (y - x * x)) < 1e-9;
  std::vector<double> const v{-1.2, 1.0, 0.5, 2.0};
  for (std::size_t i = 0; i < v.size(); ++i) {
    double want = 0;
    if (i + 1 < v.size()) want += -2 * (1 - v[i]) - 400 * v[i] * (v[i + 1] - v[i] * v[i]);
    if (i > 0) want += 200 * (v[i] - v[i - 1] * v[i - 1]);
    ok = ok && std::abs(g[i] - want) < 1e-9;
  }
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
