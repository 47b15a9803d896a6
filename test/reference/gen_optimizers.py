"""Traces of torch.optim for the optimisers of include/adx/nn/optim.hpp, in float64: for each
case, 20 steps of training a small linear model, with the gradients torch's backward gave
before each step (before clipping) and the parameters after it, the learning rate after the
scheduler's step and the clipped total norm where the case has them, and the optimiser's state
at the end. test/nn/test_optim.cpp replays the gradients into adx's optimisers (the update
formulas alone) and also trains the same model with adx's own gradients. Run from this folder:

    /usr/bin/python3 gen_optimizers.py > optimizers.json

Debian's python3-torch (1.13) is the oracle. Every optimiser runs with foreach=False, the
per-parameter formulas of torch.optim's documentation.
"""
import json
import math

import torch

torch.set_default_dtype(torch.float64)

STEPS = 20

# The model: pred = x w^T + b, loss = mean((pred - y)^2) + 0.05 sum(w^4)
X = [[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0], [1.0, 1.0]]
Y = [[1.0, 0.0, -1.0], [0.5, 2.0, 0.0], [-1.0, 1.0, 1.5], [2.0, -0.5, 0.25]]
W0 = [[0.3, -0.2], [0.1, 0.4], [-0.5, 0.25]]
B0 = [0.05, -0.1, 0.2]


def loss_of(w, b):
    x = torch.tensor(X)
    y = torch.tensor(Y)
    d = x @ w.T + b - y
    return (d * d).mean() + 0.05 * (w * w * w * w).sum()


# name: (optimiser, its arguments, scheduler or None, clip (max_norm, norm_type) or None,
#        steps at which b has no gradient)
CASES = {
    "sgd": ("SGD", {"lr": 0.1}, None, None, []),
    "sgd_momentum": ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1}, None, None, []),
    "sgd_nesterov_wd": ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01}, None, None,
                        [3, 4]),
    "sgd_maximize": ("SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}, None, None, []),
    "adam": ("Adam", {"lr": 0.05}, None, None, []),
    "adam_wd_amsgrad": ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1,
                                 "amsgrad": True}, None, None, [5]),
    "adamw": ("AdamW", {"lr": 0.05}, None, None, []),
    "adamw_amsgrad": ("AdamW", {"lr": 0.02, "weight_decay": 0.2, "amsgrad": True, "maximize": True}, None, None, []),
    "rmsprop": ("RMSprop", {"lr": 0.01}, None, None, []),
    "rmsprop_centered": ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True,
                                     "weight_decay": 0.05}, None, None, [2]),
    "sgd_step_lr": ("SGD", {"lr": 0.1, "momentum": 0.9}, ("StepLR", {"step_size": 3, "gamma": 0.5}), None, []),
    "adam_cosine": ("Adam", {"lr": 0.05}, ("CosineAnnealingLR", {"T_max": 6, "eta_min": 0.001}), None, []),
    "sgd_clip_2": ("SGD", {"lr": 0.1}, None, (0.5, 2.0), []),
    "adam_clip_inf": ("Adam", {"lr": 0.05}, None, (0.3, math.inf), []),
}

STATE_KEYS = ["momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "square_avg", "grad_avg", "step"]


def flat(t):
    return [float(v) for v in t.detach().reshape(-1)]


def run(kind, args, sched, clip, no_grad_b):
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    opt = getattr(torch.optim, kind)([w, b], foreach=False, **args)
    scheduler = getattr(torch.optim.lr_scheduler, sched[0])(opt, **sched[1]) if sched else None
    steps = []
    for k in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(w, b)
        loss.backward()
        if k in no_grad_b:
            b.grad = None
        step = {"loss": float(loss), "grads": [flat(w.grad), flat(b.grad) if b.grad is not None else None]}
        if clip:
            norm = torch.nn.utils.clip_grad_norm_([w, b], clip[0], norm_type=clip[1])
            step["total_norm"] = float(norm)
        opt.step()
        if scheduler:
            scheduler.step()
            step["lr"] = opt.param_groups[0]["lr"]
        step["params"] = [flat(w), flat(b)]
        steps.append(step)
    state = []
    for p in (w, b):
        s = opt.state[p]
        state.append({key: (float(s[key]) if key == "step" else flat(s[key])) for key in STATE_KEYS
                      if key in s and s[key] is not None})
    case = {"optimizer": kind, "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in args.items()},
            "steps": steps, "state": state}
    if sched:
        case["scheduler"] = {"kind": sched[0], **sched[1]}
    if clip:
        case["clip"] = {"max_norm": clip[0], "norm_type": "inf" if math.isinf(clip[1]) else clip[1]}
    if no_grad_b:
        case["no_grad_b"] = no_grad_b
    return case


def main():
    out = {
        "generator": "gen_optimizers.py",
        "torch": torch.__version__,
        "model": {"x": X, "y": Y, "w": W0, "b": B0,
                  "loss": "mean((x w^T + b - y)^2) + 0.05 sum(w^4)"},
        "cases": {name: run(*spec) for name, spec in CASES.items()},
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
