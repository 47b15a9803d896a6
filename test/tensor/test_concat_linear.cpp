// Tensors: concat and stack in every mode, and linear elementwise expressions over var<T>
// (one partial per operand: linear_node) against the general node, forward mode and finite
// differences.
#include <adx/adx.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;

namespace {

/// The gradient of f at x0 by central finite differences.
template <class F>
std::vector<double> fd_gradient(F const& f, tensor<double> const& x0, double h = 1e-6) {
  std::vector<double> g(x0.size());
  for (std::size_t i = 0; i < x0.size(); ++i) {
    tensor<double> up = x0, down = x0;
    up[i] += h;
    down[i] -= h;
    g[i] = (f(up) - f(down)) / (2 * h);
  }
  return g;
}

/// The gradient of f at x0 by reverse mode (one sweep).
template <class F>
std::vector<double> reverse_gradient(F const& f, tensor<double> const& x0) {
  tape_scope<var<double>> scope;
  tensor<var<double>> x(x0);
  var<double> y = f(x);
  backward(y);
  tensor<double> const g = adjoints(x);
  return {g.begin(), g.end()};
}

/// The gradient of f at x0 by forward mode (one dual pass per element).
template <class F>
std::vector<double> forward_gradient(F const& f, tensor<double> const& x0) {
  std::vector<double> g(x0.size());
  for (std::size_t i = 0; i < x0.size(); ++i) {
    tensor<dual<double>> x(x0.shape());
    for (std::size_t k = 0; k < x0.size(); ++k) x[k] = dual<double>(x0[k], k == i ? 1.0 : 0.0);
    g[i] = f(x).tangent();
  }
  return g;
}

/// reverse = forward = finite differences for f at x0.
template <class F>
void check_gradient(F const& f, tensor<double> const& x0) {
  auto const r = reverse_gradient(f, x0), fw = forward_gradient(f, x0), fd = fd_gradient(f, x0);
  for (std::size_t i = 0; i < x0.size(); ++i) {
    INFO("element " << i << ": reverse " << r[i] << ", forward " << fw[i] << ", fd " << fd[i]);
    CHECK(close(r[i], fw[i], 1e-13, 1e-13));
    CHECK(close(r[i], fd[i], 1e-7, 1e-7));
  }
}

}  // namespace

TEST_CASE("concat and stack: values and shapes, along every axis") {
  tensor<double> const a{{1, 2, 3}, {4, 5, 6}}, b{{7, 8, 9}}, c(shape{2, 1}, std::vector<double>{10, 11});
  tensor<double> const r0 = concat({a, b});
  CHECK(r0.shape() == shape{3, 3});
  CHECK(r0(2, 0) == 7);
  CHECK(r0(1, 2) == 6);
  tensor<double> const r1 = concat({a, c, a}, -1);
  CHECK(r1.shape() == shape{2, 7});
  std::vector<double> const want1{1, 2, 3, 10, 1, 2, 3, 4, 5, 6, 11, 4, 5, 6};
  for (std::size_t i = 0; i < want1.size(); ++i) CHECK(r1[i] == want1[i]);
  tensor<double> const one = concat({a});
  CHECK(one.shape() == a.shape());
  CHECK(one(1, 1) == 5);

  tensor<double> const s0 = stack({a, tensor<double>(a * 2.0)}), s1 = stack({a, tensor<double>(a * 2.0)}, 1),
                       s2 = stack({a, tensor<double>(a * 2.0)}, -1);
  CHECK(s0.shape() == shape{2, 2, 3});
  CHECK(s1.shape() == shape{2, 2, 3});
  CHECK(s2.shape() == shape{2, 3, 2});
  CHECK(s0(1, 0, 2) == 6);
  CHECK(s1(0, 1, 2) == 6);
  CHECK(s1(1, 0, 0) == 4);
  CHECK(s2(1, 2, 1) == 12);
  CHECK(s2(0, 1, 0) == 2);
  tensor<double> const v = stack({tensor<double>::scalar(1.5), tensor<double>::scalar(2.5)});
  CHECK(v.shape() == shape{2});
  CHECK(v[1] == 2.5);
}

