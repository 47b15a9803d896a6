// The bad-input catalogue: every runtime error adx reports, each with its exception type and the
// words of its message that name the operation, the argument and (for tensors) both shapes.
// Mistakes the type system sees are compile-time errors instead: test/compile_fail/ has one case
// each (grad_position negative, duplicated, out of range or a runtime int; grad_position and
// weights both absent; has_aux with one output or a runtime bool; an int argument selected;
// in-place on a parameter; get_by_list without weights; mixing precisions or var with dual).
//
// Each case is one `expect<Error>(what, call, {fragments...})`; the count is printed at the end.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using namespace adx;

namespace {

std::size_t catalogue_cases = 0;

/// call() must throw exactly an E (or a class derived from it) whose message holds every fragment.
template <class E, class F>
void expect(char const* what, F&& call, std::initializer_list<char const*> fragments) {
  ++catalogue_cases;
  INFO("case: " << what);
  std::string message;
  bool thrown = false;
  try {
    call();
  } catch (E const& e) {
    thrown = true;
    message = e.what();
  } catch (std::exception const& e) {
    FAIL_CHECK("threw another type: " << e.what());
    return;
  }
  CHECK_MESSAGE(thrown, "no exception");
  INFO("message: " << message);
  CHECK(message.rfind("adx: ", 0) == 0);  // every message says where it comes from
  for (char const* f : fragments) {
    INFO("fragment: " << f);
    CHECK(message.find(f) != std::string::npos);
  }
}

tensor<double> filled(shape const& sh, double start = 0.5) {
  tensor<double> t(sh);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = start + 0.25 * static_cast<double>(i);
  return t;
}

}  // namespace

