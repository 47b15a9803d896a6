// Reverse mode: statement-level recording, aliasing, dangling, reset and reuse, nested
// recordings, stale variables and tape memory.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

namespace {
auto helper_product(var<double> a, var<double> b) { return a * b + sin(a); }  // returns an expression
auto make_square() {
  return [](auto x) { return x * x; };
}
/// The adjoints read() returns after a backward sweep from y by the plain loop, then after one
/// by the careful loop (which reachability tracking selects).
template <class Read>
std::pair<std::vector<double>, std::vector<double>> plain_and_careful(var<double> const& y, Read read) {
  auto& tp = tape<double>::current();
  auto const sweep = [&](bool careful) {
    sweep_seed<double> const seed{y.index(), y.epoch(), 1.0};
    tp.sweep({.seeds = {&seed, 1}, .track_reached = careful});
    return read();
  };
  std::vector<double> plain = sweep(false);
  return {std::move(plain), sweep(true)};
}
}  // namespace

TEST_CASE("var: one statement per assignment, partials of the whole expression") {
  tape_scope<var<double>> scope;
  auto& t = tape<double>::current();
  index_type const before = t.size();
  var<double> x = 2.0, y = 3.0;
  var<double> z = x * x * y + sin(x) / y;
  CHECK(t.size() == before + 3);  // x, y and z: one statement
  backward(z);
  CHECK(close(x.adjoint(), 2 * 2.0 * 3.0 + std::cos(2.0) / 3.0));
  CHECK(close(y.adjoint(), 4.0 - std::sin(2.0) / 9.0));
}

TEST_CASE("var: expressions never dangle (auto, helpers, lambdas returning auto)") {
  tape_scope<var<double>> scope;
  var<double> a = 1.5, b = -0.5;
  auto e = a * b;                        // an expression kept in a variable
  auto f = e + a * e;                    // built from it
  var<double> g = helper_product(a, b);  // parameters die when the helper returns
  var<double> s = make_square()(a + b);  // lambda over a temporary expression
  var<double> r = f + g + s;
  backward(r);
  // r = ab + a*ab + ab + sin a + (a+b)^2
  double const av = a.value(), bv = b.value();
  double const da = bv + 2 * av * bv + bv + std::cos(av) + 2 * (av + bv);
  double const db = av + av * av + av + 2 * (av + bv);
  CHECK(close(a.adjoint(), da));
  CHECK(close(b.adjoint(), db));
  SUBCASE("an expression captures its operands' values when formed") {
    var<double> c = 2.0;
    auto h = c * c;
    c = 10.0;
    CHECK(value(h) == 4.0);
  }
}

TEST_CASE("var: assignment is alias-safe") {
  tape_scope<var<double>> scope;
  var<double> x0 = 1.5, y = 2.0;
  var<double> x = x0;
  x = x * y + x;   // x1 = x0 (y + 1)
  x *= x + 3 * x;  // x2 = 4 x1^2
  backward(x);
  double const x1 = 1.5 * 3.0;
  CHECK(close(x.value(), 4 * x1 * x1));
  CHECK(close(x0.adjoint(), 8 * x1 * 3.0));
  CHECK(close(y.adjoint(), 8 * x1 * 1.5));
}

TEST_CASE("var: copies share the variable, constants and stop_gradient take no tape entry") {
  tape_scope<var<double>> scope;
  auto& t = tape<double>::current();
  var<double> x = 3.0;
  var<double> c = x;  // a copy is the same variable
  index_type const n = t.size();
  var<double> k = var<double>::constant(5.0);
  var<double> s = stop_gradient(x * x);
  var<double> w = k * s;  // no active operand: nothing recorded
  CHECK(t.size() == n);
  CHECK_FALSE(w.is_active());
  var<double> y = c * x + w;
  backward(y);
  CHECK(x.adjoint() == 6.0);
  CHECK(c.adjoint() == 6.0);
}

TEST_CASE("var: an unreached non-finite partial does not poison the gradient") {
  tape_scope<var<double>> scope;
  var<double> x = 0.0;
  var<double> u = sqrt(x);  // partial +inf, not used by y
  var<double> l = log(x);   // partial +inf, not used by y
  var<double> y = 2 * x;
  backward(y);
  CHECK(x.adjoint() == 2.0);
  SUBCASE("but a reached one with a zero multiplier gives NaN, as torch") {
    var<double> z = where(false, u, 0.0) + y;
    backward(z);
    CHECK(std::isnan(x.adjoint()));
  }
  (void)l;
}

