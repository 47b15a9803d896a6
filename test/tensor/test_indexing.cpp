// tensor/indexing.hpp and tensor/scans.hpp against PyTorch 1.13 (test/reference/indexing.json,
// gen_indexing.py): each operation's values and the indices it returns, and for
// L = sum(w * op(x)) the gradient in reverse mode, the directional derivative in forward mode
// and the Hessian-vector product forward over reverse; then the nested var<var<double>>, the
// rules of the edges (NaN, ties, empty), and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
using adx_test::primals;
using adx_test::tensor_of;

namespace {

nlohmann::json const& cases() {
  static nlohmann::json const j = adx_test::read_reference("indexing.json");
  return j;
}

template <class I>
tensor<long> index_tensor(nlohmann::json const& rows) {
  if (!rows.is_array() || rows.empty() || !rows[0].is_array()) {
    std::vector<long> v = rows.get<std::vector<long>>();
    return tensor<long>(shape{v.size()}, v);
  }
  std::vector<long> v;
  for (auto const& r : rows)
    for (auto const& e : r) v.push_back(e.get<long>());
  return tensor<long>(shape{rows.size(), rows[0].size()}, v);
}

tensor<bool> mask_tensor(nlohmann::json const& rows) {
  tensor<bool> m(shape{rows.size(), rows[0].size()});
  std::size_t k = 0;
  for (auto const& r : rows)
    for (auto const& e : r) m.data()[k++] = e.get<bool>();
  return m;
}

/// The case's operation on x, for any element type.
template <class S>
tensor<S> apply(nlohmann::json const& c, tensor<S> const& x) {
  std::string const op = c["op"];
  if (op == "take") return take(x, index_tensor<long>(c["indices"]));
  if (op == "index_select") return index_select(x, c["axis"].get<long>(), c["indices"].get<std::vector<long>>());
  if (op == "gather") return gather(x, c["axis"].get<long>(), index_tensor<long>(c["index"]));
  if (op == "scatter_add")  // the source is (x * x)[:, :2], so that what it adds is not linear in x
    return scatter_add(x, c["axis"].get<long>(), index_tensor<long>(c["index"]), tensor<S>(eval(x * x)).slice(1, 0, 2));
  if (op == "masked_fill") return masked_fill(x, mask_tensor(c["mask"]), c["value"].get<double>());
  if (op == "pad") {
    std::string const mode = c["mode"];
    pad_mode const m = mode == "constant"  ? pad_mode::constant
                       : mode == "reflect" ? pad_mode::reflect
                                           : pad_mode::replicate;
    return pad(x, c["pads"].get<std::vector<long>>(), m, c.contains("value") ? c["value"].get<double>() : 0.0);
  }
  if (op == "sort") return sort(x, c["axis"].get<long>(), c["descending"].get<bool>()).first;
  if (op == "topk") return topk(x, c["k"].get<std::size_t>(), c["axis"].get<long>(), c["largest"].get<bool>()).first;
  if (op == "cumsum") return cumsum(x, c["axis"].get<long>());
  if (op == "cumprod") return cumprod(x, c["axis"].get<long>());
  if (op == "diff") return diff(x, c["n"].get<long>(), c["axis"].get<long>());
  REQUIRE(op == "cross");
  tensor<double> const b = tensor_of(c["b"]);
  return cross(x, tensor<S>(eval(b * x)), c["axis"].get<long>());
}

void check_close(tensor<double> const& got, nlohmann::json const& want, double tol = 1e-14) {
  adx_test::check_tensor(got, want, tol, tol);
}

}  // namespace

TEST_CASE("indexing and scans: values, gradients, directional derivatives and H v against torch") {
  for (auto const& item : cases()["cases"].items()) {
    std::string const name = item.key();
    auto const& c = item.value();
    CAPTURE(name);
    tensor<double> const x = tensor_of(c["x"]), w = tensor_of(c["w"]), v = tensor_of(c["v"]);
    // the values, and the indices where the operation returns them
    check_close(apply(c, x), c["out"]);
    if (c.contains("picked")) {  // the positions sort and topk return
      tensor<long> const idx =
          c["op"] == "sort"
              ? sort(x, c["axis"].get<long>(), c["descending"].get<bool>()).second
              : topk(x, c["k"].get<std::size_t>(), c["axis"].get<long>(), c["largest"].get<bool>()).second;
      std::vector<long> const want = c["picked"].get<std::vector<long>>();
      REQUIRE(idx.size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) CHECK(idx.data()[i] == want[i]);
    }
    auto const f = [&](auto const& t) { return sum(w * apply(c, t)); };
    check_close(primals(grad(f)(x)), c["grad"]);
    // forward: J v is grad . v
    tensor<double> const g = tensor_of(c["grad"]);
    double gv = 0;
    for (std::size_t i = 0; i < g.size(); ++i) gv += g.data()[i] * v.data()[i];
    CHECK(close(primal(functional::jvp(f, x, v).second), gv, 1e-13, 1e-13));
    // second order: forward over reverse, and reverse over reverse (var<var<double>>)
    check_close(primals(functional::hvp(f, x, v).second), c["hvp"], 1e-13);
    auto const gv_of = [&](auto const& t) {
      auto const gt = grad(f)(t);
      return sum(gt * v);
    };
    check_close(primals(grad(gv_of)(x)), c["hvp"], 1e-13);
  }
}

