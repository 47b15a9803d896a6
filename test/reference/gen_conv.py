"""Reference values of convolution and pooling (include/adx/tensor/conv.hpp), computed with
PyTorch autograd in float64. For each case: the inputs, the output, and for
L = sum(w_out * tanh(op(x, weight, bias))) the gradients in x, the weight and the bias, and the
Hessian-vector products of L in x (direction v) and in the weight (direction vw), the second
derivatives a gradient penalty or a Hessian-vector product of a CNN's loss needs.
test/tensor/test_conv.cpp compares adx's with them. Run from this folder:

    /usr/bin/python3 gen_conv.py > conv.json

Debian's python3-torch (1.13) is the oracle.
"""
import json

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(271127)


def rand(*shape):
    return (torch.rand(*shape, generator=gen) * 2 - 1).round(decimals=3)


# name: (op, x shape, weight shape or kernel, bias?, options)
CASES = {
    "conv2d_groups": ("conv2d", (2, 4, 5, 6), (6, 2, 3, 2), True,
                      {"stride": [2, 1], "padding": [1, 0], "dilation": [1, 2], "groups": 2}),
    "conv2d_plain": ("conv2d", (1, 3, 4, 4), (2, 3, 2, 2), False,
                     {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1}),
    "conv1d": ("conv1d", (2, 3, 7), (4, 3, 3), True, {"stride": 2, "padding": 1, "dilation": 1, "groups": 1}),
    "conv1d_dilated_groups": ("conv1d", (1, 4, 9), (2, 2, 2), False,
                              {"stride": 1, "padding": 2, "dilation": 3, "groups": 2}),
    "max_pool2d": ("max_pool2d", (2, 3, 5, 5), [3, 2], False, {"stride": [2, 2], "padding": [1, 1], "dilation": [1, 1]}),
    "max_pool2d_dilated": ("max_pool2d", (1, 2, 6, 6), [2, 2], False,
                           {"stride": [1, 2], "padding": [0, 1], "dilation": [2, 1]}),
    "avg_pool2d_exclude_pad": ("avg_pool2d", (2, 2, 5, 6), [2, 3], False,
                               {"stride": [1, 2], "padding": [1, 1], "count_include_pad": False}),
    "avg_pool2d": ("avg_pool2d", (1, 3, 4, 4), [2, 2], False, {"stride": [2, 2], "padding": [0, 0],
                                                                 "count_include_pad": True}),
}


def run(op, x, weight, bias, o):
    if op == "conv2d":
        return F.conv2d(x, weight, bias, stride=o["stride"], padding=o["padding"], dilation=o["dilation"],
                        groups=o["groups"])
    if op == "conv1d":
        return F.conv1d(x, weight, bias, stride=o["stride"], padding=o["padding"], dilation=o["dilation"],
                        groups=o["groups"])
    if op == "max_pool2d":
        return F.max_pool2d(x, weight, stride=o["stride"], padding=o["padding"], dilation=o["dilation"])
    return F.avg_pool2d(x, weight, stride=o["stride"], padding=o["padding"], count_include_pad=o["count_include_pad"])


def tensor_json(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def main():
    cases = {}
    for name, (op, xs, ws, has_bias, o) in CASES.items():
        conv = op.startswith("conv")
        x = rand(*xs).requires_grad_(True)
        weight = rand(*ws).requires_grad_(True) if conv else ws
        bias = rand(ws[0]).requires_grad_(True) if has_bias else None
        out = run(op, x, weight, bias, o)
        w_out = rand(*out.shape)
        loss = (w_out * torch.tanh(out)).sum()
        params = [x] + ([weight] if conv else []) + ([bias] if has_bias else [])
        grads = torch.autograd.grad(loss, params, create_graph=True)
        v = rand(*xs)
        (hv_x,) = torch.autograd.grad(grads[0], x, v, retain_graph=True)
        case = {"op": op, "options": o, "x": tensor_json(x.detach()), "out": tensor_json(out.detach()),
                "w_out": tensor_json(w_out), "grad_x": tensor_json(grads[0].detach()), "v": tensor_json(v),
                "hvp_x": tensor_json(hv_x.detach())}
        if conv:
            vw = rand(*ws)
            (hv_w,) = torch.autograd.grad(grads[1], weight, vw, retain_graph=True)
            case.update({"weight": tensor_json(weight.detach()), "grad_weight": tensor_json(grads[1].detach()),
                         "vw": tensor_json(vw), "hvp_weight": tensor_json(hv_w.detach())})
        else:
            case["kernel"] = ws
        if has_bias:
            case.update({"bias": tensor_json(bias.detach()), "grad_bias": tensor_json(grads[2].detach())})
        cases[name] = case
    print(json.dumps({"generator": "gen_conv.py", "torch": torch.__version__, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
