"""Reference values of the losses of include/adx/nn/loss.hpp, computed with PyTorch autograd in
float64: for each case the loss (a number, or the pointwise tensor for reduction "none"), the
gradient in the input x of L (the loss, or sum(w * loss) for "none"), and the Hessian-vector
product H v of L for a direction v. test/nn/test_loss.cpp compares adx's values, gradients and
second derivatives with them. Run from this folder:

    /usr/bin/python3 gen_losses.py > losses.json

Debian's python3-torch (1.13) is the oracle.
"""
import json

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(1127)


def rand(*shape, lo=-2.0, hi=2.0):
    return (torch.rand(*shape, generator=gen) * (hi - lo) + lo).round(decimals=3)


X = rand(4, 3)
T = rand(4, 3)
LABELS = [2, 0, 1, 2]
LABELS_IGNORED = [2, -100, 1, 0]
CLASS_W = torch.tensor([0.5, 2.0, 1.25])
PROBS = torch.softmax(rand(4, 3), 1).round(decimals=4)
PROBS_ZERO = PROBS.clone()
PROBS_ZERO[1] = torch.tensor([0.0, 0.25, 0.75])  # a zero probability: kl_div's xlogy
P01 = torch.sigmoid(rand(4, 3)).round(decimals=4)  # probabilities for binary_cross_entropy
T01 = torch.tensor([[1.0, 0.0, 0.3], [0.0, 1.0, 1.0], [0.5, 0.0, 1.0], [1.0, 0.8, 0.0]])
W_ELEM = rand(4, 3, lo=0.2, hi=1.5)
POS_W = torch.tensor([1.0, 3.0, 0.5])

