"""Reference values of the activation functions (include/adx/rules/activation.hpp) and of erfinv,
xlogy and xlog1py (rules/special.hpp), computed with PyTorch autograd, in float64:

- "cases": functions of x alone; for each point the value, the first derivative and the second
  (torch.autograd.grad with create_graph=True);
- "parameterised": the functions with constant parameters (torch's float arguments), the same
  at several parameter sets ("params", in the order of the adx function's arguments);
- "binary": xlogy and xlog1py at a grid of (x, y): the value, both partials and the four second
  derivatives (dxy: d/dy of d/dx, dyx: d/dx of d/dy; a gradient torch leaves unconnected is 0).

test/rules/test_activations.cpp and test_activations_params.cpp compare adx's scalar modes,
nested modes and tensors with them. Run from this folder:

    /usr/bin/python3 gen_activations.py > activations.json

Debian's python3-torch (1.13) is the oracle.
"""
import json
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

FUNCTIONS = {
    "sigmoid": torch.sigmoid,
    "logsigmoid": F.logsigmoid,
    "softplus": F.softplus,  # beta 1, threshold 20
    "silu": F.silu,
    "mish": F.mish,
    "gelu": F.gelu,  # approximate='none'
    "logit": torch.logit,  # eps None
    "sinc": torch.sinc,
    "relu6": F.relu6,
    "selu": F.selu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "erfinv": torch.erfinv,
}

POINTS = [-1000.0, -40.0, -20.5, -20.0, -5.0, -1.0, -0.5, -1e-8, -0.0, 0.0, 1e-8, 1e-300, 0.2, 0.5, 0.7, 1.0,
          1.2, 2.0, 5.9, 6.0, 6.5, 19.9, 20.0, 20.5, 40.0, 1000.0, math.nan]
# where a function needs its own points: erfinv's domain [-1, 1] (0.7 is the end of its central
# range), gelu_tanh's saturation (beyond 10) and the overflow of x^2 in its derivative
EXTRA_POINTS = {
    "gelu_tanh": [-10.5, -8.0, 8.0, 10.0, 10.5, 1e200, -1e200],
}
OWN_POINTS = {
    "erfinv": [-2.0, -1.0000001, -1.0, -0.9999999, -0.999, -0.9, -0.7000001, -0.7, -0.5, -1e-8, -0.0, 0.0, 1e-300,
               1e-8, 0.2, 0.5, 0.7, 0.7000001, 0.8, 0.95, 0.999, 0.999999, 0.9999999999, 1.0, 1.0000001, 1.5,
               math.inf, math.nan],
}

PARAMETERISED = {
    "leaky_relu": (F.leaky_relu, [[0.01], [0.2], [3.0]]),  # negative_slope
    "elu": (F.elu, [[1.0], [0.5], [2.0]]),  # alpha
    "hardtanh": (F.hardtanh, [[-1.0, 1.0], [0.0, 6.0], [-2.5, 0.5], [1.0, -1.0]]),  # min_val, max_val
    "softplus": (F.softplus, [[1.0, 20.0], [2.0, 10.0], [0.5, 5.0]]),  # beta, threshold
}
# the kinks of every parameter set above (x = 0, hardtanh's bounds, softplus's thresholds / beta)
PARAMETERISED_POINTS = [-1000.0, -40.0, -20.5, -5.0, -2.5, -2.0, -1.0, -0.5, -1e-8, -0.0, 0.0, 1e-8, 1e-300, 0.2,
                        0.5, 1.0, 2.0, 4.9, 5.0, 5.1, 6.0, 9.9, 10.0, 10.1, 20.0, 20.5, 40.0, 1000.0, math.inf,
                        -math.inf, math.nan]

BINARY = {
    "xlogy": torch.xlogy,
    "xlog1py": torch.special.xlog1py,
}
BINARY_X = [0.0, -0.0, 1.0, -1.5, 2.0, 0.5, 1e-300, math.inf, math.nan]
BINARY_Y = [0.0, -0.0, 2.0, 0.5, 1e-300, -0.5, -1.0, -2.0, math.inf, math.nan]


def number(v):
    """JSON has no inf or NaN: they are written as strings."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def derivatives(f, x0):
    """f(x0), f'(x0) and f''(x0)."""
    x = torch.tensor(x0, requires_grad=True)
    y = f(x)
    (d1,) = torch.autograd.grad(y, x, create_graph=True)
    d2 = torch.autograd.grad(d1, x)[0] if d1.requires_grad else torch.tensor(0.0)
    return {"value": number(y), "d1": number(d1), "d2": number(d2)}


def binary_derivatives(f, x0, y0):
    """f(x0, y0), its two partials and its four second derivatives."""
    x = torch.tensor(x0, requires_grad=True)
    y = torch.tensor(y0, requires_grad=True)
    r = f(x, y)
    gx, gy = torch.autograd.grad(r, (x, y), create_graph=True)

    def second(g):
        if not g.requires_grad:
            return 0.0, 0.0
        a, b = torch.autograd.grad(g, (x, y), retain_graph=True, allow_unused=True)
        return (0.0 if a is None else a), (0.0 if b is None else b)

    dxx, dxy = second(gx)
    dyx, dyy = second(gy)
    return {"value": number(r), "dx": number(gx), "dy": number(gy), "dxx": number(dxx), "dxy": number(dxy),
            "dyx": number(dyx), "dyy": number(dyy)}


def main():
    cases = []
    for name, f in FUNCTIONS.items():
        for x0 in OWN_POINTS.get(name, POINTS + EXTRA_POINTS.get(name, [])):
            cases.append({"function": name, "x": number(x0), **derivatives(f, x0)})
    parameterised = []
    for name, (f, parameter_sets) in PARAMETERISED.items():
        for params in parameter_sets:
            for x0 in PARAMETERISED_POINTS:
                parameterised.append({"function": name, "params": params, "x": number(x0),
                                      **derivatives(lambda x: f(x, *params), x0)})
    binary = []
    for name, f in BINARY.items():
        for x0 in BINARY_X:
            for y0 in BINARY_Y:
                binary.append({"function": name, "x": number(x0), "y": number(y0), **binary_derivatives(f, x0, y0)})
    json.dump({"oracle": f"torch {torch.__version__}, float64", "generator": "gen_activations.py", "cases": cases,
               "parameterised": parameterised, "binary": binary}, fp=__import__("sys").stdout, indent=1)


if __name__ == "__main__":
    main()
