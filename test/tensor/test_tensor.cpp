// Tensors: construction, structure, printing and errors; the tensor cases of the reference
// vectors (values, gradients, Hessians); tensor adjoints against forward mode and finite
// differences on random shapes with broadcasting; BLAS against the portable kernel; fused
// against unfused evaluation.
#include <adx/adx.hpp>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
using adx_test::reference_case;
using nlohmann::json;

namespace {

tensor<double> from_json(json const& t) {
  auto const d = adx_test::data(t);
  std::vector<std::size_t> dims = t["shape"].get<std::vector<std::size_t>>();
  return tensor<double>(shape::from(dims.begin(), dims.end()), d);
}

void check_tensor(tensor<double> const& got, json const& want, double tol = 1e-12) {
  auto const w = adx_test::data(want);
  REQUIRE(got.size() == w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << w[i]);
    CHECK(close(got[i], w[i], tol, tol));
  }
}

/// Whether two tensors have the same shape and bit-for-bit equal elements.
bool same_elements(tensor<double> const& x, tensor<double> const& y) {
  if (x.shape() != y.shape()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] != y[i]) return false;
  return true;
}

/// Hessian entry (i, j) of f over one tensor input, by forward-over-forward (dual<dual<double>>).
template <class F>
double hessian_entry_ff(F const& f, tensor<double> const& x0, std::size_t i, std::size_t j) {
  tensor<dual<dual<double>>> xd(x0.shape());
  for (std::size_t k = 0; k < x0.size(); ++k)
    xd[k] = dual<dual<double>>(dual<double>(x0[k], k == i ? 1.0 : 0.0), dual<double>(k == j ? 1.0 : 0.0, 0.0));
  return primal(f(xd).tangent().tangent());
}

/// Full Hessian of f over one tensor input, by reverse-over-reverse.
template <class F>
std::vector<double> hessian_of(F const& f, tensor<double> const& x0) {
  std::size_t const n = x0.size();
  std::vector<double> h(n * n);
  tape_scope<var<var<double>>> scope;
  tensor<var<var<double>>> x(x0);
  var<var<double>> y = f(x);
  backward(y);
  std::vector<var<double>> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = x[i].adjoint();
  for (std::size_t i = 0; i < n; ++i) {
    backward(g[i]);
    for (std::size_t j = 0; j < n; ++j) h[i * n + j] = x[j].value().adjoint();
  }
  return h;
}

}  // namespace

TEST_CASE("tensor: construction, shape, element access and structure") {
  tensor<double> a{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}};
  CHECK(a.shape() == shape{2, 3});
  CHECK(a.size() == 6);
  CHECK(a(1, 2) == 1.1);
  CHECK(a[4] == 1.3);
  CHECK(zeros({2, 2}).shape() == shape{2, 2});
  CHECK(ones({3})[2] == 1.0);
  CHECK(full({2}, 7.5)[1] == 7.5);
  CHECK(to_string(arange(4)) == "[0. 1. 2. 3.]");
  CHECK(to_string(arange(1.0, 2.0, 0.25)) == "[1. 1.25 1.5 1.75]");

  auto r = a.reshape({3, -1});
  CHECK(r.shape() == shape{3, 2});
  CHECK(r(2, 1) == 1.1);
  auto t = a.transpose();
  CHECK(t.shape() == shape{3, 2});
  CHECK(t(2, 1) == 1.1);
  CHECK(t(0, 1) == 1.2);
  auto p = zeros({2, 3, 4}).permute({2, 0, 1});
  CHECK(p.shape() == shape{4, 2, 3});
  auto s = a.slice(1, 1, 3);
  CHECK(s.shape() == shape{2, 2});
  CHECK(s(1, 0) == 1.3);
  CHECK(a.slice(1, 0, 3, 2)(0, 1) == 0.4);
  CHECK(a.slice(0, -1, 2).shape() == shape{1, 3});

  // copy-on-write: a copy is independent once written
  tensor<double> b = a;
  b(0, 0) = 9.0;
  CHECK(a(0, 0) == 0.5);
  CHECK(b(0, 0) == 9.0);

  // a slice of consecutive elements shares the buffer (no copy) and separates on a write, as a
  // copy does; a strided one is a copy
  {
    tensor<double> m = arange<double>(12).reshape({3, 4});
    tensor<double> const& cm = m;
    tensor<double> rows = m.slice(0, 1, 3), row = m.slice(0, 2, 3), cols = m.slice(1, 1, 3);
    CHECK(std::as_const(rows).data() == cm.data() + 4);
    CHECK(std::as_const(row).data() == cm.data() + 8);
    CHECK(std::as_const(cols).data() != cm.data() + 1);
    CHECK(to_string(rows) == "[[4. 5. 6. 7.]\n [8. 9. 10. 11.]]");
    rows(0, 0) = -1.0;  // the slice copies first
    CHECK(cm(1, 0) == 4.0);
    CHECK(rows(0, 0) == -1.0);
    REQUIRE(std::as_const(row).data() == cm.data() + 8);  // still shared by row and m
    m(2, 3) = -2.0;                                       // the tensor copies first
    CHECK(row(0, 3) == 11.0);
    CHECK(m(2, 3) == -2.0);
    tensor<double> const flat(shape{1, 5}, 2.0);  // the extents before the axis are 1
    tensor<double> const mid = flat.slice(1, 1, 4);
    CHECK(mid.shape() == shape{1, 3});
    CHECK(mid.data() == flat.data() + 1);
  }

  // seeded random tensors are reproducible
  CHECK(to_string(random_normal({5}, 42)) == to_string(random_normal({5}, 42)));
  auto u = random_uniform({1000}, 7, -2.0, 3.0);
  CHECK(amin(u) >= -2.0);
  CHECK(amax(u) < 3.0);
}