# name: (loss, reduction, x, target, options for adx, torch function of x)
CASES = {
    "mse_mean": ("mse_loss", "mean", X, T, {}, lambda x: F.mse_loss(x, T)),
    "mse_sum": ("mse_loss", "sum", X, T, {}, lambda x: F.mse_loss(x, T, reduction="sum")),
    "mse_none": ("mse_loss", "none", X, T, {}, lambda x: F.mse_loss(x, T, reduction="none")),
    "l1_mean": ("l1_loss", "mean", X, T, {}, lambda x: F.l1_loss(x, T)),
    "huber_mean": ("huber_loss", "mean", X, T, {"delta": 0.5}, lambda x: F.huber_loss(x, T, delta=0.5)),
    "huber_none": ("huber_loss", "none", X, T, {"delta": 1.5}, lambda x: F.huber_loss(x, T, reduction="none",
                                                                                      delta=1.5)),
    "smooth_l1_mean": ("smooth_l1_loss", "mean", X, T, {"beta": 0.7}, lambda x: F.smooth_l1_loss(x, T, beta=0.7)),
    "smooth_l1_beta0": ("smooth_l1_loss", "sum", X, T, {"beta": 0.0},
                        lambda x: F.smooth_l1_loss(x, T, reduction="sum", beta=0.0)),
    "ce_labels": ("cross_entropy", "mean", X, LABELS, {}, lambda x: F.cross_entropy(x, torch.tensor(LABELS))),
    "ce_weight_ignore": ("cross_entropy", "mean", X, LABELS_IGNORED, {"weight": CLASS_W, "ignore_index": -100},
                         lambda x: F.cross_entropy(x, torch.tensor(LABELS_IGNORED), weight=CLASS_W)),
    "ce_smoothing": ("cross_entropy", "mean", X, LABELS, {"label_smoothing": 0.1},
                     lambda x: F.cross_entropy(x, torch.tensor(LABELS), label_smoothing=0.1)),
    "ce_smoothing_weight_ignore": ("cross_entropy", "mean", X, LABELS_IGNORED,
                                   {"weight": CLASS_W, "label_smoothing": 0.2},
                                   lambda x: F.cross_entropy(x, torch.tensor(LABELS_IGNORED), weight=CLASS_W,
                                                             label_smoothing=0.2)),
    "ce_smoothing_ignore": ("cross_entropy", "mean", X, LABELS_IGNORED, {"label_smoothing": 0.3},
                            lambda x: F.cross_entropy(x, torch.tensor(LABELS_IGNORED), label_smoothing=0.3)),
    "ce_none_smoothing": ("cross_entropy", "none", X, LABELS_IGNORED, {"label_smoothing": 0.1, "weight": CLASS_W},
                          lambda x: F.cross_entropy(x, torch.tensor(LABELS_IGNORED), reduction="none",
                                                    label_smoothing=0.1, weight=CLASS_W)),
    "ce_sum_weight": ("cross_entropy", "sum", X, LABELS, {"weight": CLASS_W},
                      lambda x: F.cross_entropy(x, torch.tensor(LABELS), reduction="sum", weight=CLASS_W)),
    "ce_probs": ("cross_entropy", "mean", X, PROBS, {}, lambda x: F.cross_entropy(x, PROBS)),
    "ce_probs_smoothing_weight": ("cross_entropy", "mean", X, PROBS, {"weight": CLASS_W, "label_smoothing": 0.15},
                                  lambda x: F.cross_entropy(x, PROBS, weight=CLASS_W, label_smoothing=0.15)),
    "ce_probs_none": ("cross_entropy", "none", X, PROBS, {}, lambda x: F.cross_entropy(x, PROBS, reduction="none")),
    "nll_weight": ("nll_loss", "mean", X, LABELS_IGNORED, {"weight": CLASS_W},
                   lambda x: F.nll_loss(x, torch.tensor(LABELS_IGNORED), weight=CLASS_W)),
    "nll_sum": ("nll_loss", "sum", X, LABELS, {}, lambda x: F.nll_loss(x, torch.tensor(LABELS), reduction="sum")),
    "bce_mean": ("binary_cross_entropy", "mean", P01, T01, {}, lambda p: F.binary_cross_entropy(p, T01)),
    "bce_weight_sum": ("binary_cross_entropy", "sum", P01, T01, {"weight": W_ELEM},
                       lambda p: F.binary_cross_entropy(p, T01, weight=W_ELEM, reduction="sum")),
    "bce_logits_mean": ("binary_cross_entropy_with_logits", "mean", X * 4, T01, {},
                        lambda x: F.binary_cross_entropy_with_logits(x, T01)),
    "bce_logits_pos_weight": ("binary_cross_entropy_with_logits", "none", X * 4, T01,
                              {"pos_weight": POS_W, "weight": W_ELEM},
                              lambda x: F.binary_cross_entropy_with_logits(x, T01, pos_weight=POS_W, weight=W_ELEM,
                                                                           reduction="none")),
    "kl_batchmean": ("kl_div", "batchmean", torch.log_softmax(X, 1), PROBS_ZERO, {},
                     lambda x: F.kl_div(x, PROBS_ZERO, reduction="batchmean")),
    "kl_sum": ("kl_div", "sum", torch.log_softmax(X, 1), PROBS, {}, lambda x: F.kl_div(x, PROBS, reduction="sum")),
    "kl_log_target": ("kl_div", "mean", torch.log_softmax(X, 1), torch.log(PROBS), {"log_target": True},
                      lambda x: F.kl_div(x, torch.log(PROBS), reduction="mean", log_target=True)),
}


def tensor_json(t):
    t = torch.as_tensor(t)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def main():
    cases = {}
    for name, (loss, red, x0, target, opts, fn) in CASES.items():
        x = x0.clone().requires_grad_(True)
        out = fn(x)
        w = rand(*out.shape) if red == "none" else None
        total = (w * out).sum() if red == "none" else out
        (g,) = torch.autograd.grad(total, x, create_graph=True)
        v = rand(*x.shape)
        # a gradient that does not depend on x (l1, nll) has no graph: H v is zero
        hv = torch.autograd.grad(g, x, v, allow_unused=True)[0] if g.requires_grad else None
        if hv is None:
            hv = torch.zeros_like(x)
        case = {"loss": loss, "reduction": red, "x": tensor_json(x0.detach()),
                "value": tensor_json(out.detach()), "grad": tensor_json(g.detach()), "v": tensor_json(v),
                "hvp": tensor_json(hv.detach())}
        if isinstance(target, list):
            case["labels"] = target
        else:
            case["target"] = tensor_json(target)
        if w is not None:
            case["w"] = tensor_json(w)
        case["options"] = {k: (tensor_json(v) if torch.is_tensor(v) else v) for k, v in opts.items()}
        cases[name] = case
    print(json.dumps({"generator": "gen_losses.py", "torch": torch.__version__, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