TEST_CASE_TEMPLATE("var: a NaN or infinite partial among a statement's operands is noticed", F, double, float) {
  // The tape notes per statement whether every partial is finite: one non-finite partial in
  // any position, even between finite ones, must switch the sweep to reachability. Each
  // statement is recorded alone, so that no other one can set the tape's flag for it.
  auto const check = [](int which) {
    tape_scope<var<F>> scope;
    var<F> x = F(0), n = F(-1), w = F(3);
    var<F> u;  // the unreached statement
    if (which == 0)
      u = w * x + w * sqrt(x) + x;  // partials 0, 3, 0, 3 * inf, 1: +inf in the middle
    else
      u = x + sqrt(n) + w;  // partials 1, NaN (sqrt of a negative number), 1
    var<F> y = 2 * w;
    backward(y);
    CHECK(w.adjoint() == F(2));
    CHECK(x.adjoint() == F(0));
    CHECK(n.adjoint() == F(0));
    // reached with a zero multiplier, it gives NaN, as torch
    var<F> z = where(false, u, F(0)) + y;
    backward(z);
    CHECK(std::isnan(which == 0 ? x.adjoint() : n.adjoint()));
    CHECK(w.adjoint() == F(2));  // w's partials are finite in both
  };
  SUBCASE("infinite") { check(0); }
  SUBCASE("NaN") { check(1); }
}

TEST_CASE("tape: reset is O(1), reuses memory, and old vars become stale") {
  tape<double> own;
  tape_activation<double> active(own);
  var<double> x = 2.0;
  var<double> y = x * x;
  backward(y);
  CHECK(x.adjoint() == 4.0);
  auto const reserved = own.stats().bytes_reserved;
  own.reset();
  CHECK(own.size() == 0);
  CHECK_THROWS_AS(var<double>(x * 2.0), stale_variable_error);
  CHECK_THROWS_WITH_AS(x.adjoint(), doctest::Contains("outside its recording"), stale_variable_error);
  for (int rep = 0; rep < 3; ++rep) {
    var<double> a = 1.0 + rep;
    var<double> b = exp(a) * a;
    backward(b);
    CHECK(close(a.adjoint(), std::exp(1.0 + rep) * (2.0 + rep)));
    own.reset();
  }
  CHECK(own.stats().bytes_reserved == reserved);
}

TEST_CASE("tape: node memory is bump-allocated, kept across recordings and rewound with them") {
  detail::node_memory mem;
  auto const m0 = mem.position();
  double* a = mem.allocate<double>(100);
  std::uint32_t* b = mem.allocate<std::uint32_t>(3);
  double* big = mem.allocate<double>(std::size_t{1} << 15);  // 256 KiB: beyond the first chunk
  for (double* p : {a, big}) CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(b) % 64 == 0);
  for (std::size_t i = 0; i < 100; ++i) a[i] = static_cast<double>(i);
  std::fill_n(b, 3, 7u);
  std::fill_n(big, std::size_t{1} << 15, -1.0);
  CHECK(a[99] == 99.0);  // no overlap
  CHECK(b[2] == 7u);
  auto const reserved = mem.bytes_reserved();
  CHECK(reserved >= (std::size_t{1} << 18) + 800);
  // rewound: the same memory again, nothing new reserved
  mem.rewind(m0);
  CHECK(mem.allocate<double>(100) == a);
  CHECK(mem.allocate<double>(std::size_t{1} << 15) != nullptr);
  CHECK(mem.bytes_reserved() == reserved);
  // a request larger than the kept chunk after the current one replaces it
  mem.rewind(m0);
  (void)mem.allocate<double>(100);
  double* bigger = mem.allocate<double>(std::size_t{1} << 17);
  bigger[(std::size_t{1} << 17) - 1] = 1.0;
  CHECK(mem.bytes_reserved() > reserved);

  // tensor nodes use it: repeated recordings of the same program reserve nothing new
  tensor<double> const x0 = random_normal({400}, 3);
  std::size_t after_first = 0;
  for (int rep = 0; rep < 3; ++rep) {
    tape_scope<var<double>> scope;
    tensor<var<double>> x(x0);
    var<double> y = sum(x * x) + mean(exp(x), 0)[0] + logsumexp(x);
    backward(y);
    tensor<double> const g = adjoints(x);
    double const lse = logsumexp(x0);
    CHECK(close(g[17], 2 * x0[17] + std::exp(x0[17]) / 400 + std::exp(x0[17] - lse), 1e-14, 1e-14));
    if (rep == 0) after_first = tape<double>::current().stats().bytes_reserved;
    CHECK(tape<double>::current().stats().bytes_reserved == after_first);
  }
}