TEST_CASE("factories: zeros, ones and full of vars are independent variables, as torch's requires_grad=True") {
  tape_scope<var<double>> scope;
  tensor<double> const w{1.0, -2.0, 3.5};
  auto check = [&](tensor<var<double>> const& x, double v) {
    REQUIRE(x.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(x.data()[i].val() == v);
    // sum(x * w): each element's own adjoint is its weight (one shared variable would read the
    // total, 2.5, in every element)
    var<double> const y = sum(x * w);
    backward(y);
    for (std::size_t i = 0; i < 3; ++i) CHECK(x.data()[i].adjoint() == w.data()[i]);
    CHECK(x.data()[0].index() != x.data()[1].index());
  };
  check(zeros<var<double>>(shape{3}), 0.0);
  check(ones<var<double>>(shape{3}), 1.0);
  check(full<var<double>>(shape{3}, 2.5), 2.5);
  {  // one block on the tape: one entry, as a tensor of vars made from numbers
    tape_scope<var<double>> inner;
    auto const before = tape<double>::current().stats().statements;
    auto const x = ones<var<double>>(shape{4});
    CHECK(tape<double>::current().stats().statements - before == 1);
    CHECK(x.data()[3].index() == x.data()[0].index() + 3);
  }
  // nested: independent at both levels, so the Hessian of sum(x^3 / 6) is diag(x)
  {
    tape_scope<var<var<double>>> inner;
    auto x = full<var<var<double>>>(shape{2}, 3.0);
    var<var<double>> const y = sum(x * x * x / 6.0);
    backward(y);
    var<double> const g0 = x.data()[0].adjoint();  // x0^2 / 2
    CHECK(g0.val() == 4.5);
    backward(g0);
    CHECK(value(x.data()[0]).adjoint() == 3.0);
    CHECK(value(x.data()[1]).adjoint() == 0.0);
  }
  // one shared variable (full of a var, or the fill constructor), and a constant tensor, as the
  // factories' documentation says
  var<double> const s = 2.0;
  CHECK(full<var<double>>(shape{3}, s).data()[2].index() == s.index());
  tensor<var<double>> const shared(shape{3}, s);
  var<double> const ys = sum(shared * w);
  backward(ys);
  CHECK(s.adjoint() == 2.5);
  tensor<var<double>> const c(shape{3}, var<double>::constant(1.0));
  CHECK(c.data()[1].index() == 0);
}

TEST_CASE("tensor: printing like numpy") {
  tensor<double> g{{1.41, 1.6, 6.6}, {1.41, 1.6, 6.6}};
  CHECK(to_string(g) == "[[1.41 1.6 6.6]\n [1.41 1.6 6.6]]");
  CHECK(to_string(tensor<double>{3.0, -1.0}) == "[3. -1.]");
  CHECK(to_string(tensor<double>::scalar(2.5)) == "2.5");
  CHECK(to_string(zeros({2, 1, 2})) == "[[[0. 0.]]\n\n [[0. 0.]]]");
  CHECK(to_string(tensor<double>{1e-7, NAN, -INFINITY}) == "[1.e-07 nan -inf]");
  CHECK(shape{2, 3}.str() == "[2, 3]");
  // an empty tensor of any rank prints as numpy prints it (it used to print [[]\n []] for [2, 0])
  CHECK(to_string(zeros({0})) == "[]");
  CHECK(to_string(zeros({2, 0})) == "[]");
  CHECK(to_string(zeros({2, 3, 0})) == "[]");
}

// softmax over an empty axis gives an empty result, as log_softmax and torch do (it threw an
// error naming max, the reduction it is built from)
TEST_CASE("tensor: softmax and log_softmax over an empty axis") {
  tensor<double> const e = zeros({2, 0});
  CHECK(softmax(e, 1).shape() == shape{2, 0});
  CHECK(log_softmax(e, 1).shape() == shape{2, 0});
  CHECK(softmax(e, 0).shape() == shape{2, 0});
  tape_scope<var<double>> scope;
  tensor<var<double>> const v(e);
  CHECK(softmax(v, 1).shape() == shape{2, 0});
  CHECK(log_softmax(v, 1).shape() == shape{2, 0});
}

TEST_CASE("tensor: values() of a tensor of numbers is a copy, as generic code expects") {
  tensor<double> const a{{1.5, -2.0}, {0.25, 8.0}};
  tensor<double> v = a.values();
  CHECK(v.shape() == a.shape());
  adx_test::check_values(v, {1.5, -2.0, 0.25, 8.0}, 0.0, 0.0);
  v(0, 0) = 7.0;
  CHECK(a(0, 0) == 1.5);
  tape_scope<var<double>> scope;
  tensor<var<double>> const x(a);
  adx_test::check_values(x.values(), {1.5, -2.0, 0.25, 8.0}, 0.0, 0.0);
}

TEST_CASE("tensor: errors name the operation and the shapes") {
  tensor<double> a = zeros({2, 3}), b = zeros({3, 3});
  auto const message = [](auto&& f) { return adx_test::error_message<shape_error>(f); };
  CHECK(message([&] { (void)eval(a + b); }) ==
        "adx: add: shapes cannot be broadcast together (shapes [2, 3] and [3, 3])");
  CHECK(message([&] { (void)eval(sin(a) * b); }) ==
        "adx: mul: shapes cannot be broadcast together (shapes [2, 3] and [3, 3])");
  CHECK(message([&] { (void)matmul(b, a); }) == "adx: matmul: inner dimensions differ (shapes [3, 3] and [2, 3])");
  CHECK(message([&] { (void)a.reshape({4, 2}); }) == "adx: reshape: element counts differ (shapes [2, 3] and [4, 2])");
  CHECK(message([&] { (void)sum(a, 2); }) == "adx: sum: axis 2 is out of range for rank 2 (shape [2, 3])");
  CHECK(message([&] { (void)a(2, 0); }) == "adx: operator(): index 2 out of range in dimension 0 (shape [2, 3])");
  CHECK(message([&] { (void)a(1); }) == "adx: operator(): 1 indices given for (shape [2, 3])");
  CHECK(message([&] { (void)a.item(); }) == "adx: item: needs a tensor of exactly one element (shape [2, 3])");
  CHECK(message([&] { (void)a.permute({0, 0}); }) == "adx: permute: an axis is repeated (shape [2, 3])");
  // each names the function called: amax / amin, or max / min
  CHECK(message([&] { (void)amax(zeros({0})); }) == "adx: amax: reduction over an empty tensor or axis");
  CHECK(message([&] { (void)max(zeros({0})); }) == "adx: max: reduction over an empty tensor or axis");
  CHECK(message([&] { (void)amin(zeros({2, 0}), 1); }) == "adx: amin: reduction over an empty tensor or axis");
  CHECK(message([&] { (void)min(zeros({2, 0}), 1); }) == "adx: min: reduction over an empty tensor or axis");
  CHECK(message([&] { (void)amax(a, 2); }) == "adx: amax: axis 2 is out of range for rank 2 (shape [2, 3])");
  CHECK(message([&] { (void)max(a, -3); }) == "adx: max: axis -3 is out of range for rank 2 (shape [2, 3])");
  CHECK(message([&] {
          (void)tensor<double>({{1.0, 2.0}, {3.0}});
        }) == "adx: tensor: ragged initializer list (rows of different lengths)");
  CHECK(message([&] { (void)dot(zeros({2}), zeros({3})); }) ==
        "adx: dot: needs two rank-1 tensors of the same length (shapes [2] and [3])");
}

TEST_CASE("tensor: shapes naming more elements than exist are errors, not wrapped counts") {
  auto const message = [](auto&& f) { return adx_test::error_message<shape_error>(f); };
  std::size_t const big = std::size_t{1} << 32;  // big * big wraps to 0
  CHECK(message([&] {
          (void)tensor<double>(shape{big, big});
        }) == "adx: tensor: more elements than an address space holds (shape [4294967296, 4294967296])");
  CHECK(message([&] {
          (void)tensor<double>(shape{big, big}, std::vector<double>{});
        }) == "adx: tensor: more elements than an address space holds (shape [4294967296, 4294967296])");
  CHECK(message([&] {
          (void)tensor<double>::generate(shape{big, big}, [](std::size_t) { return 1.0; });
        }) == "adx: tensor: more elements than an address space holds (shape [4294967296, 4294967296])");
  tensor<double> const t{1.0, 2.0, 3.0, 4.0};
  long const wraps_to_4 = (1L << 62) + 1;  // * 4 wraps to 4
  CHECK(message([&] {
          (void)t.reshape({wraps_to_4, 4});
        }) == "adx: reshape: more elements than an address space holds (shape [4611686018427387905, 4])");
  CHECK(message([&] {
          (void)zeros({0}).reshape({1L << 40, 1L << 40});
        }) == "adx: reshape: more elements than an address space holds (shape [1099511627776, 1099511627776])");
  // operations whose result names more elements than its operands: checked before allocating
  tensor<double> const col = zeros({0}).reshape({0, 1}), row = zeros({0}).reshape({1, 0});
  CHECK(eval(col + row).shape() == shape{0, 0});  // a zero extent: no elements, whatever the rest
  CHECK(tensor<double>(shape{0, big, big}).size() == 0);
  // a byte count that would wrap: std::bad_alloc, not a short buffer
  CHECK_THROWS_AS((void)tensor<double>(shape{std::size_t{1} << 61}), std::bad_alloc);
}

TEST_CASE("tensor: slice with a step beyond the extent takes the first element, without overflow") {
  tensor<double> const t{1.0, 2.0, 3.0, 4.0};
  tensor<double> const r = t.slice(0, 0, 4, std::numeric_limits<long>::max());
  CHECK(r.shape() == shape{1});
  CHECK(r[0] == 1.0);
  CHECK(t.slice(0, 1, 4, 2).shape() == shape{2});
  CHECK(t.slice(0, 1, 4, 3).shape() == shape{1});
  CHECK(t.slice(0, 3, 1).shape() == shape{0});
  CHECK(t.slice(0, -1, std::numeric_limits<long>::max(), std::numeric_limits<long>::max())[0] == 4.0);
}

TEST_CASE("tensor: a moved-from tensor is an empty tensor of shape [0]") {
  tensor<double> a{1.0, 2.0, 3.0};
  tensor<double> const b = std::move(a);
  CHECK(b.shape() == shape{3});
  CHECK(b[2] == 3.0);
  CHECK(a.shape() == shape{0});  // NOLINT(bugprone-use-after-move): what this checks
  CHECK(a.size() == 0);
  CHECK(sum(a) == 0.0);
  CHECK(eval(a * 2.0).size() == 0);
  std::ostringstream os;
  os << a;
  CHECK(os.str() == "[]");
  tensor<double> c{5.0};
  c = std::move(a);  // NOLINT(bugprone-use-after-move)
  CHECK(c.size() == 0);
  a = b;  // usable again
  CHECK(a[1] == 2.0);
  tensor<double>& same = a;
  a = std::move(same);  // a self-move keeps the tensor
  CHECK(a[1] == 2.0);

  tape_scope<var<double>> scope;
  tensor<var<double>> x{1.0, 2.0};
  tensor<var<double>> const y = std::move(x);
  CHECK(x.size() == 0);  // NOLINT(bugprone-use-after-move)
  var<double> const l = sum(x * x) + sum(y * y);
  backward(l);
  CHECK(l.value() == 5.0);
  tensor<double> const g = adjoints(y);
  CHECK(g[0] == 2.0);
  CHECK(g[1] == 4.0);
  CHECK(adjoints(x).size() == 0);
}

TEST_CASE("tensor: the seed's MatMul with a broadcast shape-[1] parameter (reference, grad_ys)") {
  for (char const* name : {"matmul_param_broadcast_sens_ones", "matmul_param_broadcast_sens_weighted"}) {
    CAPTURE(name);
    auto const& c = reference_case(name);
    tape_scope<var<double>> scope;
    tensor<var<double>> x(from_json(c["inputs"]["x"])), y(from_json(c["inputs"]["y"])), z(from_json(c["inputs"]["z"]));
    tensor<var<double>> out = matmul(x * z, y);
    check_tensor(out.values(), c["expected"]["value"]);
    var<double> l = sum(out * from_json(c["expected"]["grad_ys"]));
    backward(l);
    check_tensor(adjoints(x), c["expected"]["grad"]["x"]);
    check_tensor(adjoints(y), c["expected"]["grad"]["y"]);
    check_tensor(adjoints(z), c["expected"]["grad"]["z"]);
  }
  // the seed prints the gradient in x: the row sums of y
  tape_scope<var<double>> scope;
  tensor<var<double>> x(tensor<double>{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}});
  tensor<var<double>> y(tensor<double>{{0.01, 0.3, 1.1}, {0.1, 0.2, 1.3}, {2.1, 1.2, 3.3}});
  tensor<var<double>> z{1.0};
  var<double> l = sum(matmul(x * z, y));
  backward(l);
  CHECK(to_string(adjoints(x)) == "[[1.41 1.6 6.6]\n [1.41 1.6 6.6]]");
}

TEST_CASE("tensor: reductions against the reference (value, gradient, Hessian)") {
  SUBCASE("sum over an axis with grad_ys") {
    auto const& c = reference_case("reduce_sum_axis1_grad_ys");
    tape_scope<var<double>> scope;
    tensor<var<double>> x(from_json(c["inputs"]["x"]));
    auto y = sum(x, 1);
    check_tensor(y.values(), c["expected"]["value"]);
    var<double> l = sum(y * from_json(c["expected"]["grad_ys"]));
    backward(l);
    check_tensor(adjoints(x), c["expected"]["grad"]["x"]);
  }
  auto scalar_case = [](char const* name, auto f) {
    CAPTURE(name);
    auto const& c = reference_case(name);
    tensor<double> const x0 = from_json(c["inputs"]["x"]);
    {
      tape_scope<var<double>> scope;
      tensor<var<double>> x(x0);
      var<double> y = f(x);
      CHECK(close(y.value(), adx_test::data(c["expected"]["value"])[0]));
      backward(y);
      check_tensor(adjoints(x), c["expected"]["grad"]["x"]);
    }
    auto const h = hessian_of(f, x0);
    check_tensor(tensor<double>(shape{h.size()}, h), c["expected"]["hessian"], 1e-12);
  };
  scalar_case("reduce_mean_square", [](auto const& x) { return mean(x * x); });
  scalar_case("reduce_prod", [](auto const& x) { return prod(x); });
  scalar_case("reduce_logsumexp", [](auto const& x) { return logsumexp(x); });
  scalar_case("reduce_norm_l2", [](auto const& x) { return norm(x); });
}

TEST_CASE("tensor: max(t, axis) and min(t, axis) give the gradient to the first extreme, amax and amin split it") {
  auto values_of = [](tensor<double> const& t) { return std::vector<double>(t.data(), t.data() + t.size()); };
  tensor<double> const v{{1.0, 3.0, 3.0}, {2.0, -1.0, -1.0}};
  tape_scope<var<double>> scope;
  tensor<var<double>> x(v);
  var<double> const m = sum(max(x, 1));
  backward(m);
  CHECK(m.value() == 5.0);
  CHECK(values_of(adjoints(x)) == std::vector<double>{0, 1, 0, 1, 0, 0});
  var<double> const n = sum(min(x, 1, true));
  backward(n);
  CHECK(n.value() == 0.0);
  CHECK(values_of(adjoints(x)) == std::vector<double>{1, 0, 0, 0, 1, 0});
  var<double> const a = sum(amax(x, 1));
  backward(a);
  CHECK(values_of(adjoints(x)) == std::vector<double>{0, 0.5, 0.5, 1, 0, 0});
  var<double> const c = sum(max(x, 0));  // columns: 2 (row 1), 3, 3 (row 0)
  backward(c);
  CHECK(values_of(adjoints(x)) == std::vector<double>{0, 1, 1, 1, 0, 0});
  // forward mode: the tangent of the same element
  auto const d = tensor<dual<double>>::generate(
      v.shape(), [&](std::size_t i) { return dual<double>(v.data()[i], 0.1 * static_cast<double>(i + 1)); });
  tensor<dual<double>> const md = max(d, 1);
  CHECK(md[0].tangent() == 0.2);
  CHECK(md[1].tangent() == 0.4);
  // a NaN is the maximum of its line (the first one), and it takes the gradient
  double const nan = std::numeric_limits<double>::quiet_NaN();
  tensor<var<double>> y(tensor<double>{1.0, nan, 3.0, nan});
  var<double> const my = sum(max(y, 0));
  CHECK(std::isnan(my.value()));
  backward(my);
  CHECK(values_of(adjoints(y)) == std::vector<double>{0, 1, 0, 0});
  CHECK_THROWS_AS((void)max(tensor<double>(shape{2, 0}), 1), shape_error);
}