TEST_CASE("bad input: tensor shapes in every tensor operation (double and var elements)") {
  tensor<double> const a = filled({2, 3}), b = filled({4}), m = filled({3, 4}), v3 = filled({3}), v4 = filled({4});
  tape_scope<var<double>> scope;
  tensor<var<double>> const va(a), vb(b), vm(m);

  // elementwise and broadcasting
  expect<shape_error>("a + b", [&] { tensor<double> r = a + b; }, {"cannot be broadcast", "[2, 3]", "[4]"});
  expect<shape_error>("var a * b", [&] { tensor<var<double>> r = va * vb; }, {"cannot be broadcast", "[2, 3]", "[4]"});
  expect<shape_error>("atan2(a, b)", [&] { tensor<double> r = atan2(a, b); }, {"cannot be broadcast", "[2, 3]"});
  expect<shape_error>("pow(var a, b)", [&] { tensor<var<double>> r = pow(va, b); }, {"cannot be broadcast", "[4]"});
  expect<shape_error>("where(a > 1, a, b)", [&] { tensor<double> r = where(a > 1.0, a, b); },
                      {"cannot be broadcast", "[2, 3]", "[4]"});
  expect<shape_error>("a < b", [&] { (void)(a < b); }, {"cannot be broadcast", "[2, 3]", "[4]"});
  expect<shape_error>("sum(a * b) (an unevaluated operand)", [&] { (void)sum(a * b); }, {"cannot be broadcast"});
  expect<shape_error>("v3 += a (in place, would broadcast)",
                      [&] {
                        tensor<double> r = v3;
                        r += a;
                      },
                      {"operator+=", "[3]", "[2, 3]"});
  expect<shape_error>("var v3 *= a (in place, would broadcast)",
                      [&] {
                        tensor<var<double>> r(v3);
                        r *= va;
                      },
                      {"operator*=", "[3]", "[2, 3]"});
  {  // ... and records nothing (its result used to be evaluated, a tape node, before the check)
    tensor<var<double>> r(v3);
    tape_stats const before = tape<double>::current().stats();
    CHECK_THROWS_AS(r *= sin(va) * 2.0, shape_error);
    tape_stats const after = tape<double>::current().stats();
    CHECK(after.statements == before.statements);
    CHECK(after.indices == before.indices);
  }

  // products
  expect<shape_error>("matmul inner", [&] { (void)matmul(a, a); }, {"matmul", "inner dimensions differ", "[2, 3]"});
  expect<shape_error>("var matmul inner", [&] { (void)matmul(vm, va); },
                      {"matmul", "inner dimensions differ", "[3, 4]", "[2, 3]"});
  expect<shape_error>("matmul rank 4", [&] { (void)matmul(filled({1, 1, 2, 3}), m); }, {"matmul", "rank 1, 2 or 3"});
  expect<shape_error>("matmul batch",
                      [&] {
                        (void)matmul(filled({2, 2, 3}), filled({3, 3, 4}));
                      },
                      {"matmul", "batch sizes differ", "[2, 2, 3]", "[3, 3, 4]"});
  expect<shape_error>("dot lengths", [&] { (void)dot(v3, v4); }, {"dot", "same length", "[3]", "[4]"});
  expect<shape_error>("dot rank", [&] { (void)dot(a, a); }, {"dot", "rank-1"});
  expect<shape_error>("outer rank", [&] { (void)outer(a, v3); }, {"outer", "rank-1", "[2, 3]"});

  // reductions and axes
  expect<shape_error>("sum axis 2", [&] { (void)sum(a, 2); }, {"axis 2 is out of range for rank 2", "[2, 3]"});
  expect<shape_error>("var mean axis -3", [&] { (void)mean(va, -3); }, {"axis -3 is out of range for rank 2"});
  expect<shape_error>("max axis 5", [&] { (void)max(a, 5); }, {"axis 5"});
  expect<shape_error>("logsumexp axis 9", [&] { (void)logsumexp(va, 9); }, {"axis 9"});
  expect<shape_error>("softmax axis 2", [&] { (void)softmax(a, 2); }, {"softmax", "axis 2"});
  expect<shape_error>("var softmax axis 2", [&] { (void)softmax(va, 2); }, {"softmax", "axis 2"});
  expect<shape_error>("log_softmax axis -3", [&] { (void)log_softmax(va, -3); }, {"log_softmax", "axis -3"});
  expect<shape_error>("double log_softmax axis 2", [&] { (void)log_softmax(a, 2); }, {"log_softmax", "axis 2"});
  expect<shape_error>("max of an empty tensor", [&] { (void)max(tensor<double>(shape{0})); }, {"max", "empty tensor"});
  expect<shape_error>("min over an empty axis",
                      [&] {
                        (void)min(tensor<double>(shape{2, 0}), 1);
                      },
                      {"min", "empty tensor or axis"});

  // structure and elements
  expect<shape_error>("reshape count",
                      [&] {
                        (void)a.reshape({4, 2});
                      },
                      {"reshape", "element counts differ", "[2, 3]"});
  expect<shape_error>("reshape -1", [&] { (void)a.reshape({4, -1}); }, {"reshape", "cannot infer", "6 elements"});
  expect<shape_error>("reshape two -1", [&] { (void)a.reshape({-1, -1}); }, {"reshape", "one may be -1"});
  expect<shape_error>("permute count", [&] { (void)a.permute({0}); }, {"permute", "one axis per dimension"});
  expect<shape_error>("permute repeated", [&] { (void)a.permute({1, 1}); }, {"permute", "repeated"});
  expect<shape_error>("transpose axis", [&] { (void)a.transpose(0, 2); }, {"transpose", "axis 2"});
  expect<shape_error>("slice axis", [&] { (void)a.slice(3, 0, 1); }, {"slice", "axis 3"});
  expect<shape_error>("slice step", [&] { (void)a.slice(1, 0, 3, 0); }, {"slice", "step must be positive"});
  expect<shape_error>("item of 6", [&] { (void)a.item(); }, {"item", "exactly one element"});
  expect<shape_error>("flat index", [&] { (void)a[6]; }, {"operator[]", "flat index 6 out of range"});
  expect<shape_error>("index count", [&] { (void)a(1); }, {"operator()", "1 indices given", "[2, 3]"});
  expect<shape_error>("index range", [&] { (void)a(2, 0); }, {"operator()", "[2, 3]"});
  expect<shape_error>("dim axis", [&] { (void)a.dim(2); }, {"dim", "axis 2"});
  expect<shape_error>("values count",
                      [&] {
                        tensor<double> r(shape{2, 2}, std::vector<double>{1, 2, 3});
                      },
                      {"tensor", "3 values given", "[2, 2]"});
  expect<shape_error>("ragged list", [&] { tensor<double> r{{1.0, 2.0}, {3.0}}; }, {"ragged"});
  expect<shape_error>("arange step 0", [&] { (void)arange<double>(0.0, 1.0, 0.0); }, {"arange", "step"});
  expect<shape_error>("rank 9", [&] { shape s{1, 1, 1, 1, 1, 1, 1, 1, 1}; }, {"at most 8 dimensions"});
}