TEST_CASE("tape_scope: a nested recording inside an outer one") {
  tape_scope<var<double>> outer;
  auto& t = tape<double>::current();
  var<double> x = 1.25;
  var<double> y = x * x;
  index_type const outer_size = t.size();
  double inner_grad = 0;
  var<double> escaped;
  {
    tape_scope<var<double>> inner;
    var<double> z = y * sin(x);  // uses outer vars
    backward(z);
    inner_grad = x.adjoint();
    escaped = z;
  }
  CHECK(t.size() == outer_size);  // inner statements dropped
  CHECK(close(inner_grad, 2 * 1.25 * std::sin(1.25) + 1.25 * 1.25 * std::cos(1.25)));
  CHECK_THROWS_AS(var<double>(escaped + x), stale_variable_error);
  var<double> w = y * 3.0;  // the outer recording goes on
  backward(w);
  CHECK(x.adjoint() == 6 * 1.25);
}

TEST_CASE("tape: memory per statement and per operand") {
  tape_scope<var<double>> scope;
  auto& t = tape<double>::current();
  auto const s0 = t.stats();
  std::vector<var<double>> x;
  for (int i = 0; i < 1000; ++i) x.emplace_back(0.001 * i);
  var<double> s = 0.0;
  for (auto const& xi : x) s += exp(xi);  // one statement, two operands each
  auto const s1 = t.stats();
  // of the 1001 independent variables (x and s) the first is a statement with no operands, the
  // other 1000 share one block entry (a count byte and a header)
  CHECK(s1.statements - s0.statements == 2 + 1000);
  CHECK(s1.indices - s0.indices == 1001 + 1000);
  CHECK(s1.operands - s0.operands == 1 + 2000);
  CHECK(s1.bytes_used - s0.bytes_used == 1002 * 1 + 2001 * 12);
}

TEST_CASE("backward: seeds and errors") {
  tape_scope<var<double>> scope;
  var<double> x = 2.0;
  var<double> y = x * x;
  backward(y, 3.0);
  CHECK(x.adjoint() == 12.0);
  var<double> k = var<double>::constant(1.0);
  backward(k);  // an inactive output: every adjoint is zero
  CHECK(x.adjoint() == 0.0);
}

TEST_CASE("a sweep from one element of a tensor operation's result goes through the operation") {
  // The elements of a tensor node's result are numbered before the node's own statement; a sweep
  // from y[0] must still run the node (it used to start below it and give zeros).
  tape_scope<var<double>> scope;
  tensor<var<double>> const x(tensor<double>{1.5, -2.0, 3.0});
  tensor<var<double>> const y = x * x;
  backward(y[0]);
  auto const g = adjoints(x);
  CHECK(g[0] == 3.0);
  CHECK(g[1] == 0.0);
  CHECK(g[2] == 0.0);
  auto const h = autograd::grad(y[1], x[1], {}, true);
  REQUIRE(h[0].has_value());
  CHECK(*h[0] == -4.0);
  tensor<var<double>> const m = matmul(x.reshape({1, 3}), x.reshape({3, 1}) * 2.0);  // [[2 |x|^2]]
  backward(m[0]);
  CHECK(adjoints(x)[2] == 12.0);
}