TEST_CASE("tensor: documented edges of reductions (empty lines, all -inf, the norm at 0)") {
  double const inf = std::numeric_limits<double>::infinity();
  tape_scope<var<double>> scope;
  tensor<var<double>> const empty(tensor<double>(shape{0}));
  var<double> const s = sum(empty), m = mean(empty);
  CHECK(s.value() == 0.0);
  CHECK(std::isnan(m.value()));
  // logsumexp of all -inf is -inf; its gradient exp(x - f) is exp(NaN): NaN, as torch's
  tensor<var<double>> const minf(tensor<double>{-inf, -inf});
  var<double> const l = logsumexp(minf);
  CHECK(l.value() == -inf);
  backward(l);
  tensor<double> const gl = adjoints(minf);
  CHECK(std::isnan(gl[0]));
  CHECK(std::isnan(gl[1]));
  // at 0: norm's subgradient is 0, sqrt(sum(x * x)) is inf * 0 = NaN through the chain rule (torch alike)
  tensor<var<double>> const zero(tensor<double>{0.0, 0.0});
  var<double> const n = norm(zero);
  backward(n);
  CHECK(n.value() == 0.0);
  CHECK(adjoints(zero)[0] == 0.0);
  var<double> const r = sqrt(sum(zero * zero));
  backward(r);
  CHECK(r.value() == 0.0);
  CHECK(std::isnan(adjoints(zero)[0]));
  CHECK(std::isnan(adjoints(zero)[1]));
}

TEST_CASE("tensor: non-differentiable points of reductions (reference)") {
  auto const& c = reference_case("nondiff_minmax_ties");
  auto const& in = c["inputs"];
  auto const& ex = c["expected"];
  tape_scope<var<double>> scope;
  {
    tensor<var<double>> x(from_json(in["x"])), y(from_json(in["y"]));
    var<double> s = sum(max(x, y));
    backward(s);
    check_tensor(adjoints(x), ex["maximum_grad"]["x"]);
    check_tensor(adjoints(y), ex["maximum_grad"]["y"]);
    var<double> m = sum(min(x, y));
    backward(m);
    check_tensor(adjoints(x), ex["minimum_grad"]["x"]);
    check_tensor(adjoints(y), ex["minimum_grad"]["y"]);
  }
  {
    tensor<var<double>> r(from_json(in["r"])), rr(from_json(in["rr"]));
    var<double> a = max(r);
    backward(a);
    check_tensor(adjoints(r), ex["reduce_max_grad"]);
    var<double> b = min(rr);
    backward(b);
    check_tensor(adjoints(rr), ex["reduce_min_grad"]);
    var<double> c = sum(max(r, 0));  // torch.max(r, dim=0).values: all of it to the first maximum
    backward(c);
    check_tensor(adjoints(r), ex["max_dim_grad"]);
  }
  {
    auto const& p = reference_case("nondiff_prod_with_zeros");
    tensor<var<double>> a(from_json(p["inputs"]["x_one_zero"])), b(from_json(p["inputs"]["x_two_zeros"]));
    var<double> pa = prod(a);
    backward(pa);
    check_tensor(adjoints(a), p["expected"]["grad_one_zero"]);
    var<double> pb = prod(b);
    backward(pb);
    check_tensor(adjoints(b), p["expected"]["grad_two_zeros"]);
  }
  {
    auto const& n = reference_case("nondiff_norm_like_at_zero");
    tensor<var<double>> z(from_json(n["inputs"]["z"]));
    var<double> v = norm(z);
    backward(v);
    check_tensor(adjoints(z), n["expected"]["norm_grad"]);
  }
}

// amax/amin share tied extremes 1/3 each here. In a nested mode the value's own derivatives must
// share them too (the inner level), not follow the first extreme while the outer level splits.
// Likewise the norm's zero subgradient at 0, where sqrt'(0) = inf made the inner level NaN (torch's
// forward mode gives 0 there as well).
TEST_CASE("tensor: amax/amin ties and the norm at zero: every nesting level agrees") {
  std::vector<double> const x0{3.0, 1.0, 3.0, 3.0}, v{1.0, 2.0, 4.0, 8.0};
  double const mean = (1.0 / 3.0) * 1.0 + (1.0 / 3.0) * 4.0 + (1.0 / 3.0) * 8.0;  // the tied tangents
  for (bool const is_max : {true, false}) {
    INFO(std::string(is_max ? "amax" : "amin"));
    std::vector<double> x = x0;
    if (!is_max)
      for (double& e : x) e = -e;
    auto reduce = [&](auto const& t) { return is_max ? amax(t) : amin(t); };
    {  // dual<dual>: tangents v at both levels
      tensor<dual<dual<double>>> t(shape{4});
      for (std::size_t j = 0; j < 4; ++j)
        t.data()[j] = dual<dual<double>>(dual<double>(x[j], v[j]), dual<double>(v[j], 0.0));
      dual<dual<double>> const r = reduce(t);
      CHECK(r.value().value() == x[0]);
      CHECK(close(r.value().tangent(), mean, 1e-15, 0));
      CHECK(close(r.tangent().value(), mean, 1e-15, 0));
      CHECK(r.tangent().tangent() == 0.0);
    }
    {  // var<dual>: the value's tangent and the adjoints
      tape_scope<var<dual<double>>> s;
      tensor<dual<double>> d(shape{4});
      for (std::size_t j = 0; j < 4; ++j) d.data()[j] = dual<double>(x[j], v[j]);
      tensor<var<dual<double>>> const t(d);
      var<dual<double>> r = reduce(t);
      CHECK(close(r.value().tangent(), mean, 1e-15, 0));
      backward(r);
      auto const g = adjoints(t);
      for (std::size_t j = 0; j < 4; ++j) {
        CHECK(g[j].value() == (j == 1 ? 0.0 : 1.0 / 3.0));
        CHECK(g[j].tangent() == 0.0);
      }
    }
    {  // var<var>: the inner tape's gradient of the value against the outer gradient
      tape_scope<var<var<double>>> s;
      tensor<var<var<double>>> const t(tensor<double>(shape{4}, x));
      var<var<double>> r = reduce(t);
      backward(r);
      auto const g = adjoints(t);
      var<double> inner = r.value();
      backward(inner);
      for (std::size_t j = 0; j < 4; ++j) {
        double const share = j == 1 ? 0.0 : 1.0 / 3.0;
        CHECK(primal(g[j]) == share);
        CHECK(t.data()[j].value().adjoint() == share);
      }
    }
  }
  {  // the norm at zero: dual<dual>, then var<dual> and var<var>
    tensor<dual<dual<double>>> t(shape{2});
    for (std::size_t j = 0; j < 2; ++j)
      t.data()[j] = dual<dual<double>>(dual<double>(0.0, v[j]), dual<double>(v[j], 0.0));
    dual<dual<double>> const r = norm(t);
    CHECK(r.value().value() == 0.0);
    CHECK(r.value().tangent() == 0.0);
    CHECK(r.tangent().value() == 0.0);
    CHECK(r.tangent().tangent() == 0.0);
    tape_scope<var<dual<double>>> s;
    tensor<var<dual<double>>> const tv(
        tensor<dual<double>>(shape{2}, {dual<double>(0.0, 1.0), dual<double>(0.0, 2.0)}));
    var<dual<double>> rv = norm(tv);
    CHECK(rv.value().tangent() == 0.0);
    backward(rv);
    CHECK(adjoints(tv)[0].value() == 0.0);
    tape_scope<var<var<double>>> s2;
    tensor<var<var<double>>> const tw(tensor<double>(shape{2}, {0.0, 0.0}));
    var<var<double>> rw = norm(tw);
    var<double> inner = rw.value();
    backward(inner);
    CHECK(tw.data()[0].value().adjoint() == 0.0);
    CHECK(tw.data()[1].value().adjoint() == 0.0);
  }
}

TEST_CASE("tensor: the norm's second and third derivatives stay finite for tiny and large x, in every mode") {
  // ||c x|| = c ||x||, so the Hessian at c x is the Hessian at x over c, the third derivatives
  // over c^2: with c a power of two the scaled derivatives are the same numbers. At c = 2^-530
  // the plain sum of squares is subnormal; at 2^-300 the third order's 1 / ||x||^3 is beyond
  // the doubles.
  tensor<double> const x{3.0, -4.0};
  auto hessian_rr = [](tensor<double> const& at) {  // reverse over reverse
    tape_scope<var<var<double>>> scope;
    tensor<var<var<double>>> const t(at);
    var<var<double>> const r = norm(t);
    backward(r);
    std::vector<double> h;
    for (std::size_t i = 0; i < 2; ++i) {
      var<double> gi = t.data()[i].adjoint();
      backward(gi);
      for (std::size_t j = 0; j < 2; ++j) h.push_back(t.data()[j].value().adjoint());
    }
    return h;
  };
  std::vector<double> const want{16.0 / 125, 12.0 / 125, 12.0 / 125, 9.0 / 125};  // (I - x x^T / 25) / 5
  for (int k : {0, -530, -300, 300}) {
    INFO("x scaled by 2^" << k);
    double const c = std::ldexp(1.0, k);
    tensor<double> const at = eval(x * c);
    std::vector<double> const h = hessian_rr(at);
    tensor<double> const hf = functional::hessian([](auto const& t) { return norm(t); }, at);  // forward over reverse
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(close(h[i] * c, want[i], 1e-14, 0.0));
      CHECK(close(hf[i] * c, want[i], 1e-14, 0.0));
    }
    // third order (var<var<var>>): d/dx0 of H00 = d3 ||x|| / dx0^3 = -3 x0 x1^2 / ||x||^5 (at
    // 2^-530 that is beyond the doubles)
    if (k == -530) continue;
    tape_scope<var<var<var<double>>>> scope;
    tensor<var<var<var<double>>>> const t(at);
    var<var<var<double>>> const r = norm(t);
    backward(r);
    var<var<double>> g0 = t.data()[0].adjoint();
    backward(g0);
    var<double> h00 = t.data()[0].value().adjoint();
    backward(h00);
    CHECK(close(t.data()[0].value().value().adjoint() * c * c, -3 * 3.0 * 16.0 / 3125, 1e-13, 0.0));
  }
  {  // float: the scaling stays within float's exponents. At 2^-74 the plain sum of squares
     // is subnormal (2^-147): the same value as over plain floats, finite derivatives.
    tape_scope<var<var<float>>> scope;
    tensor<float> const at{std::ldexp(1.0f, -74), std::ldexp(1.0f, -74)};
    tensor<var<var<float>>> const t(at);
    var<var<float>> const r = norm(t);
    CHECK(r.value().value() == norm(at));
    CHECK(r.value().value() == std::sqrt(std::ldexp(1.0f, -147)));
    backward(r);
    var<float> g0 = t.data()[0].adjoint();
    CHECK(std::abs(g0.value() - std::sqrt(0.5f)) < 1e-6f);
    backward(g0);
    CHECK(std::isfinite(t.data()[0].value().adjoint()));
  }
}

TEST_CASE(
    "tensor: where the plain sum of squares underflows or overflows, every level has the plain norm and its "
    "derivatives") {
  // the rule over plain numbers (the sum of squares, zero subgradient at 0) holds one level up
  // too: the scaled evaluation is for sums that are small, not for sums that are 0
  tensor<double> const at{1e-170, 0.0, -1e-170};
  CHECK(norm(at) == 0.0);
  {
    tape_scope<var<var<double>>> scope;
    tensor<var<var<double>>> const t(at);
    var<var<double>> const r = norm(t);
    CHECK(r.value().value() == 0.0);
    backward(r);
    var<double> g0 = t.data()[0].adjoint();
    CHECK(g0.value() == 0.0);
    backward(g0);
    for (std::size_t j = 0; j < 3; ++j) CHECK(t.data()[j].value().adjoint() == 0.0);
  }
  {
    using D2 = dual<dual<double>>;
    tensor<D2> t(shape{3});
    for (std::size_t j = 0; j < 3; ++j) t.data()[j] = D2(dual<double>(at[j], j == 0), dual<double>(j == 0, 0.0));
    D2 const r = norm(t);
    CHECK(r.value().value() == 0.0);
    CHECK(r.value().tangent() == 0.0);
    CHECK(r.tangent().value() == 0.0);
    CHECK(r.tangent().tangent() == 0.0);
  }
  tensor<double> const h = functional::hessian([](auto const& t) { return norm(t); }, at);
  for (std::size_t i = 0; i < 9; ++i) CHECK(h.data()[i] == 0.0);
  {  // and where it overflows: inf as over doubles, with partials x / inf = 0
    tensor<double> const big{1e200, -1e200};
    CHECK(std::isinf(norm(big)));
    tape_scope<var<var<double>>> scope;
    tensor<var<var<double>>> const t(big);
    var<var<double>> const r = norm(t);
    CHECK(std::isinf(r.value().value()));
    backward(r);
    CHECK(t.data()[0].adjoint().value() == 0.0);
    CHECK(t.data()[1].adjoint().value() == 0.0);
  }
  // and on the float grid: x = 7 * 2^-149 squares to 0 in float
  tape_scope<var<var<float>>> scope;
  tensor<var<var<float>>> const tf(tensor<float>{std::ldexp(7.0f, -149), std::ldexp(7.0f, -149)});
  CHECK(norm(tf).value().value() == 0.0f);
}

