// adx demo: the seed documents' worked examples (seeds 000-004) written with adx, each printed
// beside the output the seed printed. Run: adx_demo
//
// The seeds ran in float32 and printed its rounding (1.4100001); adx computes in double, so
// where the seed's digits are float32 artifacts the expected text is the exact value as numpy
// prints it, and the seed's own text is shown in a note.
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
void show_text(char const* what, std::string const& adx_out, std::string const& want, char const* note = "") {
  ++shown;
  bool const same = adx_out == want;
  agreed += same;
  std::printf("%s\n  adx:  %s\n  seed: %s%s%s\n  %s\n", what, adx_out.c_str(), want.c_str(), *note ? "  " : "", note,
              same ? "ok" : "DIFFERS");
}
std::string str(tensor<double> const& t) {
  std::string s = to_string(t);
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return s;
}
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// seeds 000/001/004: class Net: out = MatMul(x * self.z, y) with Parameter z = [1.0]
struct matmul_net {
  parameter<double> z{tensor<double>{1.0}, "z"};
  template <class X, class Y>
  auto operator()(X const& x, Y const& y) const {
    return matmul(x * z, y);
  }
  parameter_list<double> trainable_params() { return {z}; }
};

}  // namespace

int main() {
  std::printf(
      "adx %s demo. adx was founded on five documents (\"seeds\" 000-004): notes on TensorFlow's tf.gradients,\n"
      "MindSpore's grad and GradOperation, and PyTorch's autograd, with worked examples and their printed output.\n"
      "Each line below computes one of those examples with adx (the code is in src/demo.cpp) and shows its\n"
      "result beside the output the framework printed in the seed.\n\n",
      ADX_VERSION_STRING);
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
  std::printf("\n-- mindspore.grad / GradOperation (seeds 000, 002, 004) --\n\n");
  matmul_net net;
  {
    tensor<double> const x{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}};
    tensor<double> const y{{0.01, 0.3, 1.1}, {0.1, 0.2, 1.3}, {2.1, 1.2, 3.3}};
    char const* f32 = "(float32 printed [[1.4100001 1.5999999 6.6] [1.4100001 1.5999999 6.6]])";
    show_text("000 mindspore.grad(net)(x, y)", str(grad(net)(x, y)), "[[1.41 1.6 6.6]  [1.41 1.6 6.6]]", f32);
    show_text("004 GradOperation()(net)(x, y)", str(grad_operation<>(net)(x, y)), "[[1.41 1.6 6.6]  [1.41 1.6 6.6]]",
              f32);
  }
  {  // the GradOperation documentation's four calls
    tensor<double> const x{{0.8, 0.6, 0.2}, {1.8, 1.3, 1.1}};
    tensor<double> const y0{{0.1, 3.3, 1.1}, {1.1, 0.2, 1.4}, {1.1, 2.2, 0.3}};
    tensor<double> const y{{0.11, 3.3, 1.1}, {1.1, 0.2, 1.4}, {1.1, 2.2, 0.3}};
    auto const [dx, dy] = grad_operation<grad_options{.get_all = true}>(net)(x, y0);
    show_text("004 GradOperation(get_all=True)(net)(x, y)", str(dx) + " " + str(dy),
              "[[4.5 2.7 3.6]  [4.5 2.7 3.6]] [[2.6 2.6 2.6]  [1.9 1.9 1.9]  [1.3 1.3 1.3]]",
              "(float32: 2.70000005 3.60000014, 2.5999999 1.89999998 1.30000007)");
    tensor<double> const sens{{0.1, 0.6, 0.2}, {0.8, 1.3, 1.1}};
    auto const [sx, sy] = grad_operation<grad_options{.get_all = true, .sens_param = true}>(net)(x, y, sens);
    show_text("004 GradOperation(get_all=True, sens_param=True)(net)(x, y, sens)", str(sx) + " " + str(sy),
              "[[2.211 0.51 1.49]  [5.588 2.68 4.07]] [[1.52 2.82 2.14]  [1.1 2.05 1.55]  [0.9 1.55 1.25]]",
              "(float32 digits aside)");
    auto const dz = grad_operation<grad_options{.get_by_list = true}>(net, net.trainable_params())(x, y);
    show_text("004 GradOperation(get_by_list=True)(net, params)(x, y)", "(" + str(dz[0]) + ",)", "([21.536],)",
              "(float32: 21.5359993)");
    tensor<double> const x2{{0.1, 0.6, 1.2}, {0.5, 1.3, 0.1}};
    tensor<double> const y2{{0.12, 2.3, 1.1}, {1.3, 0.2, 2.4}, {0.1, 2.2, 0.3}};
    auto const [in, w] =
        grad_operation<grad_options{.get_all = true, .get_by_list = true}>(net, net.trainable_params())(x2, y2);
    show_text("004 GradOperation(get_all=True, get_by_list=True)(net, params)(x, y)",
              "((" + str(std::get<0>(in)) + ", " + str(std::get<1>(in)) + "), (" + str(w[0]) + ",))",
              "(([[3.52 3.9 2.6]  [3.52 3.9 2.6]], [[0.6 0.6 0.6]  [1.9 1.9 1.9]  [1.3 1.3 1.3]]), ([12.902],))",
              "(float32 digits aside)");
  }
  {  // seed 002: net(x, y, z) = x * y * z
    auto xyz = [](auto const& x, auto const& y, auto const& z) { return eval(x * y * z); };
    tensor<double> const x{1.0, 2.0}, y{-2.0, 3.0}, z{0.0, 3.0};
    auto const [gy, gz] = grad(xyz, positions<1, 2>)(x, y, z);
    show_text("002 grad(net, grad_position=(1, 2))(x, y, z)", "(" + str(gy) + ", " + str(gz) + ")",
              "([0. 6.], [-2. 6.])", "(printed as (Tensor([0., 6.]), Tensor([-2., 6.])))");
    auto const [i1, i2] = grad(xyz, positions<1, 2>, none, no_aux, return_ids)(x, y, z);
    show_text("002 grad(net, (1, 2), return_ids=True)(x, y, z)",
              "((" + std::to_string(i1.first) + ", " + str(i1.second) + "), (" + std::to_string(i2.first) + ", " +
                  str(i2.second) + "))",
              "((1, [0. 6.]), (2, [-2. 6.]))");
    auto fn = [](auto const& a, auto const& b, auto const& c) {
      return std::make_tuple(eval(a * exp(b) * pow(c, 2)), eval(c));
    };
    auto const [g, aux] = grad(fn, positions<1, 2>, none, has_aux)(tensor<double>{3.0, 3.0}, tensor<double>{0.0, 0.0},
                                                                   tensor<double>{5.0, 5.0});
    show_text("002 grad(fn, (1, 2), None, has_aux=True): gradient; aux",
              "(" + str(std::get<0>(g)) + ", " + str(std::get<1>(g)) + "); (" + str(std::get<0>(aux)) + ",)",
              "([75. 75.], [30. 30.]); ([5. 5.],)");
  }
  {  // seed 002 cases 1-3: nn.Dense(10, 1) + nn.MSELoss, forward returns (loss, logits)
    nn::dense<double> dense(10, 1, 42);
    auto forward = [&](auto const& inputs, auto const& labels) {
      auto logits = dense(inputs);
      return std::make_tuple(nn::mse_loss(logits, labels), logits);
    };
    tensor<double> const inputs = random_normal<double>(shape{16, 10}, 1),
                         labels = random_normal<double>(shape{16, 1}, 2);
    auto const [g1, aux1] = grad(forward, positions<0, 1>, none, has_aux)(inputs, labels);
    show_text(
        "002 case 1: len(inputs_gradient); aux_logits.shape",
        std::to_string(std::tuple_size_v<std::remove_cvref_t<decltype(g1)>>) + "; " + std::get<0>(aux1).shape().str(),
        "2; [16, 1]", "(printed (16, 1))");
    auto const [g2, aux2] = grad(forward, none, dense.trainable_params(), has_aux)(inputs, labels);
    show_text("002 case 2: len(weights), len(params_gradient)",
              std::to_string(dense.trainable_params().size()) + " " + std::to_string(g2.size()), "2 2");
    auto const [g3, aux3] = grad(forward, position<0>, dense.trainable_params(), has_aux)(inputs, labels);
    show_text("002 case 3: inputs gradient shape; len(params_gradient)",
              std::get<0>(g3).shape().str() + "; " + std::to_string(std::get<1>(g3).size()), "[16, 10]; 2");
  }

  std::printf("\n-- tf.gradients (seeds 000, 003, 004) and torch.autograd (seed 001) --\n\n");
  {  // seeds 000/004: z1 = w1 + w2 + w3, z2 = w3 + w4 with grad_ys
    tape_scope<var<double>> scope;
    tensor<var<double>> w1(tensor<double>{0.3, -1.2, 0.5}), w2(tensor<double>{1.1, 0.2, -0.4}),
        w3(tensor<double>{0.7, 0.9, 2.0}), w4(tensor<double>{-0.6, 0.1, 1.5});
    tensor<var<double>> z1 = w1 + w2 + w3, z2 = w3 + w4;
    auto g = gradients(std::vector{z1, z2}, std::vector{w1, w2, w3, w4},
                       {tensor<double>{2.0, 2.0, 3.0}, tensor<double>{3.0, 2.0, 4.0}});
    show_text("000/004 tf.gradients([z1, z2], [w1..w4], grad_ys)",
              str(*g[0]) + " " + str(*g[1]) + " " + str(*g[2]) + " " + str(*g[3]),
              "[2. 2. 3.] [2. 2. 3.] [5. 4. 7.] [3. 2. 4.]");
  }
  {  // seed 003 tests 1 and 2: z1 = 3 w1 + 2 w2 + w3, z2 = -w3 + w4
    tape_scope<var<double>> scope;
    tensor<var<double>> w1(tensor<double>{0.1, 0.2, 0.3}), w2(tensor<double>{1.0, 2.0, 3.0}),
        w3(tensor<double>{-1.0, 0.5, 4.0}), w4(tensor<double>{2.0, 2.5, -3.0});
    tensor<var<double>> z1 = 3.0 * w1 + 2.0 * w2 + w3, z2 = -w3 + w4;
    auto g = gradients(std::vector{z1, z2}, std::vector{w1, w2, w3, w4});
    show_text("003 tf test 1: gradients([z1, z2], [w1..w4])",
              str(*g[0]) + " " + str(*g[1]) + " " + str(*g[2]) + " " + str(*g[3]),
              "[3. 3. 3.] [2. 2. 2.] [0. 0. 0.] [1. 1. 1.]");
    auto h = gradients(std::vector{z1, z2}, std::vector{w1, w2, w3, w4},
                       {tensor<double>{-2.0, -3.0, -4.0}, tensor<double>{-1.0, -2.0, -3.0}});
    show_text("003 tf test 2: ... grad_ys=[[-2,-3,-4], [-1,-2,-3]]",
              str(*h[0]) + " " + str(*h[1]) + " " + str(*h[2]) + " " + str(*h[3]),
              "[-6. -9. -12.] [-4. -6. -8.] [-1. -1. -1.] [-1. -2. -3.]");
  }
  {  // seed 003 test 3: y = matmul([[1, 2]], [[9], [10]]); gradients(y, weight)
    tape_scope<var<double>> scope;
    tensor<var<double>> weight(tensor<double>(shape{1, 2}, {1.0, 2.0}));
    tensor<double> const x(shape{2, 1}, {9.0, 10.0});
    auto g = gradients(matmul(weight, x), weight);
    show_text("003 tf test 3: gradients(matmul(w, x), w)", "[" + str(*g[0]) + "]", "[[[9. 10.]]]",
              "(printed [array([[ 9., 10.]], dtype=float32)])");
  }
  {  // seed 003 test 9: y3 = stop_gradient(w1 + w2) + w3, grad_ys = [[1, 2]]
    tape_scope<var<double>> scope;
    tensor<var<double>> w1(tensor<double>(shape{1, 2}, {1.0, 1.0})), w2(tensor<double>(shape{1, 2}, {2.0, 2.0})),
        w3(tensor<double>(shape{1, 2}, {3.0, 3.0}));
    tensor<var<double>> y3 = stop_gradient(w1 + w2) + w3;
    auto g = gradients(y3, std::vector{w1, w2, w3}, {tensor<double>(shape{1, 2}, {1.0, 2.0})});
    show_text("003 tf test 9: gradients(y3, [w1, w2, w3], grad_ys=[[1, 2]])",
              std::string(g[0] ? "?" : "None") + ", " + (g[1] ? "?" : "None") + ", " + str(*g[2]),
              "None, None, [[1. 2.]]");
  }
  {  // seed 001 with parameters (torch leaves): z.backward() accumulates into x.grad, y.grad
    parameter<double> x(2.0), y(3.0);
    autograd::backward(eval(x * x * y));
    show_text("001 torch: z = x*x*y; z.backward(); print(x.grad, y.grad)",
              "tensor(" + to_string(*x.grad()) + ") tensor(" + to_string(*y.grad()) + ")", "tensor(12.) tensor(4.)");
    auto const g = autograd::grad(eval(x * x * y), tensor<var<double>>(x));
    show_text("001 torch: autograd.grad(outputs=z, inputs=x)[0]", "tensor(" + to_string(*g[0]) + ")", "tensor(12.)");
  }
  std::printf("\n%d of %d examples print what the seed printed.\n", agreed, shown);
  return agreed == shown ? 0 : 1;
}
