// The seed documents' scalar examples (seed_examples.json has them recomputed).
#include <doctest/doctest.h>

#include <adx/adx.hpp>

#include "support/check.hpp"

using namespace adx;

TEST_CASE("seed 001: torch z = x*x*y at (2, 3): z.backward() gives x.grad 12, y.grad 4") {
  tape_scope<var<double>> scope;
  var<double> x = 2.0, y = 3.0;
  var<double> z = x * x * y;
  backward(z);
  CHECK(x.adjoint() == 12.0);
  CHECK(y.adjoint() == 4.0);
}

TEST_CASE("seed 003 test 6: pow(a, 2.) at a = 2 differentiated three times gives 4, 2, 0") {
  tape_scope<var<var<var<double>>>> scope;
  var<var<var<double>>> a = 2.0;
  var<var<var<double>>> y = pow(a, 2.);
  backward(y);
  var<var<double>> g1 = a.adjoint();  // like tf.gradients(y, a)
  backward(g1);
  var<double> g2 = a.value().adjoint();  // tf.gradients(g1, a)
  backward(g2);
  double const g3 = a.value().value().adjoint();  // tf.gradients(g2, a)
  CHECK(primal(g1) == 4.0);
  CHECK(primal(g2) == 2.0);
  CHECK(g3 == 0.0);
}

TEST_CASE("seed 003 test 4 and 5: stop_gradient cuts one use only") {
  tape_scope<var<double>> scope;
  var<double> a = 1.0, b = 1.0;
  auto c = a + b;
  var<double> e4 = stop_gradient(c) + (a + b);
  backward(e4);
  CHECK(a.adjoint() == 1.0);
  CHECK(b.adjoint() == 1.0);
  auto c_stopped = stop_gradient(c);  // created but unused
  (void)c_stopped;
  var<double> e5 = c + (a + b);
  backward(e5);
  CHECK(a.adjoint() == 2.0);
  CHECK(b.adjoint() == 2.0);
}

TEST_CASE("seed 003 tests 7 and 8: total derivatives, and partial ones by cutting at b") {
  tape_scope<var<double>> scope;
  var<double> a = 0.0;
  var<double> b = 2 * a;
  var<double> y = a + b;
  backward(y);
  CHECK(a.adjoint() == 3.0);  // total: through b too
  CHECK(b.adjoint() == 1.0);
  // stop_gradients=[a, b]: b is treated as a constant w.r.t. a yet keeps its own gradient.
  var<double> b_leaf = value(stop_gradient(2 * a));  // a fresh independent variable
  var<double> y2 = a + b_leaf;
  backward(y2);
  CHECK(a.adjoint() == 1.0);
  CHECK(b_leaf.adjoint() == 1.0);
}

TEST_CASE("seed 003 answer 3: y = m x + b at x = 3 gives dy/dx = m = 2") {
  tape_scope<var<double>> scope;
  var<double> x = 3.0;
  var<double> y = 2.0 * x + 1.0;
  backward(y);
  CHECK(x.adjoint() == 2.0);
}