// The same for every reduction over all elements, on lines with edges: in dual<dual> with every
// element's tangent 1, 2, 3, ... at both levels, the value's own tangent (the inner level) and
// the outer tangent (the partials) must be the same number, or both NaN; in var<var> likewise
// each element's inner and outer adjoint.
TEST_CASE("tensor: every reduction's inner and outer derivatives agree at the edges") {
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  using D2 = dual<dual<double>>;
  std::vector<std::vector<double>> const lines{{0.0, 0.0},      {2.0, 2.0, 1.0}, {-inf, -inf}, {inf, 1.0},
                                               {0.0, 1.0, 0.0}, {nan, 1.0},      {-0.0, 0.0},  {3.0}};
  auto const reductions = std::make_tuple(
      [](auto const& t) { return sum(t); }, [](auto const& t) { return mean(t); },
      [](auto const& t) { return prod(t); }, [](auto const& t) { return amax(t); },
      [](auto const& t) { return amin(t); }, [](auto const& t) { return max(t); }, [](auto const& t) { return min(t); },
      [](auto const& t) { return logsumexp(t); }, [](auto const& t) { return norm(t); });
  int checked = 0;
  adx_test::for_each_numbered(reductions, [&](int which, auto const& reduce) {
    for (auto const& line : lines) {
      INFO("reduction " << which << " of line " << line.size() << " starting " << line[0]);
      tensor<D2> t(shape{line.size()});
      for (std::size_t j = 0; j < line.size(); ++j) {
        double const v = static_cast<double>(j + 1);
        t.data()[j] = D2(dual<double>(line[j], v), dual<double>(v, 0.0));
      }
      D2 const r = reduce(t);
      ADX_CHECK_CLOSE(r.value().tangent(), r.tangent().value(), 1e-15, 0);  // NaN only with NaN
      // var<var>: per element, the inner tape's gradient of the value against the outer
      tape_scope<var<var<double>>> s;
      tensor<var<var<double>>> const tv(tensor<double>(shape{line.size()}, line));
      var<var<double>> rv = reduce(tv);
      backward(rv);
      auto const outer = adjoints(tv);
      var<double> inner = rv.value();
      backward(inner);
      for (std::size_t j = 0; j < line.size(); ++j)
        ADX_CHECK_CLOSE(tv.data()[j].value().adjoint(), primal(outer[j]), 1e-15, 0);
      ++checked;
    }
  });
  CHECK(checked == 72);
}

// Axis reductions, softmax and log_softmax on rows with edges (a tie, zeros, infinities, NaN):
// the directional derivative along v must be the same number (or NaN) in tensor<dual> (forward),
// tensor<var> (the gradient times v), and at both levels of tensor<dual<dual>>.
TEST_CASE("tensor: axis reductions and softmax agree across modes and levels at the edges") {
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  using D2 = dual<dual<double>>;
  std::vector<std::vector<double>> const rows{{2.0, 2.0, 1.0}, {0.0, 0.0, 0.0}, {-inf, -inf, 0.5},
                                              {inf, 1.0, 0.0}, {nan, 1.0, 2.0}, {1.0, -1.0, 3.0}};
  std::vector<double> const v{1.0, 2.0, 4.0};  // no zero, so that 0 * inf cannot differ by mode
  tensor<double> const w(shape{3}, {1.0, 2.0, 3.0});
  auto const functions = std::make_tuple([](auto const& t, auto const&) { return sum(amax(t, 1)); },
                                         [](auto const& t, auto const&) { return sum(amin(t, 1)); },
                                         [](auto const& t, auto const&) { return sum(max(t, 1)); },
                                         [](auto const& t, auto const&) { return sum(prod(t, 1)); },
                                         [](auto const& t, auto const&) { return sum(mean(t, 1)); },
                                         [](auto const& t, auto const&) { return sum(norm(t, 1)); },
                                         [](auto const& t, auto const&) { return sum(logsumexp(t, 1)); },
                                         [](auto const& t, auto const& w) { return sum(softmax(t, 1) * w); },
                                         [](auto const& t, auto const& w) { return sum(log_softmax(t, 1) * w); });
  int checked = 0;
  adx_test::for_each_numbered(functions, [&](int which, auto const& f) {
    for (auto const& row : rows) {
      INFO("function " << which << ", row starting " << row[0] << ", " << row[1]);
      tensor<dual<double>> td(shape{1, 3});
      for (std::size_t j = 0; j < 3; ++j) td.data()[j] = dual<double>(row[j], v[j]);
      double const forward = dual<double>(f(td, w)).tangent();
      tape_scope<var<double>> s;
      tensor<var<double>> const tv(tensor<double>(shape{1, 3}, row));
      var<double> r = f(tv, w);
      backward(r);
      auto const g = adjoints(tv);
      double reverse = 0;
      for (std::size_t j = 0; j < 3; ++j) reverse += g[j] * v[j];
      tensor<D2> t2(shape{1, 3});
      for (std::size_t j = 0; j < 3; ++j) t2.data()[j] = D2(dual<double>(row[j], v[j]), dual<double>(v[j], 0.0));
      D2 const r2 = f(t2, w);
      // the same number to 1e-14, or NaN in both (support/check.hpp's close)
      ADX_CHECK_CLOSE(reverse, forward, 1e-14, 1e-300);
      ADX_CHECK_CLOSE(r2.value().tangent(), forward, 1e-14, 1e-300);
      ADX_CHECK_CLOSE(r2.tangent().value(), forward, 1e-14, 1e-300);
      ++checked;
    }
  });
  CHECK(checked == 54);
}
TEST_CASE("tensor: softmax cross-entropy and the 2-layer tanh MLP with MSE (reference)") {
  {
    auto const& c = reference_case("softmax_cross_entropy_mean");
    std::vector<std::size_t> const labels{0, 1, 3};
    auto loss = [&](auto const& z) {
      auto const lp = log_softmax(z, 1);
      using S = typename std::remove_cvref_t<decltype(lp)>::value_type;
      S l = S(0.0);
      for (std::size_t b = 0; b < labels.size(); ++b) l = l - lp(b, labels[b]);
      return S(l / static_cast<double>(labels.size()));
    };
    tensor<double> const z0 = from_json(c["inputs"]["z"]);
    tape_scope<var<double>> scope;
    tensor<var<double>> z(z0);
    var<double> l = loss(z);
    CHECK(close(l.value(), adx_test::data(c["expected"]["value"])[0]));
    backward(l);
    check_tensor(adjoints(z), c["expected"]["grad"]["z"]);
    check_tensor(tensor<double>(shape{144}, hessian_of(loss, z0)), c["expected"]["hessian"], 1e-12);
  }
  {
    auto const& c = reference_case("mlp2_tanh_mse");
    auto const& in = c["inputs"];
    tape_scope<var<double>> scope;
    tensor<var<double>> X(from_json(in["X"])), W1(from_json(in["W1"])), b1(from_json(in["b1"])),
        W2(from_json(in["W2"])), b2(from_json(in["b2"]));
    tensor<double> const Y = from_json(in["Y"]);
    tensor<var<double>> h = tanh(matmul(X, W1) + b1);
    tensor<var<double>> p = matmul(h, W2) + b2;
    var<double> L = mean((p - Y) * (p - Y));
    CHECK(close(L.value(), adx_test::data(c["expected"]["value"])[0]));
    backward(L);
    check_tensor(adjoints(X), c["expected"]["grad"]["X"]);
    check_tensor(adjoints(W1), c["expected"]["grad"]["W1"]);
    check_tensor(adjoints(b1), c["expected"]["grad"]["b1"]);
    check_tensor(adjoints(W2), c["expected"]["grad"]["W2"]);
    check_tensor(adjoints(b2), c["expected"]["grad"]["b2"]);
  }
}

namespace {
/// A program over two tensors with broadcasting, fused expressions, reductions and matmul.
template <class S>
S program(tensor<S> const& a, tensor<S> const& b, tensor<double> const& w) {
  tensor<S> e = a * b + sin(a) / (2.0 + b * b) - exp(0.1 * a);
  tensor<S> m = matmul(e, w);
  return S(sum(softmax(m, 1) * m) + logsumexp(e) + 0.5 * norm(e) + mean(tanh(e), 0)[0]);
}
}  // namespace

