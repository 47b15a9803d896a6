#!/usr/bin/env python3
"""Writes the translation units of adx's compile-time benchmark into a directory.

Each unit is what a user writes: one function taking a derivative of one long expression,
written as one assignment. The expression has `terms` terms over 8 inputs, cycling through
sin, exp, log, sqrt, cos and tanh, with a division every 7th term.
"""
import sys
from pathlib import Path

FUNCS = ["sin", "exp", "log", "sqrt", "cos", "tanh"]


def term(k, x):
    """The k-th term over the inputs named x[0..7] (all positive, so log and sqrt are defined)."""
    a, b = x[k % 8], x[(3 * k + 1) % 8]
    f = FUNCS[k % len(FUNCS)]
    inner = f"{a} * {b} + {k % 5 + 1}.0" if f in ("log", "sqrt") else f"{a} * {b}"
    if k % 7 == 6:
        return f"{f}({inner}) / ({x[(k + 2) % 8]} + 2.0)"
    return f"{0.5 + 0.1 * (k % 4):.1f} * {f}({inner})"


def expression(terms, x):
    return "\n      + ".join(term(k, x) for k in range(terms))


X = [f"x[{i}]" for i in range(8)]


def reverse(terms):
    return f"""#include <adx/reverse.hpp>
#include <array>

// The gradient of one {terms}-term expression of 8 inputs, reverse mode.
std::array<double, 8> gradient(std::array<double, 8> const& at) {{
  using adx::var;
  adx::tape_scope<var<double>> scope;
  std::array<var<double>, 8> x;
  for (int i = 0; i < 8; ++i) x[i] = var<double>(at[i]);
  var<double> y = {expression(terms, X)};
  adx::backward(y);
  std::array<double, 8> g;
  for (int i = 0; i < 8; ++i) g[i] = x[i].adjoint();
  return g;
}}
"""


def forward(terms):
    return f"""#include <adx/forward.hpp>
#include <array>

// One directional derivative of one {terms}-term expression of 8 inputs, forward mode.
double directional(std::array<double, 8> const& at, std::array<double, 8> const& v) {{
  using adx::dual;
  std::array<dual<double>, 8> x;
  for (int i = 0; i < 8; ++i) x[i] = dual<double>(at[i], v[i]);
  dual<double> y = {expression(terms, X)};
  return y.tangent();
}}
"""


def nested(terms):
    return f"""#include <adx/forward.hpp>
#include <adx/reverse.hpp>
#include <array>

// A Hessian-vector product of one {terms}-term expression of 8 inputs: forward over reverse.
std::array<double, 8> hvp(std::array<double, 8> const& at, std::array<double, 8> const& v) {{
  using adx::dual;
  using adx::var;
  using S = dual<double>;
  adx::tape_scope<var<S>> scope;
  std::array<var<S>, 8> x;
  for (int i = 0; i < 8; ++i) x[i] = var<S>(S(at[i], v[i]));
  var<S> y = {expression(terms, X)};
  adx::backward(y);
  std::array<double, 8> h;
  for (int i = 0; i < 8; ++i) h[i] = x[i].adjoint().tangent();
  return h;
}}
"""


def nested4(terms):
    return f"""#include <adx/adx.hpp>
#include <vector>

// Fourth derivatives of one {terms}-term expression: grad over grad over grad over a forward derivative.
double fourth(double at) {{
  auto f = [](auto t) {{
    std::array<decltype(t), 8> x;
    for (int i = 0; i < 8; ++i) x[i] = t * (0.5 + 0.1 * i);
    return adx::eval({expression(terms, X)});
  }};
  auto d1 = [&](auto t) {{ return adx::derivative<1>(f, t)[1]; }};
  auto d2 = [&](auto t) {{ return adx::grad(d1)(t); }};
  auto d3 = [&](auto t) {{ return adx::grad(d2)(t); }};
  return adx::grad(d3)(at);
}}
"""


def tensor():
    return """#include <adx/adx.hpp>

// The gradient of an elementwise tensor expression with a reduction and a product.
adx::tensor<double> gradient(adx::tensor<double> const& a, adx::tensor<double> const& w) {
  auto loss = [&](auto const& x) {
    auto h = adx::tanh(adx::matmul(w, x));
    return adx::sum(adx::exp(-h * h) + 0.5 * adx::log(1.0 + x * x) + adx::sqrt(h * h + 1.0) / (x * x + 2.0));
  };
  return adx::grad(loss)(a);
}
"""


def header(name):
    return f"#include <adx/{name}.hpp>\n"


def eigen():
    return """#include <Eigen/Dense>

// The reference: one matrix product with Eigen.
Eigen::MatrixXd product(Eigen::MatrixXd const& a, Eigen::MatrixXd const& b) { return a * b; }
"""


UNITS = {
    "eigen_product": eigen(),
    "include_reverse": header("reverse"),
    "include_forward": header("forward"),
    "include_adx": header("adx"),
    "reverse_50": reverse(50),
    "reverse_100": reverse(100),
    "forward_50": forward(50),
    "nested_50": nested(50),
    "tensor": tensor(),
    "nested4_20": nested4(20),
}


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build-compile")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in UNITS.items():
        (out / f"{name}.cpp").write_text(text)
    print("\n".join(UNITS))


if __name__ == "__main__":
    main()