TEST_CASE("concat and stack: errors name the operation and the shapes") {
  tensor<double> const a{{1, 2, 3}, {4, 5, 6}}, b{1, 2, 3}, d{{1, 2}, {3, 4}};
  auto const message = [](auto&& f) { return adx_test::error_message<shape_error>(f); };
  CHECK(message([&] { (void)concat({a, b}); }) == "adx: concat: the tensors' ranks differ (shapes [2, 3] and [3])");
  CHECK(message([&] {
          (void)concat({a, d}, 0);
        }) == "adx: concat: the tensors' extents differ off axis 0 (shapes [2, 3] and [2, 2])");
  CHECK(message([&] { (void)concat({a, d}, 2); }) == "adx: concat: axis 2 is out of range for rank 2 (shape [2, 3])");
  CHECK(message([&] { (void)concat(std::vector<tensor<double>>{}); }) == "adx: concat: needs at least one tensor");
  CHECK(message([&] { (void)concat({tensor<double>::scalar(1)}); }) ==
        "adx: concat: rank-0 tensors have no axis to join along (shape [])");
  CHECK(message([&] { (void)stack({a, d}); }) == "adx: stack: the tensors' shapes differ (shapes [2, 3] and [2, 2])");
  CHECK(message([&] {
          (void)stack({a, a}, 3);
        }) == "adx: stack: axis 3 is out of range for the result's rank 3 (shape [2, 3])");
  CHECK(message([&] {
          (void)stack({a, a}, -4);
        }) == "adx: stack: axis -4 is out of range for the result's rank 3 (shape [2, 3])");
  CHECK(message([&] { (void)stack<double>({}); }) == "adx: stack: needs at least one tensor");
}

TEST_CASE("concat of var tensors is one node whose outputs are one block, gradients in every mode") {
  tensor<double> const x0{{0.5, -1.2, 2.0}, {0.3, 0.9, -0.4}};
  // blocks, a product's outputs, elements of their own (a transpose) and a constant part
  auto f = [](auto const& x) {
    using S = typename std::remove_cvref_t<decltype(x)>::value_type;
    tensor<S> const y = sin(x) * x;
    tensor<S> const t = x.transpose().reshape({2, 3});                   // elements of its own
    tensor<S> const k(shape{1, 3}, detail::constant<S>(2.0));            // constants
    tensor<S> const c = concat({y, t, k, x.slice(0, 1, 2)});             // [6, 3]
    tensor<S> const s = stack({c.slice(1, 0, 1), c.slice(1, 2, 3)}, 2);  // [6, 1, 2]
    return S(sum(s * s * arange(12.0, 0.0, -1.0).reshape({6, 1, 2})));
  };
  check_gradient(f, x0);

  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<var<double>> x(x0);
  tensor<var<double>> const y = x * 2.0;
  auto const s0 = tp.stats();
  tensor<var<double>> const c = concat({y, x, y}, 1);  // [2, 9]
  auto const s1 = tp.stats();
  CHECK(s1.nodes - s0.nodes == 1);
  CHECK(s1.indices - s0.indices == 18);
  // rows of 3: each output keeps its source's index (one run of them)
  using run = detail::copy_node<double>::run;
  CHECK(s1.node_bytes - s0.node_bytes == 18 * sizeof(index_type) + sizeof(run));
  CHECK(c(1, 0).index() + 17 == c(1, 8).index() + 9);  // one block, row-major
  CHECK(c(1, 5).value() == x0(1, 2));
  CHECK(c(0, 7).value() == 2 * x0(0, 1));
  // along axis 0 the blocks are three runs of 6, one index each
  tensor<var<double>> const c0 = concat({y, x, y});  // [6, 3]
  auto const s2a = tp.stats();
  CHECK(s2a.node_bytes - s1.node_bytes == 3 * sizeof(run));
  var<double> const l = sum(c0 * arange(18.0).reshape({6, 3}));  // d/dx: 6..11 + 8..11; d/dy: 0..5 and 12..17
  backward(l);
  adx_test::check_values(adjoints(x), {6 + 2 * 0.0 + 2 * 12, 7 + 2 * 1.0 + 2 * 13, 8 + 2 * 2.0 + 2 * 14,
                                       9 + 2 * 3.0 + 2 * 15, 10 + 2 * 4.0 + 2 * 16, 11 + 2 * 5.0 + 2 * 17});

  // constants only: no node; no_grad: the same variables, no node
  auto const s2 = tp.stats();
  tensor<var<double>> const k =
      concat({tensor<var<double>>(shape{2}, var<double>::constant(1.0)), tensor<var<double>>(shape{1})});
  CHECK(tp.stats().nodes == s2.nodes);
  CHECK(k[0].index() == 0);
  CHECK(k[0].value() == 1.0);
  {
    no_grad ng;
    tensor<var<double>> const u = concat({x, x});
    CHECK(u[7].index() == x[1].index());
  }
  CHECK(tp.stats().nodes == s2.nodes);
}

