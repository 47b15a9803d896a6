#!/usr/bin/env python3
"""Turn scalar_bench's Google Benchmark JSON into a markdown table and a bar plot.

    scalar_bench --benchmark_format=json --benchmark_repetitions=7 \
        --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true > results/scalar.json
    python3 report.py results/scalar.json --md results/scalar.md --png results/scalar.png

Takes the median of the repetitions of every `<problem>/<implementation>` benchmark and divides
it by the median of `<problem>/double` from the same run (the ratio is what travels between
machines). Needs only the standard library; the plot needs matplotlib and is skipped, with a
message, when it is missing.
"""
import argparse
import json
import math
import sys

PROBLEMS = ["lse", "normal_lpdf", "prod_sum", "matvec_quad", "advection", "det_minor"]
# Column order; implementations not listed here follow in the order they appear.
IMPLS = ["double", "hand", "adx_reverse", "adx_forward", "adolc_reverse", "sacado_rad",
         "sacado_sfad", "eigen_autodiff", "ceres_jet"]
REVERSE = {"hand", "adx_reverse", "adolc_reverse", "sacado_rad"}

# The performance targets (ratio to double) and Adept-2's tape size for one recording (bytes).
TARGET_REVERSE = {"lse": 1.70, "normal_lpdf": 21.8, "prod_sum": 2.28, "matvec_quad": 15.2,
                  "advection": 54.6, "det_minor": 86.8}
TARGET_FORWARD = {"lse": 0.97, "normal_lpdf": 1.00, "prod_sum": 1.42, "matvec_quad": 1.55,
                  "advection": 1.94, "det_minor": 5.14}
ADEPT_TAPE = {"lse": 40e3, "normal_lpdf": 888e3, "prod_sum": 72e3, "matvec_quad": 342e3,
              "advection": 2.0e6}

UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def load(path, time_key):
    with open(path) as f:
        data = json.load(f)
    medians, counters = {}, {}
    singles = {}
    for b in data["benchmarks"]:
        run = b.get("run_name", b["name"])
        if "/" not in run:
            continue
        t = b[time_key] * UNIT_TO_US[b.get("time_unit", "ns")]
        agg = b.get("aggregate_name")
        if agg == "median":
            medians[run] = t
            counters[run] = b
        elif agg is None:  # a run without repetitions: take the median of what is there
            singles.setdefault(run, []).append(t)
            counters.setdefault(run, b)
    for run, ts in singles.items():
        if run not in medians:
            ts = sorted(ts)
            medians[run] = ts[len(ts) // 2] if len(ts) % 2 else 0.5 * (ts[len(ts) // 2 - 1] + ts[len(ts) // 2])
    return data.get("context", {}), medians, counters


def split(run):
    problem, impl = run.split("/", 1)
    return problem, impl


def fmt_ratio(x):
    if x is None:
        return "–"
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def fmt_time(us):
    if us is None:
        return "–"
    if us < 10:
        return f"{us:.3f}"
    if us < 1000:
        return f"{us:.1f}"
    return f"{us:.0f}"


def fmt_bytes(b):
    if b >= 1e6:
        return f"{b / 1e6:.2f} MB"
    return f"{b / 1e3:.1f} KB"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--md", default="scalar.md")
    ap.add_argument("--png", default="scalar.png")
    ap.add_argument("--time", choices=["cpu", "real"], default="cpu",
                    help="which Google Benchmark time to use (default: cpu_time, robust to a busy machine)")
    args = ap.parse_args()

    context, med, counters = load(args.json, "cpu_time" if args.time == "cpu" else "real_time")
    problems = [p for p in PROBLEMS if f"{p}/double" in med]
    problems += sorted({split(r)[0] for r in med} - set(problems))
    impls = [i for i in IMPLS if any(f"{p}/{i}" in med for p in problems)]
    for r in med:
        if split(r)[1] not in impls:
            impls.append(split(r)[1])

    def ratio(p, i):
        t, d = med.get(f"{p}/{i}"), med.get(f"{p}/double")
        return None if t is None or not d else t / d

    out = []
    out.append("# Scalar benchmarks: time over the plain double function\n")
    out.append(f"Medians of {args.time} time over the repetitions, from `{args.json.split('/')[-1]}`; "
               "each ratio is the implementation's median over the same problem's `double` median "
               "in the same run; the repetitions of all benchmarks run interleaved in random order "
               "(`--benchmark_enable_random_interleaving`), so that noise spreads over every "
               "implementation. Reverse implementations compute the full gradient from scratch "
               "(record, sweep, read every adjoint); forward ones one tangent along the spec's v.\n")
    if context:
        keys = ["date", "host_name", "num_cpus", "mhz_per_cpu", "library_build_type"]
        out.append("Run: " + ", ".join(f"{k} {context[k]}" for k in keys if k in context) + "\n")

    out.append("## Ratios to double\n")
    out.append("| problem | " + " | ".join(impls[1:]) + " |")
    out.append("|---|" + "---:|" * (len(impls) - 1))
    for p in problems:
        out.append(f"| {p} | " + " | ".join(fmt_ratio(ratio(p, i)) for i in impls[1:]) + " |")
    out.append("")

    out.append("## Medians (µs)\n")
    out.append("| problem | " + " | ".join(impls) + " |")
    out.append("|---|" + "---:|" * len(impls))
    for p in problems:
        out.append(f"| {p} | " + " | ".join(fmt_time(med.get(f"{p}/{i}")) for i in impls) + " |")
    out.append("")

    out.append("## adx against the issue's targets\n")
    out.append("| problem | adx reverse | target | | adx forward | target | | tape (one recording) | Adept-2 | |")
    out.append("|---|---:|---:|---|---:|---:|---|---:|---:|---|")
    for p in problems:
        rr, rf = ratio(p, "adx_reverse"), ratio(p, "adx_forward")
        tr, tf = TARGET_REVERSE.get(p), TARGET_FORWARD.get(p)
        c = counters.get(f"{p}/adx_reverse", {})
        tb, ab = c.get("tape_bytes"), ADEPT_TAPE.get(p)

        def mark(x, t):
            return "–" if x is None or t is None else ("met" if x <= t else "**missed**")

        out.append(f"| {p} | {fmt_ratio(rr)} | {fmt_ratio(tr)} | {mark(rr, tr)} | {fmt_ratio(rf)} | "
                   f"{fmt_ratio(tf)} | {mark(rf, tf)} | {fmt_bytes(tb) if tb else '–'} | "
                   f"{fmt_bytes(ab) if ab else '–'} | {mark(tb, ab)} |")
    out.append("")

    out.append("## adx tape per recording\n")
    out.append("Counted by `tape<double>::stats()` around one recording (independent variables included; "
               "1 byte per statement, 4-byte index + 8-byte partial per operand).\n")
    out.append("| problem | statements | operands | bytes | bytes/statement | bytes/operand |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for p in problems:
        c = counters.get(f"{p}/adx_reverse")
        if not c or "tape_bytes" not in c:
            continue
        out.append(f"| {p} | {c['statements']:.0f} | {c['operands']:.0f} | {c['tape_bytes']:.0f} | "
                   f"{c['bytes_per_stmt']:.2f} | {c['bytes_per_operand']:.2f} |")
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

    shown = [i for i in impls if i != "double"]
    fig, ax = plt.subplots(figsize=(12, 5.5))
    width = 0.8 / max(1, len(shown))
    cmap = plt.get_cmap("tab10")
    for k, i in enumerate(shown):
        xs, ys = [], []
        for j, p in enumerate(problems):
            r = ratio(p, i)
            if r is not None:
                xs.append(j + (k - (len(shown) - 1) / 2) * width)
                ys.append(r)
        hatch = "//" if i in REVERSE else None
        ax.bar(xs, ys, width, label=i + (" (rev)" if i in REVERSE else " (fwd)"), color=cmap(k % 10),
               hatch=hatch, edgecolor="black", linewidth=0.4)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels(problems)
    ax.set_ylabel("time / double time (median, log scale)")
    ax.set_title("adx scalar benchmarks: gradient (reverse) and one tangent (forward) over the double function")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(ncol=3, fontsize=8, loc="upper left")
    lo = min((ratio(p, i) for p in problems for i in shown if ratio(p, i)), default=0.5)
    hi = max((ratio(p, i) for p in problems for i in shown if ratio(p, i)), default=10)
    ax.set_ylim(10 ** math.floor(math.log10(lo * 0.8)), hi * 8)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