TEST_CASE("tensor: reverse = forward = finite differences on random shapes with broadcasting") {
  std::mt19937_64 gen(2026);
  for (int trial = 0; trial < 12; ++trial) {
    std::size_t const m = 1 + gen() % 4, n = 1 + gen() % 4, k = 1 + gen() % 3;
    shape const bshape = trial % 3 == 0 ? shape{n} : trial % 3 == 1 ? shape{m, 1} : shape{m, n};
    CAPTURE(trial);
    CAPTURE(bshape.str());
    tensor<double> const a0 = random_normal({m, n}, gen()), b0 = random_normal(bshape, gen()),
                         w = random_normal({n, k}, gen());
    tape_scope<var<double>> scope;
    tensor<var<double>> a(a0), b(b0);
    var<double> y = program(a, b, w);
    CHECK(close(y.value(), program(a0, b0, w), 1e-13, 1e-13));
    backward(y);
    auto const ga = adjoints(a), gb = adjoints(b);
    auto fd_and_forward = [&](tensor<double> const& x0, tensor<double> const& g, bool first) {
      for (std::size_t i = 0; i < x0.size(); ++i) {
        auto at = [&](double h) {
          tensor<double> x = x0;
          x[i] += h;
          return first ? program(x, b0, w) : program(a0, x, w);
        };
        double const h = 1e-5;
        double const fd = (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
        CHECK(close(g[i], fd, 1e-7, 1e-7));
        tensor<dual<double>> ad(a0), bd(b0);
        if (first)
          ad[i] = dual<double>(a0[i], 1.0);
        else
          bd[i] = dual<double>(b0[i], 1.0);
        dual<double> yd = program(ad, bd, w);
        CHECK(close(yd.tangent(), g[i], 1e-12, 1e-12));
      }
    };
    fd_and_forward(a0, ga, true);
    fd_and_forward(b0, gb, false);
  }
}

TEST_CASE("tensor: BLAS = portable kernel, fused = unfused, long statements, NaN-safe sweeps") {
  std::mt19937_64 gen(7);
  // GEMM shapes, and the matrix-vector ones (one column or one row: GEMV under BLAS)
  for (auto const& mnk : {std::array<std::size_t, 3>{3, 4, 5}, {17, 1, 9}, {1, 33, 300}, {1, 1, 7}, {5, 1, 1}}) {
    std::size_t const M = mnk[0], N = mnk[1], K = mnk[2];  // not a structured binding: INFO captures them
    INFO("M " << M << ", N " << N << ", K " << K);
    tensor<double> const A = random_normal({M, K}, gen()), B = random_normal({K, N}, gen());
    tensor<double> const C = matmul(A, B);  // BLAS when built with it
    tensor<dual<double>> const Cd = matmul(tensor<dual<double>>(A), tensor<dual<double>>(B));  // portable
    for (std::size_t i = 0; i < C.size(); ++i) CHECK(close(C[i], Cd[i].value(), 1e-13, 1e-13));
    std::vector<double> naive(M * N, 0.0);
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j)
        for (std::size_t k = 0; k < K; ++k) naive[i * N + j] += A(i, k) * B(k, j);
    for (std::size_t i = 0; i < C.size(); ++i) CHECK(close(C[i], naive[i], 1e-13, 1e-13));
    // every transposition of the stored operands, overwriting and accumulating
    tensor<double> const At = A.transpose(), Bt = B.transpose();
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) {
          INFO("trans_a " << ta << ", trans_b " << tb << ", accumulate " << acc);
          // overwriting: whatever the output held (NaN here) is not read
          std::vector<double> out(M * N, acc ? 0.5 : std::numeric_limits<double>::quiet_NaN());
          detail::gemm<double>(ta, tb, M, N, K, ta ? At.data() : A.data(), ta ? M : K, tb ? Bt.data() : B.data(),
                               tb ? K : N, out.data(), N, acc);
          for (std::size_t i = 0; i < C.size(); ++i) CHECK(close(out[i], naive[i] + (acc ? 0.5 : 0.0), 1e-13, 1e-13));
        }
  }
  {  // fused and unfused evaluation give the same values and gradients
    tensor<double> const a0 = random_normal({4, 5}, 1), c0 = random_normal({4, 5}, 2);
    tape_scope<var<double>> scope;
    tensor<var<double>> a(a0), c(c0);
    tensor<var<double>> fused = a * c + sin(c) / (a * a + 1.0);
    tensor<var<double>> t1 = a * c, t2 = sin(c), t3 = a * a + 1.0, t4 = t2 / t3, unfused = t1 + t4;
    var<double> lf = sum(fused), lu = sum(unfused);
    for (std::size_t i = 0; i < fused.size(); ++i) CHECK(fused[i].value() == unfused[i].value());
    backward(lf);
    auto const gaf = adjoints(a), gcf = adjoints(c);
    backward(lu);
    auto const gau = adjoints(a), gcu = adjoints(c);
    for (std::size_t i = 0; i < gaf.size(); ++i) {
      CHECK(close(gaf[i], gau[i], 1e-14, 1e-14));
      CHECK(close(gcf[i], gcu[i], 1e-14, 1e-14));
    }
    // alias-safe assignment
    tensor<double> x = a0;
    x = x * x + x;
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i] == a0[i] * a0[i] + a0[i]);
  }
  {  // a product whose operands are not one block of variables (a transpose) scatters its adjoints
    tensor<double> const A0 = random_normal({3, 4}, 11), B0 = random_normal({3, 2}, 12);
    tape_scope<var<double>> scope;
    tensor<var<double>> A(A0), B(B0);
    var<double> l = sum(matmul(A.transpose(), B) * matmul(A.transpose(), B));  // [4,3] x [3,2]
    backward(l);
    tensor<double> const gA = adjoints(A), gB = adjoints(B);
    tensor<double> const C = matmul(A0.transpose(), B0);  // dl/dA = 2 B C^T, dl/dB = 2 A C
    tensor<double> const wantA = matmul(B0, C.transpose()), wantB = matmul(A0, C);
    for (std::size_t i = 0; i < gA.size(); ++i) CHECK(close(gA[i], 2 * wantA[i], 1e-13, 1e-13));
    for (std::size_t i = 0; i < gB.size(); ++i) CHECK(close(gB[i], 2 * wantB[i], 1e-13, 1e-13));
  }
  {  // one statement over 1000 operands (beyond the 252 an expression may have)
    tape_scope<var<double>> scope;
    tensor<var<double>> x(arange(1000));
    var<double> s = mean(x * x);
    backward(s);
    for (std::size_t i = 0; i < 1000; i += 111) CHECK(close(x[i].adjoint(), 2.0 * static_cast<double>(i) / 1000));
  }
  {  // an unused log(0) must not poison a product's gradient (careful sweep through a node)
    tape_scope<var<double>> scope;
    tensor<var<double>> x{0.0, 1.0};
    tensor<var<double>> unused = log(x);
    tensor<var<double>> w(tensor<double>{{1.0, 2.0}, {3.0, 4.0}});
    var<double> s = sum(matmul(w, x));
    backward(s);
    CHECK(x[0].adjoint() == 4.0);
    CHECK(x[1].adjoint() == 6.0);
    CHECK(w(1, 1).adjoint() == 1.0);
    CHECK(std::isinf(unused[0].value()));
  }
}

TEST_CASE("tensor: an operation reached with zero adjoints gives NaN through an infinite partial, as torch") {
  // torch runs every operation the sweep reaches, so sqrt's infinite partial at 0 times the zero
  // gradient that `* 0` passes down is NaN; an operation the sweep does not reach gives nothing
  // (the vectors are LibTorch's, float64)
  auto const nan_first = [](tensor<double> const& g) {
    REQUIRE(g.size() == 3);
    CHECK(std::isnan(g[0]));
    CHECK(g[1] == 0.0);
    CHECK(g[2] == 0.0);
  };
  auto const values_of = [](tensor<double> const& t) { return std::vector<double>(t.data(), t.data() + t.size()); };
  for (bool unrelated_log0 : {false, true}) {  // the answer is the same with or without another infinity
    INFO("an unrelated log(0) recorded: " << unrelated_log0);
    tape_scope<var<double>> scope;
    var<double> const z(0.0);
    var<double> const log_z = unrelated_log0 ? var<double>(log(z)) : z;  // -inf, partial inf
    CHECK(log_z.value() == (unrelated_log0 ? -std::numeric_limits<double>::infinity() : 0.0));
    tensor<var<double>> x{0.0, 1.0, 4.0};
    tensor<var<double>> const s = sqrt(x);  // its own node: partials 1 / (2 sqrt x)
    tensor<var<double>> const zeroed = s * 0.0;
    backward(sum(zeroed));
    nan_first(adjoints(x));
  }
  {  // not reached: sqrt(x) recorded but unused, the gradient of sum(2 x) stays 2
    tape_scope<var<double>> scope;
    tensor<var<double>> x{0.0, 1.0, 4.0};
    tensor<var<double>> const unused = sqrt(x);
    backward(sum(x * 2.0));
    CHECK(values_of(adjoints(x)) == std::vector<double>{2, 2, 2});
    CHECK(unused[2].value() == 2.0);
  }
  {  // a matrix product reached with a zero gradient: dA = 0 B^T is NaN in B's infinite column
    tape_scope<var<double>> scope;
    tensor<var<double>> A(tensor<double>{{1.0, 2.0}, {3.0, 4.0}});
    tensor<var<double>> B(tensor<double>{{std::numeric_limits<double>::infinity(), 1.0}, {1.0, 1.0}});
    tensor<var<double>> const C = matmul(A, B);
    backward(sum(C * 0.0));
    tensor<double> const gA = adjoints(A), gB = adjoints(B);
    CHECK(std::isnan(gA(0, 0)));
    CHECK(std::isnan(gA(1, 0)));
    CHECK(gA(0, 1) == 0.0);
    CHECK(gA(1, 1) == 0.0);
    CHECK(values_of(gB) == std::vector<double>{0, 0, 0, 0});
  }
  {  // nested (the outer tape's adjoints are vars): the gradient, then the gradient of its sum
    tape_scope<var<double>> inner;
    tape_scope<var<var<double>>> outer;
    tensor<var<var<double>>> x{0.0, 1.0, 4.0};
    tensor<var<var<double>>> const s = sqrt(x);
    tensor<var<var<double>>> const zeroed = s * 0.0;
    backward(sum(zeroed));
    tensor<double> g(shape{3});
    var<double> gsum(0.0);
    for (std::size_t i = 0; i < 3; ++i) {
      g[i] = x[i].adjoint().value();
      gsum += x[i].adjoint();
    }
    nan_first(g);
    backward(gsum);
    tensor<double> h(shape{3});
    for (std::size_t i = 0; i < 3; ++i) h[i] = x[i].value().adjoint();
    nan_first(h);  // torch: [nan, -0, -0]
  }
}

TEST_CASE("tensor: one tape entry per operation, blocks of variables, bulk gradient reads") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<double> const a0 = random_normal({50, 20}, 3), c0 = random_normal({20}, 4);
  auto const s0 = tp.stats();
  tensor<var<double>> a(a0), c(c0);  // one block of independent variables (made one after the other)
  auto const s1 = tp.stats();
  CHECK(s1.statements - s0.statements == 1);
  CHECK(s1.indices - s0.indices == 1020);
  CHECK(a[0].index() + 999 == a[999].index());

  // an elementwise expression, a matmul and a reduction are one entry each, whatever their size
  tensor<var<double>> y = exp(a * c) - c;  // c broadcast over the rows
  tensor<var<double>> z = matmul(y, c);    // [50]
  var<double> l = logsumexp(z);
  auto const s2 = tp.stats();
  CHECK(s2.statements - s1.statements == 3);
  CHECK(s2.indices - s1.indices == 1000 + 50 + 1);
  CHECK(s2.nodes - s1.nodes == 3);
  // per element and operand an index and a partial (y: a, c, c), the product's operand values
  // (both blocks: no indices), a partial per logsumexp element (z is a block: one index for
  // its one line)
  CHECK(s2.node_bytes - s1.node_bytes == 1000 * 3 * 12 + 3 + 1020 * 8 + 50 * 8 + 4);

  // gradients: bulk reads (block and scattered) against per-element reads and the hand formula
  backward(l);
  tensor<double> const ga = adjoints(a), gc = adjoints(c);
  tensor<double> const y0 = exp(a0 * c0) - c0, z0 = matmul(y0, c0);
  double const lse0 = logsumexp(z0);
  std::vector<double> gc_want(20, 0.0);
  for (std::size_t i = 0; i < 50; ++i) {
    double const w = std::exp(z0[i] - lse0);  // dl/dz_i
    for (std::size_t j = 0; j < 20; ++j) {
      double const e = std::exp(a0(i, j) * c0[j]);
      double const dy = w * c0[j];  // dl/dy_ij
      CHECK(close(ga(i, j), dy * e * c0[j], 1e-12, 1e-12));
      CHECK(ga(i, j) == a(i, j).adjoint());
      gc_want[j] += dy * (e * a0(i, j) - 1) + w * y0(i, j);
    }
  }
  for (std::size_t j = 0; j < 20; ++j) CHECK(close(gc[j], gc_want[j], 1e-11, 1e-11));
  tensor<double> const gt = adjoints(tensor<var<double>>(a.transpose()));  // not a block: element by element
  CHECK(gt(3, 7) == ga(7, 3));
  std::vector<double> buf(1000);
  adjoints(a, std::span<double>(buf));
  CHECK(buf[517] == ga[517]);
  std::vector<double> small(3);
  CHECK_THROWS_AS(adjoints(a, std::span<double>(small)), shape_error);

  // writing an element forgets the block: the new element's gradient is read, not the block's
  tensor<var<double>> b = a;
  b(0, 0) = var<double>(5.0);
  var<double> m = sum(b * b);
  backward(m);
  CHECK(adjoints(b)[0] == 10.0);
  CHECK(adjoints(b)[1] == 2 * a0[1]);
  CHECK(a[0].adjoint() == 0.0);

  // an expression whose var operands are all constants records nothing and gives constants
  auto const s3 = tp.stats();
  tensor<var<double>> k(shape{2}, var<double>::constant(1.0));
  tensor<var<double>> kk = k * 2.0 + sin(k);
  CHECK(tp.stats().statements == s3.statements);
  CHECK(kk[1].index() == 0);
  CHECK(close(kk[1].value(), 2.0 + std::sin(1.0)));
  // an operand from an ended recording: an error, and the tape keeps no half-made node
  tensor<var<double>> stale;
  {
    tape_scope<var<double>> inner;
    stale = tensor<var<double>>(c0);
  }
  auto const s4 = tp.stats();
  CHECK_THROWS_AS(tensor<var<double>>(a * stale), stale_variable_error);
  CHECK(tp.stats().statements == s4.statements);
  CHECK(tp.stats().indices == s4.indices);
  var<double> again = sum(a * c);  // the tape goes on normally
  backward(again);
  CHECK(close(adjoints(c)[0], sum(a0, 0)[0], 1e-12, 1e-12));
}