TEST_CASE("concat over nested and forward elements: Hessians") {
  // f = sum(concat(x, x^2)^2 * w): the Hessian by reverse-over-reverse against forward-over-forward
  tensor<double> const x0{0.7, -0.3, 1.1};
  auto f = [](auto const& x) {
    using S = typename std::remove_cvref_t<decltype(x)>::value_type;
    tensor<S> const c = concat({x, tensor<S>(x * x)});
    return S(sum(c * c * tensor<double>{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}));
  };
  tape_scope<var<var<double>>> scope;
  tensor<var<var<double>>> x(x0);
  var<var<double>> y = f(x);
  backward(y);
  for (std::size_t i = 0; i < 3; ++i) {
    var<double> gi = x[i].adjoint();
    backward(gi);
    for (std::size_t j = 0; j < 3; ++j) {
      tensor<dual<dual<double>>> xd(x0.shape());
      for (std::size_t k = 0; k < 3; ++k)
        xd[k] = dual<dual<double>>(dual<double>(x0[k], k == i ? 1.0 : 0.0), dual<double>(k == j ? 1.0 : 0.0, 0.0));
      double const want = f(xd).tangent().tangent();
      INFO("H(" << i << ", " << j << ")");
      CHECK(close(x[j].value().adjoint(), want, 1e-13, 1e-13));
    }
  }
}

TEST_CASE("a linear expression over var<double> keeps one partial per operand") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<double> const a0{{0.5, -1.0, 2.0, 0.25}, {1.5, 0.75, -0.5, 3.0}},
      b0{{2.0, 1.0, -1.0, 0.5}, {0.1, 0.2, 0.3, 0.4}};
  tensor<var<double>> a(a0), b(b0);
  var<double> s(0.75);
  auto const s0 = tp.stats();
  // a twice (merged: partial 2 - 3 / 4), b once, s broadcast: three operands, one partial each
  tensor<var<double>> const y = 2.0 * a + (b - a * 3.0) / 4.0 - s;
  auto const s1 = tp.stats();
  CHECK(s1.nodes - s0.nodes == 1);
  std::size_t const operand_bytes = s1.node_bytes - s0.node_bytes;
  CHECK(operand_bytes == 3 * sizeof(detail::linear_node<double>::operand));  // no per-element storage
  for (std::size_t i = 0; i < 8; ++i) CHECK(y[i].value() == 2.0 * a0[i] + (b0[i] - a0[i] * 3.0) / 4.0 - 0.75);
  tensor<double> const w{{1, 2, 3, 4}, {5, 6, 7, 8}};
  var<double> l = sum(y * w);
  backward(l);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(a[i].adjoint() == (2.0 - 3.0 / 4.0) * w[i]);
    CHECK(b[i].adjoint() == w[i] / 4.0);
  }
  CHECK(s.adjoint() == -36.0);

  // operands read element by element (a transpose: elements of its own) and broadcast along an
  // axis (not flat): indices element by element, the same values and gradients as the general node
  tensor<var<double>> const at = tensor<var<double>>(a.transpose()).transpose();
  tensor<var<double>> const col = a.slice(1, 1, 2);  // [2, 1], read across the columns
  tensor<var<double>> const z = at - 0.5 * col + 1.0;
  tensor<var<double>> const zg = at * 1.0 - col * 0.5 + exp(0.0 * at);  // not linear: the general node
  for (std::size_t i = 0; i < 8; ++i) CHECK(z[i].value() == zg[i].value());
  var<double> lz = sum(z * w), lg = sum(zg * w);
  backward(lz);
  tensor<double> const gz = adjoints(a);
  backward(lg);
  tensor<double> const gg = adjoints(a);
  for (std::size_t i = 0; i < 8; ++i) CHECK(gz[i] == gg[i]);
  CHECK(gz(0, 1) == w(0, 1) - 0.5 * (w(0, 0) + w(0, 1) + w(0, 2) + w(0, 3)));

  // constants only: no node
  auto const s2 = tp.stats();
  tensor<var<double>> const k = 2.0 * tensor<var<double>>(shape{3}, var<double>::constant(1.0)) + 1.0;
  CHECK(tp.stats().nodes == s2.nodes);
  CHECK(k[2].index() == 0);
  CHECK(k[2].value() == 3.0);
}

TEST_CASE("linear expressions: float values rounded as the general node rounds them, stale operands throw") {
  tape_scope<var<float>> scope;
  tensor<float> const a0{0.1f, 0.7f, -1.3f, 2.9f};
  tensor<var<float>> a(a0);
  tensor<var<float>> const y = 0.1 * (a + 0.3 * (a - 1.7)) / 3.0;                // linear, double constants
  tensor<var<float>> const g = 0.1 * (a + 0.3 * (a - 1.7)) / 3.0 + 0.0 * a * a;  // the general node
  for (std::size_t i = 0; i < 4; ++i) CHECK(y[i].value() == g[i].value());

  tensor<var<double>> stale;
  {
    tape_scope<var<double>> inner;
    stale = tensor<var<double>>(tensor<double>{1.0, 2.0});
  }
  tape_scope<var<double>> outer;
  CHECK_THROWS_AS((void)tensor<var<double>>(stale * 2.0 + 1.0), stale_variable_error);
  CHECK_THROWS_AS((void)concat({stale, stale}), stale_variable_error);
}