TEST_CASE("the plain sweep: statements of one to six operands give the careful sweep's adjoints, exactly") {
  // run_plain writes out statements of up to four operands and loops over longer ones; either
  // way the operands are visited in the careful sweep's order, so the sums are the same bits.
  // `a` appears twice in the statements of three and four operands, and at these values the
  // order of its two additions shows in the last bit of its adjoint (visiting those operands
  // first to last instead of last to first gives another a.adjoint()).
  auto const f = [](double a, double b, double c) {
    double y = std::exp(a);     // one operand
    y = y * b;                  // two
    y = y * a + a;              // three
    y = y * a + a * b;          // four
    y = y * a + b * c + a;      // five
    y = y * a + b * c + a * b;  // six
    return y;
  };
  double const a0 = 0.66, b0 = -1.27, c0 = 1.27;
  tape_scope<var<double>> scope;
  var<double> const a = a0, b = b0, c = c0;
  var<double> y = exp(a);
  y = y * b;
  y = y * a + a;
  y = y * a + a * b;
  y = y * a + b * c + a;
  y = y * a + b * c + a * b;
  CHECK(close(y.value(), f(a0, b0, c0), 1e-15, 0));
  auto const sweeps = plain_and_careful(y, [&] { return std::vector<double>{a.adjoint(), b.adjoint(), c.adjoint()}; });
  std::vector<double> const& plain = sweeps.first;
  CHECK(plain == sweeps.second);
  double const h = 1e-6;
  CHECK(close(plain[0], (f(a0 + h, b0, c0) - f(a0 - h, b0, c0)) / (2 * h), 1e-7, 1e-7));
  CHECK(close(plain[1], (f(a0, b0 + h, c0) - f(a0, b0 - h, c0)) / (2 * h), 1e-7, 1e-7));
  CHECK(close(plain[2], (f(a0, b0, c0 + h) - f(a0, b0, c0 - h)) / (2 * h), 1e-7, 1e-7));
}

TEST_CASE("the plain sweep's register for chained adjoints: the careful sweep's adjoints, exactly, and FD") {
  // The plain sweep keeps the adjoint that statement k passes to its first operand k - 1 in a
  // register until k - 1 runs. Here such chains end at a block of independent variables and at
  // a tensor node (the register must be stored before them), and the first operand appears
  // again in the same statement.
  auto const f = [](std::vector<double> const& x) {
    double s = x[3];
    s = s * std::sin(s) + s / (1 + s * s);
    for (double xi : x) s += std::exp(xi) * s;
    double t = 0;
    for (double xi : x) t += xi * s;
    double const u = t * 2 + s + 1.5 * 1.5;
    return u * u;
  };
  std::vector<double> const x0{0.3, -1.2, 0.7, 0.4};
  tape_scope<var<double>> scope;
  var<double> const w = 1.5;
  var<double> const w2 = w * w;                                             // a statement before the block
  tensor<var<double>> const x(tensor<double>{x0[0], x0[1], x0[2], x0[3]});  // one block
  var<double> s = x[3];  // the block's last index: the next statement's k - 1
  s = s * sin(s) + s / (1 + s * s);
  for (std::size_t i = 0; i < 4; ++i) s += exp(x[i]) * s;
  var<double> const t = sum(x * s);  // one node; t is its output
  var<double> u = t * 2 + s + w2;
  u = u * u;
  auto const sweeps = plain_and_careful(u, [&] {
    return std::vector<double>{adjoints(x)[0], adjoints(x)[1], adjoints(x)[2],
                               adjoints(x)[3], s.adjoint(),    t.adjoint()};
  });
  std::vector<double> const& plain = sweeps.first;
  CHECK(plain == sweeps.second);
  CHECK(plain[5] == 4 * (t.value() * 2 + s.value() + w2.value()));  // u = v * v, v = 2 t + s + w2: 2 v * 2
  for (std::size_t i = 0; i < 4; ++i) {
    double const h = 1e-6;
    std::vector<double> xp = x0, xm = x0;
    xp[i] += h;
    xm[i] -= h;
    CHECK(close(plain[i], (f(xp) - f(xm)) / (2 * h), 1e-6, 1e-6));
  }
}