TEST_CASE("argmax and argmin: the first of equal values, along an axis and flat, as torch") {
  auto const& a = cases()["arg"];
  tensor<double> const x = tensor_of(a["ties"]);
  auto const check_list = [](tensor<long> const& got, std::vector<long> const& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(got.data()[i] == want[i]);
  };
  check_list(argmax(x, 1), a["argmax_1"].get<std::vector<long>>());
  check_list(argmin(x, 0), a["argmin_0"].get<std::vector<long>>());
  CHECK(argmax(x).data()[0] == a["argmax_flat"].get<long>());
  CHECK(argmin(x).data()[0] == a["argmin_flat"].get<long>());
  CHECK(argmax(x, 1, /*keepdim=*/true).shape() == shape{3, 1});
  CHECK(argmax(x).rank() == 0);
  // NaN counts as the largest (and as the smallest for argmin): torch propagates it
  tensor<double> const n{1.0, NAN, 3.0, NAN};
  CHECK(argmax(n).data()[0] == 1);
  CHECK(argmin(n).data()[0] == 1);
  // over AD elements, by their values
  tensor<var<double>> const xv(x);
  CHECK(argmax(xv).data()[0] == a["argmax_flat"].get<long>());
}

TEST_CASE("sort and topk: NaN sorts above every number and equal values keep their order") {
  tensor<double> const x{2.0, NAN, -1.0, 2.0};
  auto const [up, iu] = sort(x);
  CHECK(up(0) == -1.0);
  CHECK(up(1) == 2.0);
  CHECK(std::isnan(up(3)));
  CHECK(iu(1) == 0);
  CHECK(iu(2) == 3);
  auto const [down, id] = sort(x, 0, true);
  CHECK(std::isnan(down(0)));
  CHECK(id(1) == 0);
  CHECK(id(2) == 3);
  auto const [top, it] = topk(x, 2);
  CHECK(std::isnan(top(0)));
  CHECK(it(1) == 0);
  auto const [none, in] = topk(x, 0);
  CHECK(none.size() == 0);
  CHECK(in.size() == 0);
}

TEST_CASE("one_hot: labels to rows of ones, the classes given or inferred") {
  tensor<double> const h = one_hot(std::vector<long>{2, 0, 2});
  REQUIRE(h.shape() == shape{3, 3});
  std::vector<double> const want{0, 0, 1, 1, 0, 0, 0, 0, 1};
  for (std::size_t i = 0; i < 9; ++i) CHECK(h.data()[i] == want[i]);
  tensor<float> const f = one_hot<float>(tensor<int>{{1, 0}, {3, 1}}, 5);
  REQUIRE(f.shape() == shape{2, 2, 5});
  CHECK(f(1, 0, 3) == 1.0f);
  CHECK(f(1, 0, 2) == 0.0f);
  CHECK_THROWS_WITH_AS(one_hot(std::vector<int>{0, 3}, 3),
                       "adx: one_hot: index 3 is out of range for an extent of 3 (shape [2])", shape_error);
}

TEST_CASE(
    "indexing: a source picked twice gathers both adjoints, at nested levels too, and picked elements stay variables") {
  // d/dx sum(take(x, [1, 1, 0]) * [2, 3, 5]) = [5, 5, 0]
  tensor<double> const x{0.5, -1.5, 4.0};
  auto const f = [](auto const& t) { return sum(take(t, std::vector<long>{1, 1, 0}) * tensor<double>{2.0, 3.0, 5.0}); };
  tensor<double> const g = primals(grad(f)(x));
  CHECK(g(0) == 5.0);
  CHECK(g(1) == 5.0);
  CHECK(g(2) == 0.0);
  // second derivative through the pick: d2/dx2 sum(take(x, [0, 0])^3) = 6 * 2 x0 at x0
  auto const cube = [](auto const& t) {
    auto const p = take(t, std::vector<long>{0, 0});
    return sum(p * p * p);
  };
  tensor<double> const h = primals(functional::hessian(cube, x));
  CHECK(h(0, 0) == 2 * 6 * 0.5);
  CHECK(h(1, 1) == 0.0);
  // the elements picked from a tensor of vars are its variables
  tape_scope<var<double>> scope;
  tensor<var<double>> const xv(x);
  auto const picked = index_select(xv, 0, std::vector<long>{2, 0});
  CHECK(picked(0).index() == xv(2).index());
  CHECK(picked(1).index() == xv(0).index());
}