TEST_CASE("linear expressions and concat: reverse = forward = finite differences (a 1-D advection)") {
  tensor<double> x0(shape{12});
  for (std::size_t i = 0; i < 12; ++i)
    x0[i] = 0.5 + 0.5 * std::sin(0.6 * static_cast<double>(i)) + (i == 4 ? 0.3 : 0.0);
  auto f = [](auto const& x) {
    using S = typename std::remove_cvref_t<decltype(x)>::value_type;
    constexpr long n = 12;
    auto flux = [](auto const& l, auto const& r) { return 0.5 * 0.125 * (l + r + 0.125 * (l - r)); };
    tensor<S> q = x;
    for (int step = 0; step < 7; ++step) {
      tensor<S> const left = q.slice(0, 0, n - 2), mid = q.slice(0, 1, n - 1), right = q.slice(0, 2, n);
      tensor<S> const inner = mid + flux(left, mid) - flux(mid, right);
      q = concat({inner.slice(0, n - 3, n - 2), inner, inner.slice(0, 0, 1)});
    }
    return S(sum(q * q));
  };
  check_gradient(f, x0);
}

TEST_CASE("an elementwise node over blocks and single variables keeps partials only, plain = careful sweep") {
  tensor<double> const a0{{0.5, -1.0, 2.0, 0.25}, {1.5, 0.75, -0.5, 3.0}},
      b0{{2.0, 1.0, -1.0, 0.5}, {0.1, 0.2, 0.3, 0.4}};
  tensor<double> const w{{1, 2, 3, 4}, {5, 6, 7, 8}};
  auto run = [&](bool careful) {
    tape_scope<var<double>> scope;
    auto& tp = tape<double>::current();
    tensor<var<double>> a(a0), b(b0);
    var<double> s(0.75);
    auto const s0 = tp.stats();
    tensor<var<double>> const y = a * b + sin(a) * s;  // operands a, b, a, s: blocks and one variable
    auto const s1 = tp.stats();
    // per operand a kind, a first index and a period; no per-element index
    CHECK(s1.node_bytes - s0.node_bytes == 8 * 4 * sizeof(double) + 4 + 4 * (sizeof(index_type) + sizeof(std::size_t)));
    var<double> const l = sum(y * w + a);  // a reduced node over blocks, partials only as well
    CHECK(tp.stats().node_bytes - s1.node_bytes ==
          8 * 2 * sizeof(double) + 2 + 2 * (sizeof(index_type) + sizeof(std::size_t)));
    tensor<var<double>> const unused = exp(b) * s;  // not on the path: the careful sweep skips it
    (void)unused;
    std::optional<detect_anomaly> anomaly;
    if (careful) anomaly.emplace();
    backward(l);
    std::vector<double> g;
    for (std::size_t i = 0; i < 8; ++i) g.push_back(a[i].adjoint());
    for (std::size_t i = 0; i < 8; ++i) g.push_back(b[i].adjoint());
    g.push_back(s.adjoint());
    return g;
  };
  auto const plain = run(false), careful = run(true);
  double gs = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(close(plain[i], w[i] * (b0[i] + std::cos(a0[i]) * 0.75) + 1.0, 1e-15, 1e-15));
    CHECK(plain[8 + i] == w[i] * a0[i]);
    gs += w[i] * std::sin(a0[i]);
  }
  CHECK(close(plain[16], gs, 1e-15, 1e-15));
  for (std::size_t i = 0; i < plain.size(); ++i) CHECK(plain[i] == careful[i]);
}

TEST_CASE("a bias row read by every row is a cyclic operand: partials only, gradients summed over the rows") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<double> const x0{{0.5, -1.0, 2.0}, {1.5, 0.75, -0.5}}, b0{0.1, -0.2, 0.3};
  tensor<var<double>> x(x0), b(b0);
  auto const s0 = tp.stats();
  tensor<var<double>> const h = tanh(x + b);  // b: [3] over [2, 3]
  auto const s1 = tp.stats();
  CHECK(s1.node_bytes - s0.node_bytes == 6 * 2 * sizeof(double) + 2 + 2 * (sizeof(index_type) + sizeof(std::size_t)));
  tensor<var<double>> const z = 2.0 * h - b;  // linear, b cyclic again
  var<double> const l = sum(z * tensor<double>{{1, 2, 3}, {4, 5, 6}});
  backward(l);
  for (std::size_t j = 0; j < 3; ++j) {
    double gb = -(static_cast<double>(j) + 1 + static_cast<double>(j) + 4);  // from - b: the column's weights
    for (std::size_t r = 0; r < 2; ++r) {
      double const t = std::tanh(x0(r, j) + b0[j]);
      double const w = static_cast<double>(3 * r + j + 1);
      CHECK(close(x(r, j).adjoint(), 2 * w * (1 - t * t), 1e-15, 1e-15));
      gb += 2 * w * (1 - t * t);
    }
    CHECK(close(b[j].adjoint(), gb, 1e-15, 1e-15));
  }
}