TEST_CASE("independent variables made one after another share a block entry, sweeps step over it") {
  // A fresh tape, so that the chunk boundary below is where the test puts it.
  tape<double> fresh;
  tape_activation<double> on(fresh);
  var<double> const u = 0.5;  // a lone variable: a statement with no operands
  auto const s0 = fresh.stats();
  CHECK(s0.operands == 0);
  var<double> const x = 2.0;  // the second in a row opens a block (an entry with a header)
  CHECK(fresh.stats().statements == s0.statements + 1);
  var<double> const y = 3.0;  // extends it: no new entry
  auto const s1 = fresh.stats();
  CHECK(s1.statements == s0.statements + 1);
  CHECK(s1.operands == 1);
  CHECK(y.index() == x.index() + 1);
  // An operation that reserved room in a new chunk and then recorded nothing (no active
  // operand) leaves the block the tape's last entry: the next variable still extends it.
  auto const chunks_before = fresh.stats().bytes_reserved;
  CHECK(fresh.record_n(6000, [](auto&) {}) == 0);
  CHECK(fresh.stats().bytes_reserved > chunks_before);
  var<double> const w = 5.0;
  CHECK(w.index() == y.index() + 1);
  CHECK(fresh.stats().statements == s1.statements);
  var<double> const z = x * y * w + log(y);  // a statement after the block, in the new chunk
  var<double> const v = 7.0;                 // a lone variable after the statement
  CHECK(fresh.stats().statements == s1.statements + 2);
  var<double> const r = z * v * u;
  for (bool careful : {false, true}) {
    sweep_seed<double> const seed{r.index(), r.epoch(), 1.0};
    fresh.sweep({.seeds = {&seed, 1}, .track_reached = careful});
    CHECK(x.adjoint() == 3.5 * 15.0);
    CHECK(close(y.adjoint(), 3.5 * (10.0 + 1.0 / 3.0)));
    CHECK(w.adjoint() == 3.5 * 6.0);
    CHECK(v.adjoint() == z.value() * 0.5);
    CHECK(u.adjoint() == z.value() * 7.0);
  }
}

TEST_CASE("a block of variables across nested recordings, rollbacks and resets") {
  tape_scope<var<double>> scope;
  auto& t = tape<double>::current();
  var<double> const a = 1.5;
  {
    tape_scope<var<double>> inner;  // the inner recording's variables may extend the outer block
    var<double> const b = 2.5;
    var<double> const c = a * b;
    backward(c);
    CHECK(a.adjoint() == 2.5);
    CHECK(b.adjoint() == 1.5);
  }
  // after the inner recording ended, its indices are given out again; the outer block is intact
  var<double> const d = 4.0;
  var<double> const e = a * a * d;
  backward(e);
  CHECK(a.adjoint() == 2 * 1.5 * 4.0);
  CHECK(d.adjoint() == 1.5 * 1.5);
  // a rollback past a block's extension, then statements and variables again
  auto const cp = t.checkpoint();
  var<double> const f = 3.0;
  [[maybe_unused]] var<double> const g = f * a;  // dropped by the rollback, not to be used
  t.rollback(cp);
  var<double> const h = 9.0;
  var<double> const k = sqrt(a) + h * h;
  var<double> const m = 0.5;
  var<double> const q = k * m + d;
  backward(q);
  CHECK(close(a.adjoint(), 0.5 * 0.5 / std::sqrt(1.5)));
  CHECK(h.adjoint() == 0.5 * 18.0);
  CHECK(m.adjoint() == k.value());
  CHECK(d.adjoint() == 1.0);
  t.reset();
  var<double> const x = 2.0, y = 3.0;
  var<double> const p = x * y;
  backward(p);
  CHECK(x.adjoint() == 3.0);
  CHECK(y.adjoint() == 2.0);
}