TEST_CASE("indexing and scans: their errors name the operation, the index and the shapes") {
  tensor<double> const x{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  CHECK_THROWS_WITH_AS(take(x, std::vector<long>{6}),
                       "adx: take: index 6 is out of range for an extent of 6 (shape [2, 3])", shape_error);
  CHECK(take(x, std::vector<long>{-1})(0) == 6.0);
  CHECK_THROWS_WITH_AS(index_select(x, 1, std::vector<long>{-1}),
                       "adx: index_select: index -1 is out of range for an extent of 3 (shape [2, 3])", shape_error);
  CHECK_THROWS_WITH_AS(gather(x, 0, tensor<long>{1, 0}),
                       "adx: gather: the index must have the input's rank (shapes [2, 3] and [2])", shape_error);
  CHECK_THROWS_AS(gather(x, 0, tensor<long>{{2, 0, 0}}), shape_error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 1, tensor<long>{{0, 3}}, x),
                       "adx: scatter_add: index 3 is out of range for an extent of 3 (shape [2, 3])", shape_error);
  CHECK_THROWS_AS(scatter_add(x, 0, tensor<long>{{0, 1, 0, 1}}, x), shape_error);
  CHECK_THROWS_WITH_AS(masked_fill(x, tensor<bool>(shape{3, 3}), 0.0),
                       "adx: masked_fill: shapes cannot be broadcast together (shapes [2, 3] and [3, 3])", shape_error);
  CHECK_THROWS_WITH_AS(pad(x, {3, 0}, pad_mode::reflect),
                       "adx: pad: reflect padding must be smaller than the axis it pads (axis 1) (shape [2, 3])",
                       shape_error);
  CHECK_THROWS_AS(pad(x, {1}), shape_error);
  CHECK_THROWS_AS(pad(x, {-1, 0}), shape_error);
  CHECK_THROWS_WITH_AS(topk(x, 4), "adx: topk: k = 4 exceeds the extent 3 (shape [2, 3])", shape_error);
  CHECK_THROWS_AS(argmax(tensor<double>(shape{0})), shape_error);
  CHECK_THROWS_WITH_AS(cross(x, x, 0), "adx: cross: axis 0 must have extent 3 (shape [2, 3])", shape_error);
  tensor<double> const self = cross(x, x);  // a vector crossed with itself
  for (double c : self.flat()) CHECK(c == 0.0);
  CHECK_THROWS_AS(diff(x, -1), shape_error);
  CHECK(diff(x, 5).shape() == shape{2, 0});
  CHECK(cumsum(tensor<double>(shape{0, 3}), 0).shape() == shape{0, 3});
}

TEST_CASE("indexing and scans take expressions too, and diff keeps an integer tensor's type") {
  tensor<double> const x{{1.0, -2.0, 3.0}, {0.5, 4.0, -1.0}};
  auto const e = x * 2.0;  // an expression, not a tensor
  CHECK(take(e, std::vector<long>{4})(0) == 8.0);
  CHECK(index_select(e, 1, std::vector<long>{2})(1, 0) == -2.0);
  CHECK(gather(e, 1, tensor<long>(shape{2, 1}, std::vector<long>{0, 1}))(1, 0) == 8.0);
  CHECK(masked_fill(e, tensor<double>{1.0, 0.0, 0.0} > 0.5, 0.0)(1, 0) == 0.0);
  CHECK(pad(e, {1, 0})(0, 1) == 2.0);
  CHECK(sort(e, 1).first(0, 0) == -4.0);
  CHECK(topk(e, 1).second(1, 0) == 1);
  CHECK(argmax(e).data()[0] == 4);
  CHECK(argmin(e, 1)(0) == 1);
  CHECK(cumsum(e, 1)(0, 2) == 4.0);
  CHECK(cumprod(e, 0)(1, 1) == -32.0);
  CHECK(diff(e)(1, 0) == 7.0);
  tensor<int> const k{1, 4, 9, 16};
  tensor<int> const d2 = diff(k, 2);
  CHECK(d2(0) == 2);
  CHECK(d2(1) == 2);
}