TEST_CASE("bad input: the gradient APIs' arguments") {
  tape_scope<var<double>> scope;
  var<double> const a = 2.0, b = 3.0;
  var<double> const y = a * b;
  tensor<var<double>> const t(filled({3}));
  tensor<var<double>> const u = t * t;

  // tf.gradients
  expect<value_error>("grad_ys count",
                      [&] {
                        gradients(std::vector{y, y}, a, {1.0});
                      },
                      {"gradients", "Passed 1 grad_ys for 2 ys"});
  expect<value_error>("grad_ys shape",
                      [&] {
                        gradients(u, t, {tensor<double>{1.0, 2.0}});
                      },
                      {"gradients", "grad_ys[0]", "incompatible with ys[0]"});
  expect<value_error>("unconnected_gradients value",
                      [&] { gradients(y, a, {}, {}, static_cast<unconnected_gradients>(7)); },
                      {"Unknown value for unconnected_gradients: 7"});
  expect<value_error>("aggregation_method value",
                      [&] { gradients(y, a, {}, {}, unconnected_gradients::none, static_cast<aggregation_method>(9)); },
                      {"Invalid aggregation_method specified 9"});

  // torch.autograd.grad / backward
  expect<value_error>("grad_outputs count",
                      [&] {
                        autograd::grad(std::vector{u, u}, t, {tensor<double>{1, 1, 1}});
                      },
                      {"autograd::grad", "got 2 tensors and 1 gradients"});
  expect<value_error>("grad_outputs shape",
                      [&] {
                        autograd::grad(u, t, {tensor<double>{1.0, 1.0}}, true);
                      },
                      {"autograd::grad", "Mismatch in shape", "grad_output[0]"});
  expect<value_error>("implicit grad of a non-scalar", [&] { autograd::grad(u, t, {}, true); },
                      {"grad can be implicitly created only for scalar outputs"});
  expect<value_error>("empty inputs", [&] { autograd::grad(y, std::vector<var<double>>{}); },
                      {"grad requires non-empty inputs"});
  expect<value_error>("input that does not require grad",
                      [&] { autograd::grad(y, var<double>::constant(1.0), {}, true); }, {"does not require grad"});
  expect<value_error>("unused input, allow_unused false",
                      [&] {
                        var<double> const c = 4.0;
                        autograd::grad(y, std::vector{a, c}, {}, true);
                      },
                      {"appears to not have been used in the graph", "{.allow_unused = true}"});
  expect<gradient_error>("sweeping a released graph",
                         [&] {
                           var<double> const z = a * a * b;
                           autograd::grad(z, a);  // releases the graph
                           autograd::grad(z, a);
                         },
                         {"Trying to backward through the graph a second time", "{.retain_graph = true}"});
  expect<gradient_error>("backward twice through a released graph",
                         [&] {
                           var<double> const z = exp(a) * b;
                           autograd::backward(z);
                           autograd::backward(z);
                         },
                         {"second time"});
  expect<value_error>("backward with empty inputs",
                      [&] { autograd::backward(y, {}, true, false, parameter_list<double>{}); },
                      {"'inputs' argument to backward() cannot be empty"});
  expect<value_error>("backward grad_tensors shape", [&] { autograd::backward(u, {tensor<double>{1.0}}, true); },
                      {"Mismatch in shape"});

  // mindspore
  auto net = [](auto const& x, auto const& w) { return matmul(x, w); };
  tensor<double> const x = filled({2, 3}), w = filled({3, 2});
  expect<value_error>("sens shape",
                      [&] {
                        grad_operation<grad_options{.sens_param = true}>(net)(x, w, filled({2, 3}));
                      },
                      {"sens for output 0 has shape [2, 3]", "[2, 2]"});
  auto const with_ids = grad(net, positions<0, 1>, none, no_aux, return_ids)(x, w);
  expect<value_error>("get_grad position", [&] { (void)get_grad(with_ids, 5); }, {"get_grad", "position 5"});
  parameter<double> p(filled({2}), "p");
  expect<value_error>("get_grad parameter", [&] { (void)get_grad(with_ids, p); }, {"get_grad", "'p'"});
  expect<value_error>("dense with no inputs", [] { nn::dense<double>(0, 3, 1); }, {"nn::dense", "positive"});
  expect<shape_error>("parameter assign shape", [&] { p.assign(filled({3})); },
                      {"parameter::assign", "new values' shape is not the parameter's", "[2]", "[3]"});

  // scalar entry points
  auto f = [](auto const& v) { return v[0] * v[1]; };
  expect<value_error>("hvp direction",
                      [&] {
                        hvp(f, std::vector{1.0, 2.0}, std::vector{1.0});
                      },
                      {"hvp", "direction has 1 entries but x has 2"});
}

