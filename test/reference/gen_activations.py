"""Reference values of the activation functions (include/adx/rules/activation.hpp), computed
with PyTorch autograd: for each function and point the value, the first derivative and the
second (torch.autograd.grad with create_graph=True), in float64. test/rules/test_activations.cpp
compares adx's scalar modes, nested modes and tensors with them. Run from this folder:

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
}

POINTS = [-1000.0, -40.0, -20.5, -20.0, -5.0, -1.0, -0.5, -1e-8, -0.0, 0.0, 1e-8, 1e-300, 0.2, 0.5, 0.7, 1.0,
          1.2, 2.0, 5.9, 6.0, 6.5, 19.9, 20.0, 20.5, 40.0, 1000.0, math.nan]


def number(v):
    """JSON has no inf or NaN: they are written as strings."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def main():
    cases = []
    for name, f in FUNCTIONS.items():
        for x0 in POINTS:
            x = torch.tensor(x0, requires_grad=True)
            y = f(x)
            (d1,) = torch.autograd.grad(y, x, create_graph=True)
            d2 = torch.autograd.grad(d1, x)[0] if d1.requires_grad else torch.tensor(0.0)
            cases.append({"function": name, "x": number(x0), "value": number(y), "d1": number(d1), "d2": number(d2)})
    json.dump({"oracle": f"torch {torch.__version__}, float64", "generator": "gen_activations.py", "cases": cases},
              fp=__import__("sys").stdout, indent=1)


if __name__ == "__main__":
    main()
