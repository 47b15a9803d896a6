#!/usr/bin/env python3
"""Prints linalg_bench's medians, each implementation's ratio to `hand`, and the targets of the
linear-algebra gradients, from the JSON of one run with interleaved repetitions:

    linalg_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true --benchmark_format=json > linalg.json
    python3 benchmarks/linalg_ratios.py linalg.json [--md linalg.md] [--time real]

Targets: adx within 1.25x of hand at n = 64 and 256; adx at least 3x faster than LibTorch at
n = 8; adx never slower than LibTorch at n = 256. Needs only the standard library.
"""
import argparse
import sys

from report import load  # same folder: medians from the JSON, in microseconds

PROBLEMS = ["mvn", "gp", "solve_logdet"]
SIZES = [8, 64, 256]
IMPLS = ["hand", "adx", "torch", "eigen_var"]

TARGET_HAND = 1.25  # adx / hand at 64 and 256
TARGET_TORCH_SMALL = 3.0  # torch / adx at 8
TARGET_TORCH_LARGE = 1.0  # torch / adx at 256


def strip(run):
    """The run's name without Google Benchmark's options ("mvn_8/adx/min_time:0.200")."""
    return "/".join(part for part in run.split("/") if ":" not in part)


def fmt_time(us):
    if us is None:
        return "–"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.2f} µs" if us < 100 else f"{us:.0f} µs"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--md", help="also write the table to this markdown file")
    ap.add_argument("--time", choices=["cpu", "real"], default="cpu",
                    help="which Google Benchmark time to use (default: cpu_time, robust to a busy machine)")
    args = ap.parse_args()

    _, med, _ = load(args.json, "cpu_time" if args.time == "cpu" else "real_time")
    med = {strip(k): v for k, v in med.items()}

    def t(problem, n, impl):
        return med.get(f"{problem}_{n}/{impl}")

    impls = [i for i in IMPLS if any(k.endswith("/" + i) for k in med)]
    lines = [f"Medians of {args.time} time; in parentheses the ratio to hand.", ""]
    lines.append("| problem | n | " + " | ".join(impls) + " | adx / torch |")
    lines.append("|---|---:|" + "---:|" * len(impls) + "---:|")
    verdicts = []
    for problem in PROBLEMS:
        for n in SIZES:
            hand = t(problem, n, "hand")
            if hand is None:
                continue
            cells = []
            for impl in impls:
                x = t(problem, n, impl)
                if x is None:
                    cells.append("–")
                elif impl == "hand":
                    cells.append(fmt_time(x))
                else:
                    cells.append(f"{fmt_time(x)} ({x / hand:.2f})")
            adx, torch = t(problem, n, "adx"), t(problem, n, "torch")
            vs_torch = f"{adx / torch:.2f}" if adx and torch else "–"
            lines.append(f"| {problem} | {n} | " + " | ".join(cells) + f" | {vs_torch} |")
            if adx is None:
                continue
            if n in (64, 256):
                r = adx / hand
                verdicts.append((f"{problem}_{n}: adx / hand {r:.2f} (target <= {TARGET_HAND})", r <= TARGET_HAND))
            if torch is not None and n == 8:
                r = torch / adx
                verdicts.append((f"{problem}_{n}: torch / adx {r:.2f} (target >= {TARGET_TORCH_SMALL})",
                                 r >= TARGET_TORCH_SMALL))
            if torch is not None and n == 256:
                r = torch / adx
                verdicts.append((f"{problem}_{n}: torch / adx {r:.2f} (target >= {TARGET_TORCH_LARGE})",
                                 r >= TARGET_TORCH_LARGE))
    lines.append("")
    for what, ok in verdicts:
        lines.append(f"- {what}: {'met' if ok else 'MISSED'}")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
