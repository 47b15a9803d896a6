"""Reference values for transforms nested through closures, computed with PyTorch autograd.

Each case nests torch.autograd.grad(..., create_graph=True) inside functions that capture the
outer call's variables, in float64, and records the values adx must give
(test/api/test_nested_reference.cpp computes each case by its name). Run from this folder:

    /usr/bin/python3 gen_nested_closures.py > nested_closures.json

Debian's python3-torch (1.13) is the oracle.
"""
import json
import math

import torch

torch.set_default_dtype(torch.float64)


def point(v):
    """A point a transform differentiates at: a new leaf for a number, the value itself (its
    dependence on the outer variables kept) for a tensor that requires grad."""
    if isinstance(v, torch.Tensor) and v.requires_grad:
        return v
    return torch.tensor(float(v), requires_grad=True)


def grad(f):
    """jax.grad-like: the derivative of a scalar function, differentiable (create_graph)."""
    def g(v):
        y = point(v)
        out = f(y)
        (d,) = torch.autograd.grad(out, y, create_graph=True)
        return d
    return g


def grad_vec(f, x):
    """The gradient of f at a vector x (a new leaf unless x requires grad), differentiable."""
    y = x if x.requires_grad else x.detach().clone().requires_grad_(True)
    (d,) = torch.autograd.grad(f(y), y, create_graph=True)
    return d


def num(t):
    return float(t.detach()) if isinstance(t, torch.Tensor) else float(t)


def nums(t):
    return [float(v) for v in t.detach().reshape(-1)]


cases = {}


def case(name):
    def register(fn):
        out = fn()
        cases[name] = out if isinstance(out, list) else [out]
        return fn
    return register


@case("grad_in_grad_x_y2")
def _():
    return num(grad(lambda x: grad(lambda y: x * y * y)(2.0))(1.5))


@case("x_times_grad_xy")
def _():
    return num(grad(lambda x: x * grad(lambda y: x * y)(1.0))(1.5))


@case("perturbation_confusion")
def _():
    return num(grad(lambda x: x * grad(lambda y: x + y)(1.0))(1.0))


@case("value_and_slope_of_captured_scale")
def _():
    h = lambda l: grad(lambda x: x * l)(2.0)
    lv = point(3.0)
    v = h(lv)
    return [num(v), num(torch.autograd.grad(v, lv)[0])]


@case("three_levels")
def _():
    return num(grad(lambda x: x * grad(lambda y: x * y * grad(lambda z: x + y + z)(1.0))(1.0))(1.0))


@case("point_depends_on_outer")
def _():
    return num(grad(lambda x: grad(lambda t: torch.sin(t))(x * x))(0.7))


@case("cube_at_twice_x")
def _():
    return num(grad(lambda x: grad(lambda t: t * t * t)(x + x))(0.5))


@case("exp_of_x_sin_y")
def _():
    return num(grad(lambda x: grad(lambda y: torch.exp(x * torch.sin(y)))(0.3))(0.8))


@case("log_of_mixed_square")
def _():
    return num(grad(lambda x: grad(lambda y: torch.log(1 + x * x * y * y))(1.2))(0.4))


@case("second_derivative_inside")
def _():
    return num(grad(lambda x: grad(grad(lambda y: torch.tanh(x * y)))(0.5))(0.9))


@case("third_order_nested")
def _():
    f = lambda t: torch.exp(torch.sin(t))
    return num(grad(lambda x: grad(lambda y: grad(lambda z: f(z) + 0 * (x + y))(y))(x))(0.4))


@case("reverse_over_forward_cube")
def _():
    return num(grad(lambda x: x * grad(lambda y: x * y * grad(lambda z: x * z + y)(1.0))(1.0))(1.3))


@case("mixed_third_order")
def _():
    g = lambda x, y, z: x * y * z * z + torch.exp(x * y) * z
    return num(grad(lambda x: grad(lambda y: grad(lambda z: g(x, y, z))(0.5))(0.6))(0.7))


