// adx demo: the seed documents' worked examples that adx can run so far, each printed beside
// the output the seed printed. Run: adx_demo
#include <adx/adx.hpp>
#include <cstdio>
#include <string>

using namespace adx;

namespace {
int shown = 0, agreed = 0;
void show(char const* what, std::string const& adx_out, char const* seed_out) {
  ++shown;
  bool const same = adx_out == seed_out;
  agreed += same;
  std::printf("%-58s adx: %-18s seed: %-18s %s\n", what, adx_out.c_str(), seed_out, same ? "ok" : "DIFFERS");
}
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
}  // namespace

int main() {
  std::printf("adx %s demo: seed examples (scalar core and tensors)\n\n", ADX_VERSION_STRING);
  {  // seed 001: torch z = x*x*y; z.backward(); print(x.grad, y.grad)
    tape_scope<var<double>> scope;
    var<double> x = 2.0, y = 3.0;
    var<double> z = x * x * y;
    backward(z);
    show("001 torch: z = x*x*y, z.backward() -> x.grad y.grad", num(x.adjoint()) + " " + num(y.adjoint()), "12.0 4.0");
    show("001 torch: autograd.grad(z, x)[0]", num(x.adjoint()), "12.0");
  }
  {  // seed 003 test 6: a = 2; y = pow(a, 2.); three tf.gradients in a row
    tape_scope<var<var<var<double>>>> scope;
    var<var<var<double>>> a = 2.0;
    var<var<var<double>>> y = pow(a, 2.);
    backward(y);
    var<var<double>> g1 = a.adjoint();
    backward(g1);
    var<double> g2 = a.value().adjoint();
    backward(g2);
    double const g3 = a.value().value().adjoint();
    show("003 tf test 6: pow(a, 2.) at 2, gradients x3", num(primal(g1)) + " " + num(primal(g2)) + " " + num(g3),
         "4.0 2.0 0.0");
  }
  {  // seed 003 test 4: e = stop_gradient(a+b) + (a+b)
    tape_scope<var<double>> scope;
    var<double> a = 1.0, b = 1.0;
    var<double> e = stop_gradient(a + b) + (a + b);
    backward(e);
    show("003 tf test 4: e = sg(a+b) + (a+b) -> [da, db]", num(a.adjoint()) + " " + num(b.adjoint()), "1.0 1.0");
  }
  {  // seed 003 test 5: c_stoped created but unused: e = c + (a+b)
    tape_scope<var<double>> scope;
    var<double> a = 1.0, b = 1.0;
    var<double> c = a + b;
    var<double> c_stoped = stop_gradient(c);
    (void)c_stoped;
    var<double> e = c + (a + b);
    backward(e);
    show("003 tf test 5: sg(c) unused, e = c + (a+b)", num(a.adjoint()) + " " + num(b.adjoint()), "2.0 2.0");
  }
  {  // seed 003 tests 7 and 8: a = 0, b = 2a, tf.gradients(a + b, [a, b]) without and with stop_gradients
    tape_scope<var<double>> scope;
    var<double> a = 0.0;
    var<double> b = 2 * a;
    auto total = gradients(a + b, std::vector{a, b});
    show("003 tf test 7: b = 2a, gradients(a+b, [a, b])", num(*total[0]) + " " + num(*total[1]), "3.0 1.0");
    auto partial = gradients(a + b, std::vector{a, b}, {}, {a, b});
    show("003 tf test 8: ... stop_gradients=[a, b]", num(*partial[0]) + " " + num(*partial[1]), "1.0 1.0");
  }
  {  // seed 001: torch.autograd.grad(z, x) with z = x*x*y
    tape_scope<var<double>> scope;
    var<double> x = 2.0, y = 3.0;
    var<double> z = x * x * y;
    auto g = autograd::grad(z, x);
    show("001 torch: autograd.grad(z, x)[0] (API)", num(*g[0]), "12.0");
  }
  {  // seed 003 answer 3: y = m x + b, m = 2, b = 1, x = 3
    tape_scope<var<double>> scope;
    var<double> x = 3.0;
    var<double> y = 2.0 * x + 1.0;
    backward(y);
    show("003 answer 3: y = 2x + 1 at 3 -> dy/dx", num(x.adjoint()), "2.0");
  }
  {  // seeds 000/001/004: out = MatMul(x * z, y), z = Parameter([1.0]); gradient in x (sens = ones)
    tape_scope<var<double>> scope;
    tensor<var<double>> x(tensor<double>{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}});
    tensor<var<double>> y(tensor<double>{{0.01, 0.3, 1.1}, {0.1, 0.2, 1.3}, {2.1, 1.2, 3.3}});
    tensor<var<double>> z{1.0};
    var<double> out = sum(matmul(x * z, y));
    backward(out);
    tensor<double> dx(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) dx[i] = x[i].adjoint();
    // the seed ran in float32 and printed [[1.4100001 1.5999999 6.6      ] ...]; the exact values
    // are the row sums of y, which numpy prints as below
    std::string const printed = to_string(dx);
    bool const same = printed == "[[1.41 1.6 6.6]\n [1.41 1.6 6.6]]";
    ++shown;
    agreed += same;
    std::printf(
        "000 mindspore: grad of MatMul(x*z, y) in x (tensor path)\n%s\nseed (float32): "
        "[[1.4100001 1.5999999 6.6      ]\n [1.4100001 1.5999999 6.6      ]]   %s\n",
        printed.c_str(), same ? "ok (exact row sums of y)" : "DIFFERS");
  }
  std::printf("\n%d of %d examples print what the seed printed.\n", agreed, shown);
  std::printf("mindspore.grad / GradOperation and the rest of the API layer are being built.\n");
  return agreed == shown ? 0 : 1;
}
