"""Reference values of the indexing and scan operations (include/adx/tensor/indexing.hpp and
scans.hpp), computed with PyTorch autograd in float64. For each case: the input x, the
operation's output, the weights w of the scalar L = sum(w * op(x)), the gradient of L in x, a
direction v and the Hessian-vector product H v of L (zero for the operations that only pick
elements). Integer outputs (indices) are given as such. test/tensor/test_indexing.cpp compares
adx's values, reverse, forward and forward-over-reverse derivatives with them. Run from this
folder:

    /usr/bin/python3 gen_indexing.py > indexing.json

Debian's python3-torch (1.13) is the oracle.
"""
import json
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261127)


def rand(*shape):
    return (torch.rand(*shape, generator=gen) * 4 - 2).round(decimals=3)


X34 = rand(3, 4)
X34_ZERO = X34.clone()
X34_ZERO[1, 2] = 0.0  # cumprod through a zero factor
X34_TIES = torch.tensor([[0.5, -1.0, 0.5, 2.0], [1.5, 1.5, -0.25, 1.5], [0.0, 3.0, -2.0, 3.0]])

# name: (x, op description for the test, torch function of x)
CASES = {
    "take": (X34, {"op": "take", "indices": [[0, 5, -1], [11, 5, 2]]},
             lambda x: torch.take(x, torch.tensor([[0, 5, -1], [11, 5, 2]]))),
    "index_select": (X34, {"op": "index_select", "axis": 1, "indices": [3, 0, 3]},
                     lambda x: torch.index_select(x, 1, torch.tensor([3, 0, 3]))),
    "gather_1": (X34, {"op": "gather", "axis": 1, "index": [[0, 0], [3, 1], [2, 2]]},
                 lambda x: torch.gather(x, 1, torch.tensor([[0, 0], [3, 1], [2, 2]]))),
    "gather_0": (X34, {"op": "gather", "axis": 0, "index": [[2, 0, 1, 1], [2, 2, 0, 1]]},
                 lambda x: torch.gather(x, 0, torch.tensor([[2, 0, 1, 1], [2, 2, 0, 1]]))),
    "scatter_add": (X34, {"op": "scatter_add", "axis": 1, "index": [[0, 0], [3, 1], [2, 0]]},
                    lambda x: torch.scatter_add(x, 1, torch.tensor([[0, 0], [3, 1], [2, 0]]), (x * x)[:, :2])),
    "masked_fill": (X34, {"op": "masked_fill", "mask": [[True, False, False, True]], "value": -2.0},
                    lambda x: x.masked_fill(torch.tensor([[True, False, False, True]]), -2.0)),
    "pad_constant": (X34, {"op": "pad", "pads": [1, 2, 0, 1], "mode": "constant", "value": 0.5},
                     lambda x: F.pad(x, (1, 2, 0, 1), mode="constant", value=0.5)),
    "pad_reflect": (X34, {"op": "pad", "pads": [2, 3], "mode": "reflect"},
                    lambda x: F.pad(x, (2, 3), mode="reflect")),
    "pad_replicate": (X34.reshape(1, 3, 4), {"op": "pad", "pads": [1, 1, 2, 0], "mode": "replicate"},
                      lambda x: F.pad(x, (1, 1, 2, 0), mode="replicate")),
    "sort_desc": (X34_TIES, {"op": "sort", "axis": 1, "descending": True},
                  lambda x: torch.sort(x, dim=1, descending=True, stable=True).values),
    "sort_axis0": (X34, {"op": "sort", "axis": 0, "descending": False},
                   lambda x: torch.sort(x, dim=0, stable=True).values),
    "topk_smallest": (X34, {"op": "topk", "k": 2, "axis": 0, "largest": False},
                      lambda x: torch.topk(x, 2, dim=0, largest=False).values),
    "topk_largest": (X34, {"op": "topk", "k": 3, "axis": 1, "largest": True},
                     lambda x: torch.topk(x, 3, dim=1, largest=True).values),
    "cumsum_0": (X34, {"op": "cumsum", "axis": 0}, lambda x: torch.cumsum(x, 0)),
    "cumprod_1": (X34_ZERO, {"op": "cumprod", "axis": 1}, lambda x: torch.cumprod(x, 1)),
    "cumprod_0": (X34, {"op": "cumprod", "axis": 0}, lambda x: torch.cumprod(x, 0)),
    "diff_2": (X34, {"op": "diff", "n": 2, "axis": 1}, lambda x: torch.diff(x, n=2, dim=1)),
    "diff_0": (X34, {"op": "diff", "n": 1, "axis": 0}, lambda x: torch.diff(x, n=1, dim=0)),
    "cross": (rand(2, 3), {"op": "cross", "axis": 1, "b": None}, None),
}


def tensor_json(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def main():
    cases = {}
    for name, (x0, desc, fn) in CASES.items():
        desc = dict(desc)
        if desc["op"] == "cross":
            b = rand(2, 3)
            desc["b"] = tensor_json(b)
            fn = lambda x, b=b: torch.linalg.cross(x, b * x, dim=1)  # noqa: E731 (b * x: nonlinear)
            desc["b_times_x"] = True
        x = x0.clone().requires_grad_(True)
        out = fn(x)
        w = rand(*out.shape)
        v = rand(*x.shape)
        loss = (w * out).sum()
        (g,) = torch.autograd.grad(loss, x, create_graph=True)
        if g.requires_grad:
            (hv,) = torch.autograd.grad(g, x, v, allow_unused=True)
        else:  # the gradient does not depend on x: the operation only picks elements
            hv = None
        if hv is None:
            hv = torch.zeros_like(x)
        case = {"x": tensor_json(x0), "out": tensor_json(out.detach()), "w": tensor_json(w),
                "grad": tensor_json(g.detach()), "v": tensor_json(v), "hvp": tensor_json(hv.detach()), **desc}
        if desc["op"] in ("sort", "topk"):
            full = (torch.sort(x0, dim=desc["axis"], descending=desc["descending"], stable=True) if desc["op"] == "sort"
                    else torch.topk(x0, desc["k"], dim=desc["axis"], largest=desc["largest"]))
            case["picked"] = [int(i) for i in full.indices.reshape(-1)]
        cases[name] = case
    extra = {
        "argmax_1": [int(i) for i in torch.argmax(X34_TIES, dim=1)],
        "argmin_0": [int(i) for i in torch.argmin(X34_TIES, dim=0)],
        "argmax_flat": int(torch.argmax(X34_TIES)),
        "argmin_flat": int(torch.argmin(X34_TIES)),
        "ties": tensor_json(X34_TIES),
    }
    print(json.dumps({"generator": "gen_indexing.py", "torch": torch.__version__, "cases": cases, "arg": extra},
                     indent=1))


if __name__ == "__main__":
    main()