TEST_CASE("contiguous slices of a block share it from an offset: values, elements, writes and gradients") {
  tape_scope<var<double>> scope;
  tensor<double> const x0 = arange(12.0, 0.0, -1.0).reshape({4, 3});  // 12, 11, ..., 1
  tensor<var<double>> x(x0);
  tensor<var<double>> const rows = x.slice(0, 1, 3);                 // rows 1 and 2: elements 3 .. 8
  tensor<var<double>> const row = rows.slice(0, 1, 2);               // row 2: elements 6 .. 8
  tensor<var<double>> const tail = row.reshape({3}).slice(0, 1, 3);  // elements 7, 8
  CHECK(detail::tensor_access::block(row).first == x[6].index());
  CHECK(detail::tensor_access::block(tail).first == x[7].index());
  CHECK(row.values()[1] == 5.0);
  CHECK(tail.values()[0] == 5.0);
  CHECK(tail[1].value() == 4.0);
  CHECK(tail[1].index() == x[8].index());
  CHECK(tensor<var<double>>(rows.transpose())(2, 1).index() == x[8].index());  // elements made from the offset
  tensor<var<double>> w = row;
  w[0] = w[0] * 10.0;  // a write gives w elements of its own; row and x keep theirs
  CHECK(w[0].value() == 60.0);
  CHECK(row[0].value() == 6.0);
  CHECK(w[2].index() == x[8].index());
  var<double> const l = sum(tail * tail) + sum(w) + sum(rows * 0.5);
  backward(l);
  tensor<double> const g = adjoints(x);
  std::vector<double> const want{0, 0, 0, 0.5, 0.5, 0.5, 10.5, 1.5 + 2 * 5, 1.5 + 2 * 4, 0, 0, 0};
  for (std::size_t i = 0; i < 12; ++i) CHECK(g[i] == want[i]);
}

namespace {

/// x [rows..., n-part] with every element of the row operand r repeated along the leading axes:
/// the full-size copy an operand read in rows stands for (for var: the same variables, as
/// elements of its own, so the copy is read flat and element by element).
template <class S>
tensor<S> repeat_rows(tensor<S> const& r, shape const& out) {
  tensor<S> full(out);
  for (std::size_t i = 0; i < full.size(); ++i) full[i] = r[i % r.size()];
  return full;
}

/// One program over x [.., n] and rows b, c (b [n], c [1, n]): the general node (tanh), a
/// linear node, a fused sum, and a plain broadcast of a row operand.
template <class S>
S row_program(tensor<S> const& x, tensor<S> const& b, tensor<S> const& c, tensor<double> const& w) {
  tensor<S> const h = tanh(x * b + c);           // rows of the same period: read in rows
  tensor<S> const z = 2.0 * h - b + 0.5 * c;     // linear: the rows read at their column
  tensor<S> const y = z + w;                     // a constant operand of the result's shape
  return S(sum(y * b) + sum(exp(c) * x) / 3.0);  // fused sums with rows
}

}  // namespace