TEST_CASE("tensor: variables made from numbers and products' outputs are kept as values beside their block") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<double> a0 = random_normal({4, 3}, 5);
  double const* const a0_buffer = std::as_const(a0).data();
  tensor<var<double>> const a(a0);

  // no element is made until one is asked for; the values are a0's buffer, shared
  tensor<double> const av = a.values();
  CHECK(av.data() == a0_buffer);
  detail::var_block const b = detail::tensor_access::block(a);
  CHECK(b.first != 0);
  CHECK(b.epoch == tp.epoch());
  // every element is variable first + i of this recording, holding a0's value
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].index() == b.first + static_cast<index_type>(i));
    CHECK(a[i].epoch() == b.epoch);
    CHECK(a[i].value() == a0[i]);
  }
  tensor<var<double>> const copy = a;
  CHECK(copy.data() == a.data());  // the elements are made once, for every copy

  // copy-on-write both ways: writing a0 does not change a, writing a's values does not change a0
  a0.data()[0] = 100.0;
  CHECK(a(0, 0).value() != 100.0);
  CHECK(a.values()[0] != 100.0);
  double const a0_1 = a0[1];
  tensor<double> v = a.values();
  v.data()[1] = -7.0;
  CHECK(a0[1] == a0_1);
  CHECK(a[1].value() == a0_1);

  // a product's operand kept as values feeds the GEMM directly; its output is kept as values too
  tensor<double> const w0 = random_normal({3, 2}, 6);
  tensor<var<double>> const w(w0);
  tensor<var<double>> const c = matmul(a, w);
  detail::var_block const cb = detail::tensor_access::block(c);
  CHECK(cb.first != 0);
  CHECK(c(1, 1).index() == cb.first + 3);
  tensor<double> const c0 = matmul(a.values(), w0);
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(c[i].value() == c0[i]);
  var<double> l = sum(c * c);
  backward(l);
  tensor<double> const ga = adjoints(a), gw = adjoints(w);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < 2; ++k) want += 2 * c0(i, k) * w0(j, k);
      CHECK(close(ga(i, j), want, 1e-13, 1e-13));
      CHECK(ga(i, j) == a(i, j).adjoint());
    }
  CHECK(close(
      gw(2, 1),
      2 * (a[2].value() * c0(0, 1) + a[5].value() * c0(1, 1) + a[8].value() * c0(2, 1) + a[11].value() * c0(3, 1)),
      1e-13, 1e-13));

  // writing an element (or any non-const element access) gives the tensor its own elements;
  // the copies keep the block
  tensor<var<double>> d = c;
  d(0, 0) = var<double>(2.0);
  CHECK(detail::tensor_access::block(d).first == 0);
  CHECK(detail::tensor_access::block(c).first == cb.first);
  CHECK(c(0, 0).value() == c0[0]);
  CHECK(d(0, 1).index() == cb.first + 1);
  var<double> m = sum(matmul(a, w) * d);
  backward(m);
  // d (0, 1), (1, 1), ... are c's elements: w reaches m through both factors
  CHECK(
      close(adjoints(w)(0, 1),
            2 * (a[0].value() * c0(0, 1) + a[3].value() * c0(1, 1) + a[6].value() * c0(2, 1) + a[9].value() * c0(3, 1)),
            1e-13, 1e-13));

  // an elementwise node's outputs are kept as values too; an expression reads such operands
  // (e) beside ones with elements of their own (a_elements: a's variables) and gets every
  // partial right
  tensor<var<double>> const e = exp(a) * 2.0;
  detail::var_block const eb = detail::tensor_access::block(e);
  CHECK(eb.first != 0);
  CHECK(e[7].index() == eb.first + 7);
  CHECK(e[7].value() == std::exp(a0[7]) * 2.0);
  tensor<var<double>> a_elements = a;
  a_elements.data();
  CHECK(detail::tensor_access::block(a_elements).first == 0);
  var<double> r = sum(matmul(e * a_elements, w));
  backward(r);
  for (std::size_t i : {0, 5, 11}) {
    double const rowsum = w0(i % 3, 0) + w0(i % 3, 1);
    CHECK(close(adjoints(a)[i], rowsum * (e[i].value() + e[i].value() * a[i].value()), 1e-13, 1e-13));
  }
  // slices: a contiguous range of a kept tensor is a kept sub-block, a strided one is made of
  // the picked variables
  tensor<var<double>> const rows = e.slice(0, 1, 3), col = e.slice(1, 2, 3);
  CHECK(detail::tensor_access::block(rows).first == eb.first + 3);
  CHECK(rows(1, 2).value() == e(2, 2).value());
  CHECK(rows(1, 2).index() == e(2, 2).index());
  CHECK(detail::tensor_access::block(col).first == 0);
  CHECK(col(3, 0).index() == e(3, 2).index());
  CHECK(col(3, 0).value() == e(3, 2).value());
  var<double> t = sum(rows * rows) + sum(col);
  backward(t);
  CHECK(close(adjoints(e)(2, 2), 2 * e(2, 2).value() + 1, 1e-13, 1e-13));
  CHECK(adjoints(e)(0, 1) == 0.0);
  CHECK(adjoints(e)(0, 2) == 1.0);

  // an operand kept as values from an ended recording is refused
  tensor<var<double>> stale;
  {
    tape_scope<var<double>> inner;
    stale = tensor<var<double>>(w0);
  }
  CHECK_THROWS_AS((void)matmul(a, stale), stale_variable_error);
  CHECK_THROWS_AS((void)sum(stale), stale_variable_error);

  // a parameter after assign(): gradients through a product are right
  parameter<double> p(w0, "p");
  p.assign(w0 * 2.0);
  var<double> q = sum(matmul(a, p));
  backward(q);
  CHECK(close(adjoints(a)(1, 2), 2 * (w0(2, 0) + w0(2, 1)), 1e-13, 1e-13));
  CHECK(p(2, 1).value() == 2 * w0(2, 1));

  // nested: a tensor<var<var<double>>> made from one kept as values, d^2/da^2 of sum(a * a * a)
  {
    tape_scope<var<var<double>>> outer;
    tensor<var<double>> inner_vars(a0);
    tensor<var<var<double>>> x(inner_vars);
    var<var<double>> y = sum(x * x * x);
    backward(y);
    var<double> g = x[4].adjoint();  // 3 a4^2
    CHECK(close(g.value(), 3 * a0[4] * a0[4], 1e-13, 1e-13));
    backward(g);
    CHECK(close(inner_vars[4].adjoint(), 6 * a0[4], 1e-13, 1e-13));
    CHECK(inner_vars[3].adjoint() == 0.0);
  }
}

TEST_CASE("tensor: elements of an outer recording in products and reductions, a stale one among them throws") {
  tensor<double> const w0 = random_normal({3, 2}, 7), x0 = random_normal({2, 3}, 8), c = random_normal({2, 2}, 9);
  tape_scope<var<double>> outer;
  tensor<var<double>> w(w0);
  (void)w.data();  // a write access gives it elements of its own, on the outer recording
  REQUIRE(detail::tensor_access::block(w).first == 0);
  var<double> gone;
  {
    tape_scope<var<double>> ended;
    gone = var<double>(1.0);
  }
  for (int rep = 0; rep < 2; ++rep) {  // the outer recording is checked in each inner one
    INFO("rep " << rep);
    tensor<double> gw, gb;
    {
      tape_scope<var<double>> inner;
      tensor<var<double>> x(x0);
      var<double> l = sum(matmul(x, w) * c) + sum(logsumexp(w, 0));
      backward(l);
      gw = adjoints(w);
    }
    {  // the same program on a block made inside the scope
      tape_scope<var<double>> inner;
      tensor<var<double>> x(x0), b(w0);
      var<double> l = sum(matmul(x, b) * c) + sum(logsumexp(b, 0));
      backward(l);
      gb = adjoints(b);
    }
    for (std::size_t i = 0; i < w0.size(); ++i) CHECK(gw[i] == gb[i]);
    // elements of the inner recording, the outer one and an ended one, in that order
    tape_scope<var<double>> inner;
    tensor<var<double>> mixed(w0.shape());
    for (std::size_t i = 0; i < w0.size(); ++i) mixed[i] = i < 2 ? var<double>(w0[i]) : w[i];
    mixed[5] = gone;
    tensor<var<double>> const x(x0);
    CHECK_THROWS_AS((void)matmul(x, mixed), stale_variable_error);
    CHECK_THROWS_AS((void)logsumexp(mixed, 0), stale_variable_error);
    CHECK_THROWS_AS((void)tensor<var<double>>(exp(mixed)), stale_variable_error);
    CHECK_THROWS_AS((void)concat({mixed, mixed}), stale_variable_error);
    mixed[5] = w[5];
    CHECK_NOTHROW((void)matmul(x, mixed));
    CHECK_NOTHROW((void)logsumexp(mixed, 0));
    CHECK_NOTHROW((void)tensor<var<double>>(exp(mixed)));
    CHECK_NOTHROW((void)concat({mixed, mixed}));
  }
}