TEST_CASE("make_independent and adjoints: the inputs of a gradient and their adjoints in bulk") {
  std::vector<double> const x0{0.5, -1.25, 2.0, 0.75};
  auto const f = [](auto const* x) {
    std::remove_cvref_t<decltype(x[0])> s = x[0] * 0;
    for (std::size_t i = 0; i < 4; ++i) s += exp(x[i]) * x[(i + 1) % 4];
    return s;
  };
  std::vector<double> bulk(4), one_by_one(4);
  {
    tape_scope<var<double>> scope;
    std::vector<var<double>> x(4);
    make_independent(x, x0);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(x[i].value() == x0[i]);
      CHECK(x[i].index() == x[0].index() + i);
    }
    var<double> const y = f(x.data());
    backward(y);
    adjoints(x, bulk);
  }
  {
    tape_scope<var<double>> scope;
    std::vector<var<double>> x;
    for (double v : x0) x.emplace_back(v);
    var<double> const y = f(x.data());
    backward(y);
    for (std::size_t i = 0; i < 4; ++i) one_by_one[i] = x[i].adjoint();
  }
  CHECK(bulk == one_by_one);
  for (std::size_t i = 0; i < 4; ++i)  // d/dx_i: exp(x_i) x_{i+1} + exp(x_{i-1})
    CHECK(close(bulk[i], std::exp(x0[i]) * x0[(i + 1) % 4] + std::exp(x0[(i + 3) % 4])));

  // constants read as zero; sizes must match; a var of an ended recording is refused
  std::vector<var<double>> stale(2);
  {
    tape_scope<var<double>> scope;
    std::vector<var<double>> x(3);
    CHECK_THROWS_WITH_AS(make_independent(x, x0), "adx: make_independent: 3 vars for 4 values", error);
    make_independent(x, std::span<double const>(x0.data(), 3));
    x[1] = var<double>::constant(1.0);
    var<double> const y = x[0] * x[2] * x[1];
    backward(y);
    std::vector<double> g(3);
    adjoints(x, g);
    CHECK(g == std::vector<double>{2.0, 0.0, 0.5});
    std::vector<double> g2(2);
    CHECK_THROWS_WITH_AS(adjoints(x, g2), "adx: adjoints: 3 vars for an output of 2 elements", error);
    stale[0] = x[0];
  }
  std::vector<double> g(2);
  CHECK_THROWS_AS(adjoints(stale, g), stale_variable_error);
  // the same for a whole block (read with one check and one copy)
  std::vector<var<double>> stale_block(3);
  {
    tape_scope<var<double>> scope;
    make_independent(stale_block, std::span<double const>(x0.data(), 3));
  }
  std::vector<double> g3(3);
  CHECK_THROWS_AS(adjoints(stale_block, g3), stale_variable_error);
  {
    // a block of an outer recording read after a sweep in an inner one; variables made after
    // the sweep read zero
    tape_scope<var<double>> outer;
    std::vector<var<double>> xo(3);
    make_independent(xo, std::span<double const>(x0.data(), 3));
    tape_scope<var<double>> inner;
    var<double> const y = xo[0] * xo[1] + xo[2];
    backward(y);
    adjoints(xo, g3);
    CHECK(g3 == std::vector<double>{x0[1], x0[0], 1.0});
    backward(xo[1]);  // a sweep from the middle of the block: the variables after it read 0
    adjoints(xo, g3);
    CHECK(g3 == std::vector<double>{0.0, 1.0, 0.0});
    std::vector<var<double>> late(3);
    make_independent(late, std::span<double const>(x0.data(), 3));
    adjoints(late, g3);
    CHECK(g3 == std::vector<double>{0.0, 0.0, 0.0});
  }

  // nested: var<var<double>> inputs made in bulk give differentiable gradients (a Hessian row)
  tape_scope<var<var<double>>> scope;
  std::vector<var<double>> inner(2);
  make_independent(inner, std::vector<double>{1.5, -0.5});
  std::vector<var<var<double>>> x(2);
  make_independent(x, inner);
  var<var<double>> const y = x[0] * x[0] * x[1];
  backward(y);
  std::vector<var<double>> grad(2);
  adjoints(x, grad);
  CHECK(grad[0].value() == 2 * 1.5 * -0.5);
  backward(grad[0]);  // d/dx (2 x0 x1) = (2 x1, 2 x0)
  CHECK(inner[0].adjoint() == 2 * -0.5);
  CHECK(inner[1].adjoint() == 2 * 1.5);
}

// A sweep on a tape that has never recorded anything (a thread's first gradient is of a constant,
// or of an empty batch) read the first chunk of an empty list: a null dereference in any build.
TEST_CASE("tape: a backward sweep on a tape that has recorded nothing") {
  std::thread([] {
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(tensor<double>(shape{0}));
    var<double> y = sum(x);  // an empty batch: 0, no variable recorded
    backward(y);
    CHECK(y.value() == 0.0);
    backward(var<double>::constant(1.0));
    auto const g = gradients(var<double>::constant(2.0), x, {}, {}, unconnected_gradients::zero);
    REQUIRE(g[0].has_value());
    CHECK(g[0]->size() == 0);
  }).join();
  std::thread([] {  // var<var<double>>: both tapes fresh
    tape_scope<var<var<double>>> scope;
    backward(var<var<double>>::constant(1.0));
  })
      .join();
}