TEST_CASE("operands read in rows (a bias over a batch) give what their full-size copies give, in every mode") {
  tensor<double> const x0{{{0.5, -1.0, 2.0, 0.25}, {1.5, 0.75, -0.5, 3.0}, {0.1, 0.2, -0.3, 0.4}},
                          {{-0.5, 1.0, 0.2, -0.25}, {0.5, -0.75, 1.5, 0.3}, {1.1, -0.2, 0.3, -0.4}}};  // [2, 3, 4]
  tensor<double> const b0{0.3, -0.6, 0.9, 0.2}, c0 = tensor<double>{0.1, 0.4, -0.2, 0.7}.reshape({1, 4});
  tensor<double> const w = random_normal({2, 3, 4}, 77);
  shape const out{2, 3, 4};

  // plain numbers: exactly what the full-size copies give
  double const v = row_program(x0, b0, c0, w);
  CHECK(v == row_program(x0, repeat_rows(b0, out), repeat_rows(c0, out), w));

  // reverse mode: the same value and gradients, whether b and c are blocks read in rows, rows
  // with elements of their own (gathered), or full-size copies read flat
  auto gradients = [&](int how) {
    tape_scope<var<double>> scope;
    tensor<var<double>> x(x0), b(b0), c(c0);
    tensor<var<double>> bb = b, cc = c;
    if (how == 1) bb[0] = b[0], cc[0] = c[0];  // a write: elements of their own, the same variables
    if (how == 2) bb = repeat_rows(b, out), cc = repeat_rows(c, out);
    var<double> const l = row_program(x, bb, cc, w);
    // tanh on lanes (SLEEF's) and element by element (<cmath>'s) may differ in the last bit
    CHECK(close(l.value(), v, 1e-15, 1e-15));
    backward(l);
    tensor<double> const gx = adjoints(x), gb = adjoints(b), gc = adjoints(c);
    std::vector<double> g(gx.begin(), gx.end());
    g.insert(g.end(), gb.begin(), gb.end());
    g.insert(g.end(), gc.begin(), gc.end());
    return g;
  };
  auto const rows = gradients(0), own = gradients(1), full = gradients(2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("gradient element " << i);
    CHECK(close(rows[i], full[i], 1e-15, 1e-15));
    CHECK(close(own[i], full[i], 1e-15, 1e-15));
  }

  // forward mode along b's first element, and finite differences along it
  tensor<dual<double>> const xd(x0), cd(c0);
  tensor<dual<double>> bd(b0);
  bd[0] = dual<double>(b0[0], 1.0);
  dual<double> const yd = row_program(xd, bd, cd, w);
  CHECK(close(yd.value(), v, 1e-15, 1e-15));  // element by element: <cmath>'s tanh
  CHECK(close(yd.tangent(), rows[x0.size()], 1e-13, 1e-13));
  tensor<double> up = b0, down = b0;
  up[0] += 1e-6;
  down[0] -= 1e-6;
  CHECK(close((row_program(x0, up, c0, w) - row_program(x0, down, c0, w)) / 2e-6, rows[x0.size()], 1e-7, 1e-7));
}

TEST_CASE("rows of different periods, and broadcasts that are not rows, are read through strides") {
  tensor<double> const x = random_normal({2, 3, 4}, 5), y = random_normal({3, 4}, 6), r = random_normal({4}, 7),
                       col = random_normal({3, 1}, 8);
  shape const out{2, 3, 4};
  tensor<double> const want = x + repeat_rows(y, out) * repeat_rows(r, out);
  tensor<double> const got = x + y * r;  // periods 12 and 4: strided
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == want[i]);
  tensor<double> const outer = col * r;  // [3, 1] * [4]: [3, 4], neither operand a row
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) CHECK(outer(i, j) == col(i, 0) * r[j]);
  tensor<double> const lead = x - r.reshape({1, 1, 4});  // leading 1s: a row of period 4
  for (std::size_t i = 0; i < lead.size(); ++i) CHECK(lead[i] == x[i] - r[i % 4]);
}

TEST_CASE("node outputs keep their values in their block's allocation: shared, copied on write, outliving the block") {
  tensor<double> const x0{{0.5, -1.0, 2.0}, {1.5, 0.75, -0.5}};
  tensor<double> kept, product;
  {
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(x0);
    tensor<var<double>> const y = tanh(x) * 2.0;              // an elementwise node
    tensor<var<double>> const z = 3.0 * x - 1.0;              // a linear node
    tensor<var<double>> const c = concat({y, z});             // a copy node
    tensor<var<double>> const p = matmul(x, x0.transpose());  // a product
    tensor<double> const yv = y.values(), yv2 = y.values();
    CHECK(yv.data() == yv2.data());  // shared, not copied
    tensor<double> w = y.values();
    w.data()[0] = 42.0;  // copy on write: y keeps its values
    CHECK(y[0].value() == std::tanh(0.5) * 2.0);
    CHECK(y.values()[0] == std::tanh(0.5) * 2.0);
    CHECK(w[0] == 42.0);
    kept = c.values();
    product = p.values();
  }  // the tensors of vars and their blocks are gone; the values taken from them are not
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(kept[i] == std::tanh(x0[i]) * 2.0);
    CHECK(kept[6 + i] == 3.0 * x0[i] - 1.0);
  }
  tensor<double> const want = matmul(x0, x0.transpose());
  for (std::size_t i = 0; i < 4; ++i) CHECK(product[i] == want[i]);
  kept.data()[0] = 1.0;  // the only owner now: written in place
  CHECK(kept[0] == 1.0);
  CHECK(kept[1] == std::tanh(x0[1]) * 2.0);
}