TEST_CASE("parameter: one block of variables, rebound in place by assign and refresh for every alias") {
  tensor<double> const w0{{1.0, 2.0}, {3.0, -1.0}}, x0{{0.5, -2.0}, {1.5, 4.0}};
  tape_scope<var<double>> outer;
  parameter<double> p(w0, "p");
  parameter<double> const alias = p;
  tensor<var<double>> const plain = p;  // a plain copy follows the leaf too
  detail::var_block const b0 = detail::tensor_access::block(p);
  REQUIRE(b0.first != 0);                                 // kept as values: products and expressions read no element
  var<double> const* elements = std::as_const(p).data();  // made once, rewritten in place
  CHECK(elements[3].index() == b0.first + 3);
  CHECK(detail::tensor_access::block(p).first == b0.first);  // reading does not unkeep it

  // a graph recorded before assign() keeps the values it was recorded with; value() taken
  // before keeps them too
  tensor<var<double>> x(x0);
  var<double> l = sum(matmul(x, p) * matmul(x, p));
  tensor<double> const before = p.value();
  p.assign(w0 * 3.0);
  tensor<double> const vp = p.value(), va = alias.value(), vl = plain.values();
  for (auto const* t : {&vp, &va, &vl})
    for (std::size_t i = 0; i < 4; ++i) CHECK((*t)[i] == 3.0 * w0[i]);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(before[i] == w0[i]);
    CHECK(elements[i].value() == 3.0 * w0[i]);
    CHECK(elements[i].index() == b0.first + static_cast<index_type>(i));
  }
  CHECK(detail::tensor_access::block(alias).first == b0.first);  // same variables
  backward(l);
  // d/dx sum((x W)^2) = 2 (x W) W^T with the recorded W = w0
  tensor<double> const xw = matmul(x0, w0), expect = matmul(2.0 * xw, w0.transpose());
  tensor<double> const gx = adjoints(x), gp = adjoints(p), ga = adjoints(alias);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(close(gx[i], expect[i], 1e-14, 1e-14));
    CHECK(gp[i] == ga[i]);
  }
  CHECK(close(gp(1, 0), 2 * (x0(0, 1) * xw(0, 0) + x0(1, 1) * xw(1, 0)), 1e-14, 1e-14));

  // slices are copies (the variables as they were), contiguous or not
  tensor<var<double>> const row = p.slice(0, 1, 2), col = p.slice(1, 0, 1);
  p.assign(w0 * 5.0);
  CHECK(row[0].value() == 3.0 * w0(1, 0));
  CHECK(col[1].value() == 3.0 * w0(1, 0));
  CHECK(row[0].index() == b0.first + 2);
  CHECK(p(1, 0).value() == 5.0 * w0(1, 0));
  {  // a parameter with elements of its own (a write through the tensor it is gave it them):
     // assign() writes them in place, and its contiguous slices are still copies
    parameter<double> r(w0, "r");
    tensor<var<double>>& as_tensor = r;
    as_tensor(0, 0) = as_tensor(0, 0);
    REQUIRE(detail::tensor_access::kept_values(r) == nullptr);
    tensor<var<double>> const r_row = r.slice(0, 1, 2);
    r.assign(w0 * 7.0);
    CHECK(r_row[0].value() == w0(1, 0));
    CHECK(r(1, 0).value() == 7.0 * w0(1, 0));
  }

  // made in a recording that has ended: refresh() gives every alias one new block
  std::optional<parameter<double>> q;
  std::optional<parameter<double>> q_alias;
  {
    tape_scope<var<double>> inner;
    q.emplace(w0, "q");
    q_alias.emplace(*q);
    (void)std::as_const(*q).data();
  }
  CHECK_FALSE(q->live());
  CHECK_THROWS_AS((void)sum(*q), stale_variable_error);
  q->refresh();
  CHECK(q->live());
  CHECK(q_alias->live());
  detail::var_block const bq = detail::tensor_access::block(*q_alias);
  CHECK(bq.first == detail::tensor_access::block(*q).first);
  CHECK((*q)[2].index() == bq.first + 2);
  CHECK((*q)[2].value() == w0[2]);
  var<double> m = sum(*q * *q_alias);
  backward(m);
  for (std::size_t i = 0; i < 4; ++i) CHECK(adjoints(*q)[i] == 2.0 * w0[i]);

  // lifted one level up (tensor<var<var<double>>>), a parameter's values are copied: a product
  // recorded on the lifted tensor keeps them through a later assign()
  {
    tape_scope<var<var<double>>> second;
    parameter<double> w(w0, "w");
    tensor<var<var<double>>> const lifted(w);
    tensor<var<var<double>>> z(tensor<var<double>>(tensor<double>{{1.0, 1.0}}));
    var<var<double>> s = sum(matmul(z, lifted));
    w.assign(w0 * 3.0);
    CHECK(lifted(1, 1).value().value() == w0(1, 1));
    backward(s);
    tensor<var<double>> const gz = adjoints(z);  // row sums of the recorded w0
    CHECK(gz[0].value() == w0(0, 0) + w0(0, 1));
    CHECK(gz[1].value() == w0(1, 0) + w0(1, 1));
  }

  // autograd::backward reads a block parameter's gradient without its elements
  parameter<double> r(x0, "r");
  autograd::backward(sum(r * r * 0.5));
  REQUIRE(r.grad().has_value());
  for (std::size_t i = 0; i < 4; ++i) CHECK((*r.grad())[i] == x0[i]);
  CHECK(detail::tensor_access::block(r).first != 0);
}

TEST_CASE("tensor: sum and mean of an expression are one node, exactly eval then reduce") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<double> const a0 = random_normal({30, 4}, 21), c0 = random_normal({4}, 22), r0 = random_normal({30, 1}, 23);
  tensor<var<double>> a(a0), c(c0), r(r0);
  tensor<var<double>> g = a.transpose().transpose();  // a's variables, copied element by element: a general operand
  g(0, 0) = a(1, 1);
  // block (a), broadcast (c, one element per column), general (g); r [30, 1] with c [4]: not flat
  auto const check = [&](auto reduce, char const* what) {
    INFO(what);
    auto const s1 = tp.stats();
    var<double> fused = reduce(a * sin(c) + g / r + r * c);
    auto const s2 = tp.stats();
    CHECK(s2.statements - s1.statements == 1);
    CHECK(s2.indices - s1.indices == 1);
    CHECK(s2.nodes - s1.nodes == 1);
    CHECK(s2.node_bytes - s1.node_bytes == 120 * 6 * 12 + 6);  // a, c, g, r, r, c per element
    var<double> unfused = reduce(tensor<var<double>>(a * sin(c) + g / r + r * c));
    CHECK(fused.value() == unfused.value());
    backward(fused);
    tensor<double> const ga = adjoints(a), gc = adjoints(c), gr = adjoints(r), gg = adjoints(g);
    backward(unfused);
    CHECK(same_elements(ga, adjoints(a)));
    CHECK(same_elements(gc, adjoints(c)));
    CHECK(same_elements(gr, adjoints(r)));
    CHECK(same_elements(gg, adjoints(g)));
    return ga;
  };
  tensor<double> const gs = check([](auto const& e) { return sum(e); }, "sum");
  tensor<double> const gm = check([](auto const& e) { return mean(e); }, "mean");
  // g's elements are a's variables: a(2, 3) is read through a and through g
  CHECK(close(gs(2, 3), std::sin(c0[3]) + 1 / r0[2], 1e-15, 0));
  CHECK(close(gm(2, 3), (std::sin(c0[3]) + 1 / r0[2]) / 120, 1e-15, 0));

  // forward mode and plain numbers: no intermediate tensor, the same values
  tensor<dual<double>> d(a0.shape());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = dual<double>(a0[i], 1.0);
  dual<double> const sd = mean(d * d);
  CHECK(sd.value() == mean(tensor<double>(a0 * a0)));
  CHECK(close(sd.tangent(), 2 * mean(a0), 1e-14, 1e-14));
  CHECK(sum(a0 * 2.0) == sum(tensor<double>(a0 * 2.0)));

  // constants only, or under no_grad: nothing recorded, a constant
  auto const s3 = tp.stats();
  tensor<var<double>> k(shape{3}, var<double>::constant(2.0));
  var<double> const kc = sum(k * k);
  CHECK(kc.index() == 0);
  CHECK(kc.value() == 12.0);
  {
    no_grad off;
    var<double> const ng = mean(a * a);
    CHECK(ng.index() == 0);
    CHECK(ng.value() == mean(a0 * a0));
  }
  CHECK(tp.stats().statements == s3.statements);
  CHECK(tp.stats().nodes == s3.nodes);
  // an operand from an ended recording: an error, and no half-made node
  tensor<var<double>> stale;
  {
    tape_scope<var<double>> inner;
    stale = tensor<var<double>>(c0);
  }
  CHECK_THROWS_AS((void)sum(a * stale), stale_variable_error);
  CHECK(tp.stats().statements == s3.statements);
  CHECK(tp.stats().indices == s3.indices);

  // second order through the fused node: d2/dx2 sum(x^3) = 6 x
  tape_scope<var<var<double>>> nested;
  tensor<var<var<double>>> x(c0);
  var<var<double>> y = sum(x * x * x);
  backward(y);
  for (std::size_t i = 0; i < 4; ++i) {
    var<double> gi = x[i].adjoint();
    CHECK(close(primal(gi), 3 * c0[i] * c0[i], 1e-14, 1e-14));
    backward(gi);
    CHECK(close(x[i].value().adjoint(), 6 * c0[i], 1e-14, 1e-14));
  }
}

TEST_CASE("tensor: a reduced expression sums its scalar operands' partials while recording") {
  tape_scope<var<double>> scope;
  auto& tp = tape<double>::current();
  tensor<double> const y0 = random_normal({50, 3}, 41), w0 = random_normal({3}, 42);
  double const m0 = 0.3, s0 = 1.7;
  tensor<var<double>> w(w0);
  var<double> m(m0), s(s0);
  // every element reads m and s (in z) and m * s (a scalar statement first): three summed
  // positions, one index and one sum each; w, one element per column (a cyclic operand: its
  // indices are w's first + i % 3), has a partial per element and no indices; y is a constant
  // tensor
  auto const program = [&](auto const& y, auto const& mu, auto const& sigma, auto const& wt) {
    return sum(square((y - mu) / sigma) * wt + mu * sigma);
  };
  auto const s1 = tp.stats();
  var<double> f = program(y0, m, s, w);
  auto const s2 = tp.stats();
  CHECK(s2.nodes - s1.nodes == 1);
  CHECK(s2.statements - s1.statements == 2);  // m * s, and the node
  // w: partials per element, a kind, a first index and a period; m, s, m * s summed
  CHECK(s2.node_bytes - s1.node_bytes == 150 * 8 + 1 + (sizeof(index_type) + sizeof(std::size_t)) + 3 * 12);
  backward(f);
  double const gm = m.adjoint(), gs = s.adjoint();
  tensor<double> const gw = adjoints(w);

  // the same sums by hand
  double hm = 0, hs = 0, hf = 0;
  std::vector<double> hw(3, 0.0);
  for (std::size_t i = 0; i < 50; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      double const z = (y0(i, j) - m0) / s0;
      hf += z * z * w0[j] + m0 * s0;
      hm += -2 * z / s0 * w0[j] + s0;
      hs += -2 * z * z / s0 * w0[j] + m0;
      hw[j] += z * z;
    }
  CHECK(close(f.value(), hf, 1e-13, 1e-13));
  CHECK(close(gm, hm, 1e-12, 1e-12));
  CHECK(close(gs, hs, 1e-12, 1e-12));
  for (std::size_t j = 0; j < 3; ++j) CHECK(close(gw[j], hw[j], 1e-12, 1e-12));

  // eval then reduce (partials kept per element) agrees; mean is the sum over the count
  var<double> unfused = sum(tensor<var<double>>((square((y0 - m) / s) * w + m * s)));
  CHECK(close(unfused.value(), f.value(), 1e-14, 0));
  backward(unfused);
  CHECK(close(m.adjoint(), gm, 1e-13, 1e-13));
  CHECK(close(s.adjoint(), gs, 1e-13, 1e-13));
  var<double> fm = mean(square((y0 - m) / s) * w + m * s);
  backward(fm);
  CHECK(close(m.adjoint(), gm / 150, 1e-13, 1e-13));
  CHECK(close(adjoints(w)[1], gw[1] / 150, 1e-13, 1e-13));

  // a scalar operand only, a size-1 tensor operand (kept per element), a constant scalar
  var<double> f2 = sum(y0 * m + tensor<var<double>>(shape{1}, s) * y0 + var<double>::constant(2.0) * y0);
  backward(f2);
  CHECK(close(m.adjoint(), sum(y0), 1e-12, 1e-12));
  CHECK(close(s.adjoint(), sum(y0), 1e-12, 1e-12));
  auto const s3 = tp.stats();
  var<double> const k = sum(y0 * var<double>::constant(2.0));  // nothing active: a constant
  CHECK(k.index() == 0);
  CHECK(close(k.value(), 2 * sum(y0), 1e-12, 1e-12));
  CHECK(tp.stats().nodes == s3.nodes);

  // a scalar operand from an ended recording: an error, and no half-made node
  var<double> stale;
  {
    tape_scope<var<double>> inner;
    stale = var<double>(1.0);
  }
  CHECK_THROWS_AS((void)sum(y0 * stale), stale_variable_error);
  CHECK(tp.stats().statements == s3.statements);
  CHECK(tp.stats().nodes == s3.nodes);

  // an infinite partial through a summed operand, and a summed node the output does not reach
  {
    tensor<double> const yp = abs(y0) + 0.5;
    var<double> z(0.0), m2(1.0);
    var<double> const dead = sum(yp * sqrt(z));  // d/dz = sum(yp) * inf
    var<double> g = sum(yp * m2);
    backward(g);
    CHECK(z.adjoint() == 0.0);  // not NaN: the dead node is not run
    CHECK(close(m2.adjoint(), sum(yp), 1e-12, 1e-12));
    backward(dead);
    CHECK(std::isinf(z.adjoint()));
    CHECK(z.adjoint() > 0);
  }

  // over var<var<double>> the partials stay per element (a sum would record on the inner
  // tape): second derivatives through them, d2/dm2 sum(w (y - m)^2) = 2 sum(w)
  tape_scope<var<var<double>>> nested;
  var<var<double>> mm(m0);
  tensor<var<var<double>>> ww(w0);
  var<var<double>> g = sum(square(y0 - mm) * ww);
  backward(g);
  var<double> dm = mm.adjoint();
  double want = 0;
  for (std::size_t i = 0; i < 50; ++i)
    for (std::size_t j = 0; j < 3; ++j) want += -2 * (y0(i, j) - m0) * w0[j];
  CHECK(close(primal(dm), want, 1e-12, 1e-12));
  backward(dm);
  CHECK(close(mm.value().adjoint(), 2 * 50 * sum(w0), 1e-12, 1e-12));
}