TEST_CASE("bad input: vars outside their recording") {
  expect<stale_variable_error>("a var after its tape_scope ended",
                               [] {
                                 var<double> x;
                                 {
                                   tape_scope<var<double>> scope;
                                   x = var<double>(1.5);
                                 }
                                 var<double> y = x * 2.0;
                                 (void)y;
                               },
                               {"used outside its recording"});
  expect<stale_variable_error>("a var after reset",
                               [] {
                                 tape_scope<var<double>> scope;
                                 var<double> const x = 1.5;
                                 tape<double>::current().reset();
                                 var<double> y = sin(x);
                                 (void)y;
                               },
                               {"tape was reset"});
  expect<stale_variable_error>("the adjoint of a stale var",
                               [] {
                                 var<double> x;
                                 {
                                   tape_scope<var<double>> scope;
                                   x = var<double>(1.5);
                                   backward(var<double>(x * x));
                                 }
                                 (void)x.adjoint();
                               },
                               {"used outside its recording"});
  expect<stale_variable_error>("backward from a stale var",
                               [] {
                                 var<double> y;
                                 {
                                   tape_scope<var<double>> scope;
                                   var<double> const x = 1.5;
                                   y = x * x;
                                 }
                                 backward(y);
                               },
                               {"used outside its recording"});
  expect<stale_variable_error>("a stale tensor element",
                               [] {
                                 tensor<var<double>> t;
                                 {
                                   tape_scope<var<double>> scope;
                                   t = tensor<var<double>>(filled({3}));
                                 }
                                 (void)sum(t * t);
                               },
                               {"used outside its recording"});
  expect<error>("pop_frame without push_frame", [] { tape<double>::current().pop_frame(); },
                {"pop_frame without a matching push_frame"});

  // another thread's var: recorded on thread 1's tape, used on thread 2's
  std::string message;
  {
    tape_scope<var<double>> scope;
    var<double> const x = 2.0;
    std::thread other([&] {
      try {
        tape_scope<var<double>> theirs;
        var<double> const own = 1.0;
        var<double> y = own * x;
        (void)y;
      } catch (stale_variable_error const& e) {
        message = e.what();
      }
    });
    other.join();
  }
  ++catalogue_cases;
  CHECK(message.find("another thread's tape") != std::string::npos);
}