@case("tensor_inner_gradient_element")
def _():
    Y = torch.tensor([2.0, -1.0])
    return num(grad(lambda x: grad_vec(lambda y: (x * y * y + torch.sin(x) * y).sum(), Y)[0])(1.5))


@case("tensor_inner_gradient_sum")
def _():
    Y = torch.tensor([0.3, -0.2, 0.5])
    return num(grad(lambda x: grad_vec(lambda y: torch.exp(x * y).sum(), Y).sum())(0.9))


@case("tensor_outer_scalar_inner")
def _():
    X = torch.tensor([0.4, -0.3, 1.1], requires_grad=True)
    inner = grad(lambda y: (X * X).sum() * y * y + torch.sin(X).sum() * y)(1.1)
    (g,) = torch.autograd.grad(inner * inner, X)
    return [num(inner)] + nums(g)


@case("hessian_entry_inside_grad")
def _():
    def h(x):
        Y = torch.tensor([1.0, 2.0], requires_grad=True)
        g = lambda y: x * y[0] * y[0] * y[1] + torch.sin(x) * y[1] * y[1]
        (d,) = torch.autograd.grad(g(Y), Y, create_graph=True)
        (d2,) = torch.autograd.grad(d[1], Y, create_graph=True)
        return d2[1]
    return num(grad(h)(0.6))


@case("hvp_inside_grad")
def _():
    def h(x):
        Y = torch.tensor([0.5, -0.4], requires_grad=True)
        v = torch.tensor([1.0, 2.0])
        g = lambda y: torch.exp(x * y[0]) * y[1] + x * x * y[0] * y[1] * y[1]
        (d,) = torch.autograd.grad(g(Y), Y, create_graph=True)
        (hv,) = torch.autograd.grad((d * v).sum(), Y, create_graph=True)
        return hv.sum()
    return num(grad(h)(0.8))


MAML = dict(theta=[0.3, -0.5, 0.8, 0.2, 0.1, -0.1, 0.7, -0.6], x1=[0.5, -1.0], y1=0.4,
            x2=[-0.3, 0.8], y2=-0.2, alpha=0.1)


def maml_net(theta, x):
    """A 2-layer network 2 -> 2 -> 1: W1 = theta[0:4] (rows), b1 = theta[4:6], w2 = theta[6:8]."""
    W1 = theta[0:4].reshape(2, 2)
    return (theta[6:8] * torch.tanh(W1 @ x + theta[4:6])).sum()


@case("maml_two_layer")
def _():
    p = MAML
    x1, x2 = torch.tensor(p["x1"]), torch.tensor(p["x2"])
    theta = torch.tensor(p["theta"], requires_grad=True)
    inner = lambda t: (maml_net(t, x1) - p["y1"]) ** 2
    g = grad_vec(inner, theta)
    theta1 = theta - p["alpha"] * g
    outer = (maml_net(theta1, x2) - p["y2"]) ** 2
    (meta,) = torch.autograd.grad(outer, theta)
    return [num(outer)] + nums(meta)


PINN = dict(theta=[0.9, -0.6, 1.2, 0.1, 0.3, -0.2, 0.8, 0.5, -0.7], xs=[0.1, 0.6, 1.1, 1.7])


def pinn_u(theta, x):
    """u(x) = sum_j w2_j tanh(w1_j x + b1_j), three hidden units: w1, b1, w2 = theta[0:3], [3:6], [6:9]."""
    return (theta[6:9] * torch.tanh(theta[0:3] * x + theta[3:6])).sum()


@case("pinn_residual_loss")
def _():
    theta = torch.tensor(PINN["theta"], requires_grad=True)
    loss = 0
    for xi in PINN["xs"]:
        uxx = grad(grad(lambda x: pinn_u(theta, x)))(xi)
        loss = loss + (uxx - math.sin(xi)) ** 2
    (g,) = torch.autograd.grad(loss, theta)
    return [num(loss)] + nums(g)


print(json.dumps({"generator": "gen_nested_closures.py", "torch": torch.__version__, "cases": cases}, indent=1))