TEST_CASE("tensor over var<var<double>>: constant operands make no node, stale ones throw (elementwise, fused sum)") {
  using VV = var<var<double>>;
  tensor<double> const c0{0.5, -1.5, 2.0};
  tape_scope<VV> scope;
  auto& outer = tape<var<double>>::current();
  // constants at both levels: no node on the outer tape, constant results with the right values
  tensor<VV> const k(shape{3}, VV::constant(var<double>::constant(1.0)));
  auto const s0 = outer.stats();
  tensor<VV> const kk = k * 2.0 + sin(k);
  VV const ks = sum(k * k);
  CHECK(outer.stats().statements == s0.statements);
  CHECK(outer.stats().nodes == s0.nodes);
  CHECK(kk[1].index() == 0);
  CHECK(close(primal(kk[1]), 2.0 + std::sin(1.0), 1e-15, 0));
  CHECK(ks.index() == 0);
  CHECK(primal(ks) == 3.0);
  // an operand from an ended recording: an error, and the outer tape keeps no half-made node
  tensor<VV> stale;
  {
    tape_scope<VV> inner;
    stale = tensor<VV>(c0);
  }
  tensor<VV> const a(c0);
  auto const s1 = outer.stats();
  CHECK_THROWS_AS(tensor<VV>(a * stale), stale_variable_error);
  CHECK_THROWS_AS((void)sum(a * stale), stale_variable_error);
  CHECK(outer.stats().statements == s1.statements);
  CHECK(outer.stats().nodes == s1.nodes);
  // and the tapes go on: the gradient of sum(a^2) is 2 a, its derivative 2
  VV const y = sum(a * a);
  backward(y);
  for (std::size_t i = 0; i < 3; ++i) {
    var<double> gi = a[i].adjoint();
    CHECK(close(primal(gi), 2 * c0[i], 1e-15, 0));
    backward(gi);
    CHECK(a[i].value().adjoint() == 2.0);
  }
}

TEST_CASE("tensor: matrix-vector products of var and float elements (GEMV), where with an AD mask, slices") {
  tensor<double> const M0 = random_normal({5, 7}, 51), v0 = random_normal({7}, 52), u0 = random_normal({5}, 53);
  {  // f = u^T M v + 0.5 sum(u^T M): a column product and a row product, forward and backward
    tape_scope<var<double>> scope;
    tensor<var<double>> M(M0), v(v0), u(u0);
    var<double> f = dot(u, matmul(M, v)) + 0.5 * sum(matmul(u, M));
    backward(f);
    tensor<double> const gM = adjoints(M), gv = adjoints(v), gu = adjoints(u);
    double want_f = 0;
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 7; ++j) {
        want_f += u0[i] * M0(i, j) * (v0[j] + 0.5);
        CHECK(close(gM(i, j), u0[i] * (v0[j] + 0.5), 1e-13, 1e-13));
      }
    CHECK(close(f.value(), want_f, 1e-13, 1e-13));
    for (std::size_t j = 0; j < 7; ++j) {
      double w = 0;
      for (std::size_t i = 0; i < 5; ++i) w += u0[i] * M0(i, j);
      CHECK(close(gv[j], w, 1e-13, 1e-13));
    }
    for (std::size_t i = 0; i < 5; ++i) {
      double w = 0;
      for (std::size_t j = 0; j < 7; ++j) w += M0(i, j) * (v0[j] + 0.5);
      CHECK(close(gu[i], w, 1e-13, 1e-13));
    }
  }
  {  // float: SGEMV against a loop in double
    tensor<float> Mf(shape{5, 7}), vf(shape{7});
    for (std::size_t i = 0; i < 35; ++i) Mf[i] = static_cast<float>(M0[i]);
    for (std::size_t j = 0; j < 7; ++j) vf[j] = static_cast<float>(v0[j]);
    tensor<float> const y = matmul(Mf, vf);
    for (std::size_t i = 0; i < 5; ++i) {
      double w = 0;
      for (std::size_t j = 0; j < 7; ++j) w += static_cast<double>(Mf(i, j)) * static_cast<double>(vf[j]);
      CHECK(close(static_cast<double>(y[i]), w, 1e-5, 1e-5));
    }
  }
  {  // where with a mask of var elements: the mask gets no gradient, a and b what they select
    tape_scope<var<double>> scope;
    tensor<var<double>> c(u0), a(u0), b(u0);
    var<double> f = sum(where(c, 2.0 * a, 3.0 * b));  // c is nonzero everywhere: a is taken
    backward(f);
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(c[i].adjoint() == 0.0);
      CHECK(a[i].adjoint() == 2.0);
      CHECK(b[i].adjoint() == 0.0);
    }
    tensor<var<double>> const mask = tensor<var<double>>(tensor<double>{0.0, 1.0});
    tensor<var<double>> p(tensor<double>{1.0, 1.0}), q(tensor<double>{1.0, 1.0});
    var<double> g = sum(where(mask, p, 5.0 * q));
    backward(g);
    CHECK(mask[0].adjoint() == 0.0);
    CHECK(mask[1].adjoint() == 0.0);
    CHECK(p[0].adjoint() == 0.0);
    CHECK(p[1].adjoint() == 1.0);
    CHECK(q[0].adjoint() == 5.0);
    CHECK(q[1].adjoint() == 0.0);
  }
  {  // slices: a middle axis with a step (runs of `inner` elements), empty slices
    tensor<double> const t = arange<double>(0, 60).reshape({3, 4, 5});
    tensor<double> const s = t.slice(1, 1, 4, 2);  // rows 1 and 3 of axis 1
    REQUIRE(s.shape() == shape{3, 2, 5});
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 2; ++j)
        for (std::size_t k = 0; k < 5; ++k) CHECK(s(i, j, k) == t(i, 1 + 2 * j, k));
    CHECK(t.slice(2, 3, 3).shape() == shape{3, 4, 0});
    CHECK(tensor<double>(shape{0, 5}).slice(1, 3, 5).shape() == shape{0, 2});
    tensor<double> const last = t.slice(-1, -2, 5, 3);  // column 3 only
    REQUIRE(last.shape() == shape{3, 4, 1});
    for (std::size_t i = 0; i < 12; ++i) CHECK(last[i] == t[i * 5 + 3]);
  }
  CHECK(square(50000) == 2.5e9);  // computed in double: no int overflow
}

TEST_CASE("tensor: log_softmax of var elements is one node, equal to x - logsumexp(x)") {
  tensor<double> const x0 = random_normal({3, 4, 5}, 31), w = random_normal({3, 4, 5}, 32);
  for (long axis : {0L, 1L, 2L, -1L}) {
    INFO("axis " << axis);
    tape_scope<var<double>> scope;
    auto& tp = tape<double>::current();
    tensor<var<double>> x(x0);
    x(1, 2, 3) = var<double>::constant(0.25);  // a constant element: no gradient, the others unchanged
    auto const s1 = tp.stats();
    tensor<var<double>> y = log_softmax(x, axis);
    CHECK(tp.stats().nodes - s1.nodes == 1);
    CHECK(tp.stats().statements - s1.statements == 1);
    tensor<var<double>> z = x - logsumexp(x, axis, true);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i].value() == z[i].value());
    var<double> ly = sum(y * w), lz = sum(z * w);
    backward(ly);
    tensor<double> const gy = adjoints(x);
    backward(lz);
    tensor<double> const gz = adjoints(x);
    for (std::size_t i = 0; i < gy.size(); ++i) CHECK(close(gy[i], gz[i], 1e-14, 1e-14));
    CHECK(gy(1, 2, 3) == 0.0);
  }
  // second order (the node's backward recorded on the inner tape) against forward-over-forward
  tensor<double> const v0{0.3, -1.2, 0.8, 2.0};
  tensor<double> const c{0.5, -1.0, 2.0, 0.25};
  auto f = [&](auto const& t) { return sum(log_softmax(t) * c); };
  auto const H = hessian_of(f, v0);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) CHECK(close(hessian_entry_ff(f, v0, i, j), H[i * 4 + j], 1e-13, 1e-13));
}

TEST_CASE("tensor: forward and nested element types") {
  // a Hessian-vector product through tensor code, var<dual<double>>
  tensor<double> const x0{0.3, -0.7, 1.1};
  tensor<double> const v{1.0, -2.0, 0.5};
  auto f = [](auto const& x) { return logsumexp(x * x) + prod(x); };
  auto const H = hessian_of(f, x0);
  tape_scope<var<dual<double>>> scope;
  tensor<var<dual<double>>> x(x0.shape());
  for (std::size_t i = 0; i < 3; ++i) x[i] = var<dual<double>>(dual<double>(x0[i], v[i]));
  var<dual<double>> y = f(x);
  backward(y);
  for (std::size_t i = 0; i < 3; ++i) {
    double hv = 0;
    for (std::size_t j = 0; j < 3; ++j) hv += H[i * 3 + j] * v[j];
    CHECK(close(x[i].adjoint().tangent(), hv, 1e-12, 1e-12));
  }
  // a nested matmul (var<var<double>>) against the same Hessian by forward-over-forward
  tensor<double> const W = random_normal({2, 3}, 5);
  auto g = [&](auto const& t) { return sum(tanh(matmul(W, t))); };
  auto const Hg = hessian_of(g, x0);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(close(hessian_entry_ff(g, x0, i, j), Hg[i * 3 + j], 1e-12, 1e-12));
}
