// Test support: one function evaluated in every mode and nesting combination, so that every
// test compares forward = reverse = nested = finite differences without writing modes out.
#pragma once

#include <adx/adx.hpp>
#include <array>

namespace adx_test {

/// Derivatives 0..4 of a scalar function of one variable, as each mode computes them
/// (NaN where a mode does not reach that order).
struct unary_derivs {
  char const* mode;
  std::array<double, 5> d;
};

template <class F>
std::vector<unary_derivs> unary_all_modes(F const& f, double x0) {
  using namespace adx;
  constexpr double none = std::numeric_limits<double>::quiet_NaN();
  std::vector<unary_derivs> out;
  {  // plain value
    out.push_back({"double", {static_cast<double>(f(x0)), none, none, none, none}});
  }
  {  // forward, nested to 4 levels
    auto d = derivative<4>(f, x0);
    out.push_back({"dual^4", {d[0], d[1], d[2], d[3], d[4]}});
    auto d1 = derivative<1>(f, x0);
    out.push_back({"dual", {d1[0], d1[1], none, none, none}});
  }
  {  // reverse
    tape_scope<var<double>> s;
    var<double> x = x0;
    var<double> y = f(x);
    backward(y);
    out.push_back({"var", {y.value(), x.adjoint(), none, none, none}});
  }
  {  // reverse over reverse, three levels: the gradient of the gradient of the gradient
    tape_scope<var<var<var<double>>>> s;
    var<var<var<double>>> x = x0;
    var<var<var<double>>> y = f(x);
    backward(y);
    var<var<double>> g1 = x.adjoint();
    backward(g1);
    var<double> g2 = x.value().adjoint();
    backward(g2);
    double g3 = x.value().value().adjoint();
    out.push_back({"var^3", {primal(y), primal(g1), primal(g2), g3, none}});
  }
  {  // forward over reverse (Hessian-vector style)
    tape_scope<var<dual<double>>> s;
    var<dual<double>> x = dual<double>(x0, 1.0);
    var<dual<double>> y = f(x);
    backward(y);
    out.push_back({"var<dual>", {primal(y), x.adjoint().value(), x.adjoint().tangent(), none, none}});
  }
  {  // reverse over forward
    tape_scope<dual<var<double>>> s;
    dual<var<double>> x(var<double>(x0), 1.0);
    dual<var<double>> y = f(x);
    var<double> t = y.tangent();
    backward(t);
    out.push_back({"dual<var>", {primal(y), primal(t), x.value().adjoint(), none, none}});
  }
  {  // forward^2 over reverse: third derivative
    tape_scope<var<dual<dual<double>>>> s;
    var<dual<dual<double>>> x = detail::seed_all_levels<2>(x0);
    var<dual<dual<double>>> y = f(x);
    backward(y);
    auto g = x.adjoint();
    out.push_back({"var<dual<dual>>", {primal(y), primal(g), g.tangent().value(), g.tangent().tangent(), none}});
  }
  {  // four levels, mixed: reverse over reverse over forward over forward
    tape_scope<var<var<dual<dual<double>>>>> s;
    var<var<dual<dual<double>>>> x = var<dual<dual<double>>>(detail::seed_all_levels<2>(x0));
    var<var<dual<dual<double>>>> y = f(x);
    backward(y);
    var<dual<dual<double>>> g1 = x.adjoint();
    backward(g1);
    dual<dual<double>> g2 = x.value().adjoint();
    out.push_back(
        {"var<var<dual<dual>>>", {primal(y), primal(g1), primal(g2), g2.tangent().value(), g2.tangent().tangent()}});
  }
  return out;
}

/// Value, gradient and Hessian of a function of two variables, per mode.
struct binary_derivs {
  char const* mode;
  double v, gx, gy, hxx, hxy, hyy;
};

template <class F>
std::vector<binary_derivs> binary_all_modes(F const& f, double x0, double y0) {
  using namespace adx;
  constexpr double none = std::numeric_limits<double>::quiet_NaN();
  std::vector<binary_derivs> out;
  {  // forward: a partial keeps the other input a plain number (see docs: 0 * inf in forward mode)
    using D2 = dual<dual<double>>;
    auto const sx = detail::seed_all_levels<2>(x0), sy = detail::seed_all_levels<2>(y0);
    D2 rx = f(sx, y0), ry = f(x0, sy);
    D2 rxy = f(D2(dual<double>(x0, 1.0)), D2(dual<double>(y0, 0.0), dual<double>(1.0, 0.0)));
    out.push_back({"dual<dual>", primal(rx), rx.tangent().value(), ry.tangent().value(), rx.tangent().tangent(),
                   rxy.tangent().tangent(), ry.tangent().tangent()});
  }
  {
    tape_scope<var<double>> s;
    var<double> x = x0, y = y0;
    var<double> r = f(x, y);
    backward(r);
    out.push_back({"var", r.value(), x.adjoint(), y.adjoint(), none, none, none});
  }
  {
    tape_scope<var<var<double>>> s;
    var<var<double>> x = x0, y = y0;
    var<var<double>> r = f(x, y);
    backward(r);
    var<double> gx = x.adjoint(), gy = y.adjoint();
    backward(gx);
    double hxx = x.value().adjoint(), hxy = y.value().adjoint();
    backward(gy);
    double hyy = y.value().adjoint();
    out.push_back({"var<var>", primal(r), primal(gx), primal(gy), hxx, hxy, hyy});
  }
  {
    tape_scope<var<dual<double>>> s;
    var<dual<double>> x = dual<double>(x0, 1.0), y = dual<double>(y0, 0.0);
    var<dual<double>> r = f(x, y);
    backward(r);
    double gx = x.adjoint().value(), gy = y.adjoint().value(), hxx = x.adjoint().tangent(), hxy = y.adjoint().tangent();
    tape_scope<var<dual<double>>> s2;
    var<dual<double>> xb = dual<double>(x0, 0.0), yb = dual<double>(y0, 1.0);
    var<dual<double>> rb = f(xb, yb);
    backward(rb);
    out.push_back({"var<dual>", primal(r), gx, gy, hxx, hxy, yb.adjoint().tangent()});
  }
  return out;
}

}  // namespace adx_test
