#!/usr/bin/env python3
"""Turn tensor_bench's Google Benchmark JSON into a markdown report and a bar plot.

    tensor_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true \
        --benchmark_out=results/tensor.json --benchmark_out_format=json
    python3 report_tensor.py results/tensor.json --md results/tensor.md --png results/tensor.png

Takes the median (CPU time by default) of the repetitions of every `<problem>/<implementation>`
and reports, against the tensor targets:
  * mlp, matmul_grad, elementwise: adx / hand and adx / torch;
  * elementwise_fwd (forward only): adx / hand (the fused tensor<double> expression against a
    hand-written loop);
  * the tensor forms of lse, normal_lpdf, matvec_quad, advection: adx_tensor / hand (the
    problems.hpp hand gradient) and / double (the plain function), with the scalar tape
    (adx_reverse) beside them.
Needs only the standard library for the table; the plot needs matplotlib (skipped, with a
message, when it is missing).
"""
import argparse
import sys

from report import load, fmt_time  # same folder: medians from the JSON, time formatting

TENSOR = ["mlp_small", "mlp", "mlp_large", "matmul_grad_32", "matmul_grad_256", "matmul_grad_1024",
          "elementwise"]
SMALL = {"mlp_small", "matmul_grad_32"}  # "at least 3x faster than LibTorch on the small sizes"
FORMS = ["lse", "normal_lpdf", "matvec_quad", "advection"]

TARGET_HAND = 1.15      # adx <= 1.15x hand (mlp, matmul_grad, elementwise)
TARGET_TORCH_SMALL = 1 / 3  # adx <= torch / 3 on the small sizes, < torch elsewhere
TARGET_FWD = 1.1        # fused forward within 1.1x of a hand loop
TARGET_FORM = 2.0       # tensor forms within 2x of the hand gradient


def strip(run):
    return "/".join(part for part in run.split("/") if ":" not in part)