TEST_CASE("tensor buffers and node outputs' values start on a 64-byte boundary") {
  auto aligned = [](void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; };
  for (std::size_t n : {0, 1, 3, 8, 100, 5000}) {
    CAPTURE(n);
    tensor<double> const a = random_normal({n}, 3);
    CHECK(aligned(a.data()));
    tensor<dual<double>> const d(a);
    CHECK(aligned(d.data()));
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(a);
    CHECK(aligned(x.data()));  // its elements, made on request
    if (n == 0) continue;
    tensor<var<double>> const y = exp(x) * 2.0, z = 3.0 * x + 1.0;
    CHECK(aligned(detail::tensor_access::kept_values(y)));
    CHECK(aligned(detail::tensor_access::kept_values(z)));
    CHECK(aligned(detail::tensor_access::kept_values(concat({y, z}))));
  }
}

TEST_CASE("logsumexp shifts by the largest element wherever it is (each of the running maxima, the tail)") {
  // 7 elements: four running maxima over 0..3, the tail 4..6. Unshifted, exp(800) overflows,
  // so a wrong shift would give inf; the gradient is softmax: 1 at the largest element, exp(-800)
  // = 0 elsewhere. A NaN element makes the value NaN.
  for (std::size_t at = 0; at < 7; ++at) {
    CAPTURE(at);
    std::vector<double> v(7, -2.0);
    v[(at + 3) % 7] = 0.5;
    v[at] = 800.0;
    tensor<double> const x0(shape{7}, v);
    double const want = 800.0 + std::log1p(std::exp(0.5 - 800.0) + 5 * std::exp(-802.0));
    CHECK(logsumexp(x0) == want);
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(x0);
    var<double> const l = logsumexp(x);
    CHECK(l.value() == want);
    backward(l);
    tensor<double> const g = adjoints(x);
    for (std::size_t j = 0; j < 7; ++j) CHECK(g[j] == (j == at ? 1.0 : 0.0));
    v[(at + 1) % 7] = std::nan("");
    CHECK(std::isnan(logsumexp(tensor<double>(shape{7}, v))));
  }
  // a line read in place from a slice of a block (its values start at an offset in the block)
  {
    tensor<double> const v0{0.25, -1.0, 3.0, 0.5, 2.0, -0.75, 1.5, 0.0, 1.0};
    tape_scope<var<double>> scope;
    tensor<var<double>> const big(v0);
    tensor<var<double>> const part = big.slice(0, 2, 8);
    REQUIRE(detail::tensor_access::kept_values(part) == detail::tensor_access::kept_values(big) + 2);
    var<double> const l = logsumexp(part);
    tensor<double> const p0 = v0.slice(0, 2, 8);
    CHECK(l.value() == logsumexp(p0));
    backward(l);
    tensor<double> const g = adjoints(big);
    double const s = logsumexp(p0);
    for (std::size_t j = 0; j < 9; ++j) {
      CAPTURE(j);
      CHECK(g[j] == doctest::Approx(j >= 2 && j < 8 ? std::exp(v0[j] - s) : 0.0).epsilon(1e-15));
    }
  }
  // all -inf: the shift is 0 and the value -inf; with one +inf, +inf
  double const inf = std::numeric_limits<double>::infinity();
  CHECK(logsumexp(tensor<double>(shape{5}, std::vector<double>(5, -inf))) == -inf);
  CHECK(logsumexp(tensor<double>{-inf, 1.0, 2.0, 3.0, inf}) == inf);
}

