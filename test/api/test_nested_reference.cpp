// Transforms nested through closures against PyTorch 1.13 (test/reference/nested_closures.json,
// made by test/reference/gen_nested_closures.py with torch.autograd.grad(create_graph=True)
// inside closures). Each case below computes the generator's case of the same name with adx,
// mixing adx's transforms (grad, derivative, gradient, jacrev, jvp, hessian, hvp) where the
// generator nests one kind of call: the derivatives of a composition do not depend on which
// transform took each.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <array>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/check.hpp"

using namespace adx;
using adx_test::close;

namespace {

using values = std::vector<double>;

template <class... X>
values of(X const&... x) {
  return {static_cast<double>(primal(x))...};
}

/// The MAML case's network 2 -> 2 -> 1: W1 = t[0..3] (rows), b1 = t[4..5], w2 = t[6..7].
template <class T>
auto maml_net(T const& t, std::array<double, 2> const& x) {
  auto const h0 = eval(tanh(t[0] * x[0] + t[1] * x[1] + t[4]));
  auto const h1 = eval(tanh(t[2] * x[0] + t[3] * x[1] + t[5]));
  return eval(t[6] * h0 + t[7] * h1);
}

/// The physics-informed case's u(x) = sum_j w2_j tanh(w1_j x + b1_j): w1, b1, w2 = t[0..2], [3..5], [6..8].
template <class T, class X>
auto pinn_u(T const& t, X const& x) {
  return eval(t[6] * tanh(t[0] * x + t[3]) + t[7] * tanh(t[1] * x + t[4]) + t[8] * tanh(t[2] * x + t[5]));
}

std::map<std::string, std::function<values()>> const cases = {
    {"grad_in_grad_x_y2",
     [] { return of(grad([](auto x) { return grad([&](auto y) { return x * y * y; })(2.0); })(1.5)); }},
    {"x_times_grad_xy",
     [] { return of(grad([](auto x) { return x * grad([&](auto y) { return x * y; })(1.0); })(1.5)); }},
    {"perturbation_confusion",
     [] {
       return of(
           derivative<1>([](auto x) { return x * derivative<1>([&](auto y) { return x + y; }, 1.0)[1]; }, 1.0)[1]);
     }},
    {"value_and_slope_of_captured_scale",
     [] {
       auto const d = derivative<1>([](auto l) { return derivative<1>([&](auto x) { return x * l; }, 2.0)[1]; }, 3.0);
       return of(d[0], d[1]);
     }},
    {"three_levels",
     [] {
       return of(derivative<1>(
           [](auto x) {
             return x *
                    grad([&](auto y) { return x * y * derivative<1>([&](auto z) { return x + y + z; }, 1.0)[1]; })(1.0);
           },
           1.0)[1]);
     }},
    {"point_depends_on_outer",
     [] {
       return of(derivative<1>([](auto x) { return derivative<1>([](auto t) { return sin(t); }, x * x)[1]; }, 0.7)[1]);
     }},
    {"cube_at_twice_x",
     [] { return of(grad([](auto x) { return grad([](auto t) { return t * t * t; })(x + x); })(0.5)); }},
    {"exp_of_x_sin_y",
     [] {
       auto h = [](auto const& x) { return grad([&](auto y) { return exp(x * sin(y)); })(0.3); };
       return of(functional::jacrev(h, 0.8).data()[0]);
     }},
    {"log_of_mixed_square",
     [] {
       auto h = [](auto x) {
         return functional::jvp([&](auto y) { return log(1.0 + x * x * y * y); }, 1.2, 1.0).second;
       };
       return of(derivative<1>(h, 0.4)[1]);
     }},
    {"second_derivative_inside",
     [] { return of(grad([](auto x) { return derivative<2>([&](auto y) { return tanh(x * y); }, 0.5)[2]; })(0.9)); }},
    {"third_order_nested",
     [] {
       return of(grad([](auto x) {
         return grad([&](auto y) { return grad([&](auto z) { return exp(sin(z)) + 0.0 * (x + y); })(y); })(x);
       })(0.4));
     }},
    {"reverse_over_forward_cube",
     [] {
       return of(grad([](auto x) {
         return x * derivative<1>([&](auto y) { return x * y * grad([&](auto z) { return x * z + y; })(1.0); }, 1.0)[1];
       })(1.3));
     }},
    {"mixed_third_order",
     [] {
       return of(derivative<1>(
           [](auto x) {
             return grad([&](auto y) {
               return derivative<1>([&](auto z) { return x * y * z * z + exp(x * y) * z; }, 0.5)[1];
             })(0.6);
           },
           0.7)[1]);
     }},
    {"tensor_inner_gradient_element",
     [] {
       tensor<double> const Y{2.0, -1.0};
       return of(
           grad([&](auto x) { return grad([&](auto const& y) { return sum(x * y * y + sin(x) * y); })(Y)[0]; })(1.5));
     }},
    {"tensor_inner_gradient_sum",
     [] {
       tensor<double> const Y{0.3, -0.2, 0.5};
       auto h = [&](auto x) { return sum(functional::jacrev([&](auto const& y) { return sum(exp(x * y)); }, Y)); };
       return of(derivative<1>(h, 0.9)[1]);
     }},
    {"tensor_outer_scalar_inner",
     [] {
       tensor<double> const X0{0.4, -0.3, 1.1};
       auto inner = [](auto const& X) {
         return grad([&](auto y) { return sum(X * X) * y * y + sum(sin(X)) * y; })(1.1);
       };
       auto const g = grad([&](auto const& X) {
         auto const in = inner(X);
         return in * in;
       })(X0);
       return values{primal(inner(X0)), g[0], g[1], g[2]};
     }},
    {"hessian_entry_inside_grad",
     [] {
       auto h = [](auto x) {
         auto const H =
             functional::hessian([&](auto const& y) { return eval(x * y[0] * y[0] * y[1] + sin(x) * y[1] * y[1]); },
                                 tensor<double>{1.0, 2.0});
         return H.data()[3];
       };
       return of(grad(h)(0.6));
     }},
    {"hvp_inside_grad",
     [] {
       auto h = [](auto x) {
         auto const hv =
             functional::hvp([&](auto const& y) { return eval(exp(x * y[0]) * y[1] + x * x * y[0] * y[1] * y[1]); },
                             tensor<double>{0.5, -0.4}, tensor<double>{1.0, 2.0});
         return sum(hv.second);
       };
       return of(grad(h)(0.8));
     }},
    {"maml_two_layer",
     [] {
       std::vector<double> const theta0{0.3, -0.5, 0.8, 0.2, 0.1, -0.1, 0.7, -0.6};
       std::array<double, 2> const x1{0.5, -1.0}, x2{-0.3, 0.8};
       double const y1 = 0.4, y2 = -0.2, alpha = 0.1;
       auto outer = [&](auto const& theta) {
         auto inner = [&](auto const& t) {
           auto const r = eval(maml_net(t, x1) - y1);
           return r * r;
         };
         auto const g = gradient(inner, theta);  // differentiable in theta
         std::vector<std::remove_cvref_t<decltype(theta[0])>> theta1;
         for (std::size_t i = 0; i < theta.size(); ++i) theta1.push_back(eval(theta[i] - alpha * g[i]));
         auto const r = eval(maml_net(theta1, x2) - y2);
         return r * r;
       };
       auto const [value, meta] = value_and_gradient(outer, std::span<double const>(theta0));
       values out{value};
       out.insert(out.end(), meta.begin(), meta.end());
       return out;
     }},
    {"pinn_residual_loss",
     [] {
       std::vector<double> const theta0{0.9, -0.6, 1.2, 0.1, 0.3, -0.2, 0.8, 0.5, -0.7};
       std::vector<double> const xs{0.1, 0.6, 1.1, 1.7};
       auto loss = [&](auto const& theta) {
         using S = std::remove_cvref_t<decltype(theta[0])>;
         S l = 0.0 * theta[0];
         for (double const xi : xs) {
           auto const uxx = derivative<2>([&](auto x) { return pinn_u(theta, x); }, xi)[2];
           l = l + (uxx - std::sin(xi)) * (uxx - std::sin(xi));
         }
         return l;
       };
       auto const [value, g] = value_and_gradient(loss, std::span<double const>(theta0));
       values out{value};
       out.insert(out.end(), g.begin(), g.end());
       return out;
     }},
};

nlohmann::json const& nested_reference() {
  static nlohmann::json const j = adx_test::read_reference("nested_closures.json");
  return j;
}

}  // namespace

TEST_CASE("nested closures against PyTorch: every case of nested_closures.json, computed by adx") {
  auto const& ref = nested_reference()["cases"];
  CHECK(ref.size() >= 20);
  for (auto const& item : ref.items()) {  // no structured binding: clang 14 cannot capture one
    std::string const name = item.key();
    nlohmann::json const& want = item.value();
    INFO("case ", name);
    auto const it = cases.find(name);
    REQUIRE_MESSAGE(it != cases.end(), "no adx computation for the reference case " << name);
    values const got = it->second();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("output ", i, ": adx ", got[i], ", torch ", want[i].get<double>());
      CHECK(close(got[i], want[i].get<double>(), 1e-12, 1e-13));
    }
  }
  CHECK(cases.size() == ref.size());  // no adx case without its reference
}