def fmt_ratio(x):
    if x is None:
        return "–"
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def mark(ok):
    if ok is None:
        return "–"
    return "met" if ok else "**missed**"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--md", default="tensor.md")
    ap.add_argument("--png", default="tensor.png")
    ap.add_argument("--time", choices=["cpu", "real"], default="cpu",
                    help="which Google Benchmark time to use (default: cpu_time, robust to a busy machine)")
    args = ap.parse_args()

    context, med, counters = load(args.json, "cpu_time" if args.time == "cpu" else "real_time")
    # Google Benchmark appends the options to the names ("mlp/adx/min_time:0.200"): drop them
    med = {strip(k): v for k, v in med.items()}
    counters = {strip(k): v for k, v in counters.items()}

    def t(p, i):
        return med.get(f"{p}/{i}")

    def ratio(p, a, b):
        x, y = t(p, a), t(p, b)
        return None if x is None or not y else x / y

    have_torch = any(r.endswith("/torch") for r in med)
    out = []
    out.append("# Tensor benchmarks\n")
    out.append(f"Medians of {args.time} time over the repetitions, from `{args.json.split('/')[-1]}`; "
               "the repetitions of all benchmarks run interleaved in random order "
               "(`--benchmark_enable_random_interleaving`), so that a noisy minute on this shared "
               "machine spreads over every implementation instead of landing on one. "
               "Every implementation computes the loss and its full gradient from scratch in each "
               "iteration and leaves the gradient in double buffers: `hand` by hand-written backprop "
               "(CBLAS `dgemm` and plain loops, preallocated buffers), `adx` with `tensor<var<double>>` "
               "(tape_scope, parameters made variables, forward, `backward`, every adjoint read with "
               "`adx::adjoints(x, span)`), `torch` with LibTorch's C++ API (leaf tensors, `backward`, gradients "
               "copied out). One thread everywhere (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1, "
               "`torch::set_num_threads(1)`). All results were checked against `hand` (relative error "
               "< 1e-8) before timing.\n")
    if context:
        keys = ["date", "host_name", "num_cpus", "mhz_per_cpu", "OPENBLAS_NUM_THREADS"]
        run = ", ".join(f"{k} {context[k]}" for k in keys if k in context)
        if context.get("load_avg"):
            run += ", load average at start " + " ".join(f"{x:.2f}" for x in context["load_avg"])
        out.append("Run: " + run + " (a shared 2-core machine: CPU times are used)\n")
    if not have_torch:
        out.append("LibTorch was not found at configure time: no torch column.\n")

    out.append("## mlp, matmul_grad, elementwise: gradient\n")
    out.append("Targets: adx ≤ 1.15x hand at every size; adx faster than LibTorch at every size, "
               "at least 3x faster on the small sizes (mlp_small, matmul_grad_32).\n")
    out.append("| problem | hand (µs) | adx (µs) | torch (µs) | adx/hand | adx/torch | ≤ 1.15x hand | vs torch |")
    out.append("|---|---:|---:|---:|---:|---:|---|---|")
    for p in TENSOR:
        if t(p, "hand") is None:
            continue
        rh, rt = ratio(p, "adx", "hand"), ratio(p, "adx", "torch")
        need = TARGET_TORCH_SMALL if p in SMALL else 1.0
        torch_ok = None if rt is None else rt <= need
        torch_note = mark(torch_ok)
        if rt is not None:
            torch_note += f" (needs ≤ {need:.2f})"
        out.append(f"| {p} | {fmt_time(t(p, 'hand'))} | {fmt_time(t(p, 'adx'))} | {fmt_time(t(p, 'torch'))} | "
                   f"{fmt_ratio(rh)} | {fmt_ratio(rt)} | {mark(None if rh is None else rh <= TARGET_HAND)} | "
                   f"{torch_note} |")
    out.append("")

    if any(t(p, "adx_parameter") is not None for p in TENSOR):
        out.append("### mlp on a model's parameters\n")
        out.append("`adx_parameter`: the same program with its weights held as four `adx::parameter`s made once "
                   "(outside the timed loop), against `adx` (blocks made from numbers in every iteration).\n")
        out.append("| problem | adx (µs) | adx_parameter (µs) | adx_parameter/adx | adx_parameter/hand |")
        out.append("|---|---:|---:|---:|---:|")
        for p in TENSOR:
            if t(p, "adx_parameter") is None:
                continue
            out.append(f"| {p} | {fmt_time(t(p, 'adx'))} | {fmt_time(t(p, 'adx_parameter'))} | "
                       f"{fmt_ratio(ratio(p, 'adx_parameter', 'adx'))} | {fmt_ratio(ratio(p, 'adx_parameter', 'hand'))} |")
        out.append("")

    p = "elementwise_fwd"
    if t(p, "hand") is not None:
        out.append("## elementwise_fwd: forward only, y = a * b + sin(c) / d, n = 10^6\n")
        out.append("`hand`: one loop into a preallocated output; `adx`: the fused `tensor<double>` expression "
                   "(allocates its result); `torch`: the same expression under `NoGradGuard`. "
                   "Target: adx within 1.1x of the hand loop.\n")
        out.append("| problem | hand (µs) | adx (µs) | torch (µs) | adx/hand | adx/torch | ≤ 1.1x hand |")
        out.append("|---|---:|---:|---:|---:|---:|---|")
        rh, rt = ratio(p, "adx", "hand"), ratio(p, "adx", "torch")
        out.append(f"| {p} | {fmt_time(t(p, 'hand'))} | {fmt_time(t(p, 'adx'))} | {fmt_time(t(p, 'torch'))} | "
                   f"{fmt_ratio(rh)} | {fmt_ratio(rt)} | {mark(None if rh is None else rh <= TARGET_FWD)} |")
        out.append("")

    out.append("## Tensor forms of the scalar problems\n")
    out.append("`double`: the problems.hpp function; `hand`: its hand-coded gradient; `adx_tensor`: the "
               "problem written with tensor operations on `tensor<var<double>>`; `adx_reverse`: the "
               "problems.hpp scalar template on `var<double>` (the scalar tape, as in scalar_bench); "
               "`torch`: the same tensor form in LibTorch (advection only). "
               "Target: adx_tensor ≤ 2.0x hand.\n")
    out.append("| problem | double (µs) | hand (µs) | adx_tensor (µs) | adx_reverse (µs) | torch (µs) | adx_tensor/hand | "
               "adx_tensor/double | adx_reverse/hand | ≤ 2.0x hand |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for p in FORMS:
        if t(p, "hand") is None:
            continue
        rh = ratio(p, "adx_tensor", "hand")
        out.append(f"| {p} | {fmt_time(t(p, 'double'))} | {fmt_time(t(p, 'hand'))} | "
                   f"{fmt_time(t(p, 'adx_tensor'))} | {fmt_time(t(p, 'adx_reverse'))} | {fmt_time(t(p, 'torch'))} | "
                   f"{fmt_ratio(rh)} | "
                   f"{fmt_ratio(ratio(p, 'adx_tensor', 'double'))} | {fmt_ratio(ratio(p, 'adx_reverse', 'hand'))} | "
                   f"{mark(None if rh is None else rh <= TARGET_FORM)} |")
    out.append("")

    out.append("## adx tape per recording\n")
    out.append("Counted by `tape<double>::stats()` around one recording of the adx program. Statements "
               "are tape entries: a scalar statement, a block of independent variables or a tensor node "
               "(each covers all its elements); operands are (index, partial) entries of the arena (a "
               "block or node has one header entry); arena bytes = 1 per statement + 12 per operand. Node "
               "bytes are what the nodes hold for the backward pass: per element and active operand an "
               "index and a partial (12 bytes), and a product's operand values.\n")
    out.append("| benchmark | statements | operands | arena bytes | nodes | node bytes |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for p in TENSOR + FORMS:
        for i in ("adx", "adx_tensor"):
            c = counters.get(f"{p}/{i}")
            if c and "statements" in c:
                out.append(f"| {p}/{i} | {c['statements']:.0f} | {c['operands']:.0f} | {c['tape_bytes']:.0f} | "
                           f"{c.get('nodes', 0):.0f} | {c.get('node_bytes', 0):.0f} |")
    out.append("")

    with open(args.md, "w") as f:
        f.write("\n".join(out))
    print(f"wrote {args.md}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not available: the table is written, the plot is skipped "
              "(install python3-matplotlib, or run this script with a Python that has it)", file=sys.stderr)
        return 0

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [8, 4]})
    left = [p for p in TENSOR + ["elementwise_fwd"] if t(p, "hand") is not None]
    series = [("adx", "adx / hand", "tab:blue")]
    if have_torch:
        series.append(("torch", "torch / hand", "tab:orange"))
    w = 0.8 / len(series)
    for k, (impl, label, color) in enumerate(series):
        xs = [j + (k - (len(series) - 1) / 2) * w for j, p in enumerate(left) if ratio(p, impl, "hand")]
        ys = [ratio(p, impl, "hand") for p in left if ratio(p, impl, "hand")]
        ax1.bar(xs, ys, w, label=label, color=color, edgecolor="black", linewidth=0.4)
    ax1.axhline(1.0, color="black", linewidth=0.8)
    ax1.axhline(TARGET_HAND, color="green", linestyle="--", linewidth=0.8, label="target 1.15x")
    ax1.set_yscale("log")
    ax1.set_xticks(range(len(left)))
    ax1.set_xticklabels(left, rotation=30, ha="right")
    ax1.set_ylabel("time / hand time (median, log scale)")
    ax1.set_title("gradient (elementwise_fwd: forward only)")
    ax1.grid(axis="y", which="both", alpha=0.3)
    ax1.set_ylim(top=ax1.get_ylim()[1] * 4)  # room for the legend above the bars
    ax1.legend(fontsize=8, loc="upper left", ncol=3)

    right = [p for p in FORMS if t(p, "hand") is not None]
    series2 = [("adx_tensor", "adx_tensor / hand", "tab:blue"), ("adx_reverse", "adx_reverse (scalar) / hand",
                                                                   "tab:gray")]
    w = 0.8 / len(series2)
    for k, (impl, label, color) in enumerate(series2):
        xs = [j + (k - 0.5) * w for j, p in enumerate(right) if ratio(p, impl, "hand")]
        ys = [ratio(p, impl, "hand") for p in right if ratio(p, impl, "hand")]
        ax2.bar(xs, ys, w, label=label, color=color, edgecolor="black", linewidth=0.4)
    ax2.axhline(1.0, color="black", linewidth=0.8)
    ax2.axhline(TARGET_FORM, color="green", linestyle="--", linewidth=0.8, label="target 2.0x")
    ax2.set_yscale("log")
    ax2.set_xticks(range(len(right)))
    ax2.set_xticklabels(right, rotation=30, ha="right")
    ax2.set_title("tensor forms of scalar problems")
    ax2.grid(axis="y", which="both", alpha=0.3)
    ax2.set_ylim(top=ax2.get_ylim()[1] * 4)
    ax2.legend(fontsize=8, loc="upper left")
    fig.suptitle("adx tensor benchmarks: time over the hand-written gradient (CPU time, medians)")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
