// Many backward calls on one recording, without a tape_scope each: every sweep after the first
// ends below the lowest index it wrote (tape::sweep), and zeroes only what the sweep before
// it wrote. The values must be those of a fresh recording: also where a gradient reaches
// variables and intermediates recorded before earlier sweeps, through tensor nodes, in nested
// types, and around nested recordings that sweep in between.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

TEST_CASE("a loop of backward calls on one recording: each gradient as from scratch") {
  tape_scope<var<double>> s;
  var<double> a = 1.3;  // recorded before every sweep below, reached by each of them
  var<double> u = a * a;
  backward(u);
  CHECK(a.adjoint() == 2.6);
  for (int i = 0; i < 50; ++i) {
    double const xv = 0.1 * i - 2.0;
    var<double> x = xv;
    var<double> y = a * sin(x) + x * x + u * x;  // u: an intermediate below the earlier sweeps
    backward(y);
    CHECK(close(x.adjoint(), 1.3 * std::cos(xv) + 2 * xv + 1.69));
    CHECK(close(a.adjoint(), std::sin(xv) + 2.6 * xv));
    CHECK(u.adjoint() == xv);
  }
  // an earlier output swept again: reaches down to a through u
  backward(u);
  CHECK(a.adjoint() == 2.6);
}

TEST_CASE("repeated sweeps through tensor nodes and after a nested recording's sweep") {
  tape_scope<var<double>> s;
  tensor<var<double>> const w(tensor<double>{0.5, -1.0, 2.0});
  for (int i = 0; i < 20; ++i) {
    double const c = 0.25 * i;
    tensor<var<double>> const x(tensor<double>{c, 1.0, -c});
    var<double> y = sum(w * x * x) + dot(w, w);
    backward(y);
    auto const gw = adjoints(w);
    auto const gx = adjoints(x);
    CHECK(close(gw[0], c * c + 1.0));
    CHECK(close(gw[1], 1.0 - 2.0));
    CHECK(close(gw[2], c * c + 4.0));
    CHECK(close(gx[0], 2 * 0.5 * c));
    CHECK(close(gx[2], 2 * 2.0 * -c));
    {  // a nested recording sweeps a larger range in between; the outer adjoints stay
      tape_scope<var<double>> inner;
      var<double> t = 3.0;
      var<double> z = t;
      for (int k = 0; k < 200; ++k) z = z * 1.0 + 0.0 * w[0];
      backward(z);
      CHECK(t.adjoint() == 1.0);
    }
    CHECK(close(adjoints(w)[0], c * c + 1.0));
  }
}

TEST_CASE("repeated sweeps of nested types: each gradient still differentiable") {
  tape_scope<var<var<double>>> s;
  var<var<double>> a = 2.0;
  for (int i = 1; i <= 10; ++i) {
    double const xv = 0.3 * i;
    var<var<double>> x = xv;
    var<var<double>> y = a * x * x * x;
    backward(y);
    var<double> const gx = x.adjoint();  // 3 a x^2, recorded on tape<double>
    CHECK(close(primal(gx), 6.0 * xv * xv));
    backward(gx);  // d(3 a x^2)/dx = 6 a x, on the level below, swept again and again
    CHECK(close(x.value().adjoint(), 12.0 * xv));
    CHECK(close(a.value().adjoint(), 3.0 * xv * xv));
  }
}

// A sweep that stops part-way (an anomaly, a vjp that throws) has written adjoints below its
// seeds; the next sweep that reuses those slots, in the same recording or in the next one on
// this thread, must not add to them.
TEST_CASE("a sweep that threw leaves nothing behind for the next gradient") {
  double const inf = std::numeric_limits<double>::infinity();
  {
    tape_scope<var<double>> scope;
    detect_anomaly on;
    var<double> const a = 1.0, c = inf;
    var<double> const y = a * c;  // c's adjoint (a = 1) is written before a's (inf) throws
    CHECK_THROWS_AS(backward(y), anomaly_error);
  }
  {
    tape_scope<var<double>> scope;  // the same slots, from the spare sweep state
    var<double> const p = 5.0, q = 7.0;
    var<double> const z = p * q;
    backward(z);
    CHECK(p.adjoint() == 7.0);
    CHECK(q.adjoint() == 5.0);
  }
  // a user's vjp that throws, then a gradient of the same recording
  tape_scope<var<double>> scope;
  auto const failing = custom_function([](double x) { return 2 * x; }, [](auto, auto dx) { return 2 * dx; },
                                       [](auto, auto) -> double { throw std::runtime_error("vjp failed"); });
  var<double> const u = 3.0, w = 4.0;
  var<double> const v = u * w + failing(u);
  CHECK_THROWS_AS(backward(v), std::runtime_error);
  var<double> const r = u * w;
  backward(r);
  CHECK(u.adjoint() == 4.0);
  CHECK(w.adjoint() == 3.0);
}