TEST_CASE("bad input: NaN and inf inputs propagate through values and gradients, never crash") {
  double const nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  {  // scalars, reverse
    tape_scope<var<double>> scope;
    var<double> const x = nan, y = inf, z = 2.0;
    var<double> const f = x * z + exp(z);
    var<double> const g = y * z;
    var<double> const h = tanh(y) * z;  // tanh(inf) = 1, its derivative 0
    backward(f);
    CHECK(std::isnan(f.value()));
    CHECK(std::isnan(z.adjoint()));  // d/dz (x z) = x = NaN
    CHECK(x.adjoint() == 2.0);       // d/dx (x z) = z
    backward(g);
    CHECK(g.value() == inf);
    CHECK(z.adjoint() == inf);
    backward(h);
    CHECK(h.value() == 2.0);
    CHECK(z.adjoint() == 1.0);
    CHECK(y.adjoint() == 0.0);
  }
  {  // scalars, forward
    dual<double> const x(nan, 1.0);
    dual<double> const y = sin(x) + x * x;
    CHECK(std::isnan(y.value()));
    CHECK(std::isnan(y.tangent()));
    dual<double> const e = exp(dual<double>(inf, 1.0));
    CHECK(e.value() == inf);
    CHECK(e.tangent() == inf);
  }
  {  // tensors: a NaN element poisons exactly what depends on it
    tape_scope<var<double>> scope;
    tensor<var<double>> const t(tensor<double>{1.0, nan, 3.0});
    tensor<var<double>> const w(tensor<double>{{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
    tensor<var<double>> const r = matmul(t.reshape({1, 3}), w);  // both outputs depend on t(1)
    var<double> const s = sum(r);
    backward(s);
    CHECK(std::isnan(s.value()));
    auto const gt = adjoints(t);
    CHECK(gt[0] == 3.0);  // row sums of w, finite
    CHECK(gt[1] == 7.0);
    CHECK(gt[2] == 11.0);
    auto const gw = adjoints(w);
    CHECK(gw(0, 0) == 1.0);
    CHECK(std::isnan(gw(1, 0)));
    CHECK(gw(2, 1) == 3.0);
  }
  {  // reductions and softmax with inf
    tensor<double> const t{1.0, inf, 2.0};
    CHECK(max(t) == inf);
    CHECK(logsumexp(t) == inf);
    tensor<double> const sm = softmax(tensor<double>{1.0, -inf, 2.0});
    CHECK(sm[1] == 0.0);
    CHECK(std::abs(sm[0] + sm[2] - 1.0) < 1e-15);
  }
  ++catalogue_cases;
  MESSAGE("bad-input catalogue: " << catalogue_cases << " cases checked (type and message)");
}

TEST_CASE("no surprises: max and min with an integer second argument") {
  // Scalars: the int is a number (mixed operands just work, as for + and *).
  tape_scope<var<double>> scope;
  var<double> const x = 0.5;
  var<double> const m = max(x, 1), n = min(x, 1);
  CHECK(m.value() == 1.0);
  CHECK(n.value() == 0.5);
  backward(n);
  CHECK(x.adjoint() == 1.0);
  // Tensors: an integer is an axis (numpy's np.max(t, 1), torch.max(t, 1)); a floating number is
  // the elementwise maximum.
  tensor<double> const t{{1.0, 5.0, 2.0}, {7.0, 0.0, 3.0}};
  tensor<double> const rows = max(t, 1);
  REQUIRE(rows.shape() == shape{2});
  CHECK(rows[0] == 5.0);
  CHECK(rows[1] == 7.0);
  tensor<double> const cols = min(t, 0);
  REQUIRE(cols.shape() == shape{3});
  CHECK(cols[1] == 0.0);
  tensor<double> const clipped = max(t, 2.5);
  REQUIRE(clipped.shape() == t.shape());
  CHECK(clipped(0, 0) == 2.5);
  CHECK(clipped(1, 0) == 7.0);
}