TEST_CASE(
    "axis reductions and log_softmax read a block without making its elements, and keep their outputs as values") {
  tensor<double> const x0{{0.5, -1.0, 2.0}, {1.5, 0.75, -0.5}};
  auto run = [&](bool own) {
    tape_scope<var<double>> scope;
    tensor<var<double>> x(x0);
    tensor<var<double>> const xb = x;  // the block's tensor: its elements are never asked for here
    if (own) x(0, 0) = x(0, 0);        // a write: elements of its own, the same variables
    auto& tp = tape<double>::current();
    std::size_t const b0 = tp.stats().node_bytes;
    tensor<var<double>> const ls = log_softmax(x, 1);
    std::size_t const b1 = tp.stats().node_bytes;
    tensor<var<double>> const m = logsumexp(x, 0);
    std::size_t const b2 = tp.stats().node_bytes;
    tensor<var<double>> const s = sum(x, 1);
    std::size_t const b3 = tp.stats().node_bytes;
    // read as a block: a partial per element (and a reduction one index per line); elements of
    // their own: an index and a partial per element
    std::size_t const p = sizeof(double), ix = sizeof(adx::index_type);
    CHECK(b1 - b0 == (own ? 6 * (ix + p) : 6 * p));
    CHECK(b2 - b1 == (own ? 6 * (ix + p) : 6 * p + 3 * ix));  // 3 lines of 2, 3 apart
    CHECK(b3 - b2 == (own ? 6 * (ix + p) : 6 * p + 2 * ix));  // 2 lines of 3
    CHECK(detail::tensor_access::kept_values(ls) != nullptr);
    CHECK(detail::tensor_access::kept_values(m) != nullptr);
    CHECK(detail::tensor_access::kept_values(s) != nullptr);
    var<double> const l = sum(ls * x0) + sum(m * m) + sum(s * s);
    backward(l);
    std::vector<double> out{l.value()};
    tensor<double> const g = adjoints(xb);
    out.insert(out.end(), g.begin(), g.end());
    return out;
  };
  auto const kept = run(false), own = run(true);
  double want = 0;
  for (std::size_t r = 0; r < 2; ++r) {
    double const lse = std::log(std::exp(x0(r, 0)) + std::exp(x0(r, 1)) + std::exp(x0(r, 2)));
    double const sr = x0(r, 0) + x0(r, 1) + x0(r, 2);
    want += sr * sr;
    for (std::size_t j = 0; j < 3; ++j) want += (x0(r, j) - lse) * x0(r, j);
  }
  for (std::size_t j = 0; j < 3; ++j) {
    double const m = std::log(std::exp(x0(0, j)) + std::exp(x0(1, j)));
    want += m * m;
  }
  CHECK(close(kept[0], want, 1e-14, 1e-14));
  for (std::size_t i = 0; i < kept.size(); ++i) CHECK(kept[i] == own[i]);
  check_gradient(
      [](auto const& x) {
        using S = typename std::remove_cvref_t<decltype(x)>::value_type;
        // a slice of a block is a block from an offset
        return S(sum(log_softmax(x, 0) * x) + sum(logsumexp(x, 1) * 2.0) + sum(max(x.slice(0, 1, 2), 1)) +
                 sum(log_softmax(x.slice(1, 1, 3), 0) * x.slice(1, 0, 2)));
      },
      x0);

  // the careful sweep of tf.gradients marks what each node reads from a block as reached (its
  // None rule): the block is connected, an unused one is not, and the gradient is the plain
  // sweep's
  auto ops = std::vector<std::function<var<double>(tensor<var<double>> const&)>>{
      [&](auto const& x) { return sum(log_softmax(x, 1) * x0); },
      [](auto const& x) {
        return sum(logsumexp(x, 0) * tensor<double>{1.0, -2.0, 0.5});
      },
      [](auto const& x) { return sum(sum(x, 1)) + sum(max(x.slice(0, 1, 2), 1)); }};
  for (std::size_t k = 0; k < ops.size(); ++k) {
    INFO("op " << k);
    tape_scope<var<double>> scope;
    tensor<var<double>> const x(x0), unused(x0);
    tensor<var<double>> const rows = x.slice(0, 1, 2);  // a block from an offset
    var<double> const y = ops[k](x) + ops[k](rows);
    auto const g = gradients(y, std::vector{x, unused, rows});
    REQUIRE(g[0].has_value());
    REQUIRE(g[2].has_value());
    CHECK(!g[1].has_value());
    backward(y);
    tensor<double> const plain = adjoints(x);
    for (std::size_t i = 0; i < x0.size(); ++i) CHECK((*g[0])[i] == plain[i]);
  }

  tensor<var<double>> stale;
  {
    tape_scope<var<double>> inner;
    stale = tensor<var<double>>(x0);
  }
  tape_scope<var<double>> outer;
  CHECK_THROWS_AS((void)log_softmax(stale, 1), stale_variable_error);
  CHECK_THROWS_AS((void)sum(stale, 0), stale_variable_error);
}

TEST_CASE("concat: a part kept as values with no block (constants) sends no adjoint anywhere") {
  // No operation makes such a part today (a node whose outputs are all constants returns plain
  // elements); concat still must not read its offsets as variables. Short parts, so that every
  // output keeps its source index.
  tape_scope<var<double>> scope;
  tensor<var<double>> const x{1.5, -2.0};  // variables 1 and 2 of this recording
  auto const made = detail::make_var_values<var<double>>(2, 0, tape<double>::current().epoch());
  made.second[0] = 3.0;
  made.second[1] = 4.0;
  tensor<var<double>> const c = detail::tensor_access::from_block<var<double>>(shape{2}, made.first);
  tensor<var<double>> const y = concat({c, x, c});
  var<double> const l = sum(y * y);
  CHECK(l.value() == 2 * (9.0 + 16.0) + 2.25 + 4.0);
  backward(l);
  tensor<double> const g = adjoints(x);
  CHECK(g[0] == 3.0);  // 2 x, and nothing from the constants' outputs 0 and 1
  CHECK(g[1] == -4.0);
}
