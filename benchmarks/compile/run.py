#!/usr/bin/env python3
"""adx's compile-time benchmark: times each generated translation unit (generate.py) with each
compiler and prints seconds and the ratio to the reference unit (one Eigen matrix product)
compiled in the same run.

Repetitions are interleaved (every unit once, then every unit again, ...) so that a slow spell of
a shared machine falls on all units alike; each figure is the median of its repetitions. One
compile runs at a time.

    benchmarks/compile/run.py [--reps 3] [--compilers g++,clang++] [--out build-compile] [--runtime]
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402

ROOT = HERE.parent.parent
REFERENCE = "eigen_product"

# (unit, optimisation) in table order; the reference first.
CASES = [
    (REFERENCE, "-O2"),
    ("include_reverse", "-O2"),
    ("include_forward", "-O2"),
    ("include_adx", "-O2"),
    ("reverse_50", "-O0"),
    ("reverse_50", "-O2"),
    ("reverse_100", "-O2"),
    ("nested_50", "-O2"),
    ("forward_50", "-O2"),
    ("tensor", "-O2"),
    ("nested4_20", "-O2"),
]

WHAT = {
    REFERENCE: "reference: <Eigen/Dense> and one matrix product",
    "include_reverse": "#include <adx/reverse.hpp>",
    "include_forward": "#include <adx/forward.hpp>",
    "include_adx": "#include <adx/adx.hpp>",
    "reverse_50": "gradient of a 50-term expression, reverse",
    "reverse_100": "gradient of a 100-term expression, reverse",
    "nested_50": "Hessian-vector product of the 50 terms, forward over reverse",
    "forward_50": "directional derivative of the 50 terms, forward",
    "tensor": "gradient of a fused tensor expression with a product",
    "nested4_20": "4th derivative of 20 terms: grad(grad(grad(derivative)))",
}


def compile_once(compiler, unit, opt, out):
    src = out / f"{unit}.cpp"
    cmd = [compiler, "-std=c++20", opt, f"-I{ROOT / 'include'}", "-I/usr/include/eigen3", "-c", str(src), "-o",
           str(out / f"{unit}.o")]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"compile failed: {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--compilers", default="g++,clang++")
    ap.add_argument("--out", default=str(ROOT / "build-compile"))
    ap.add_argument("--only", default="", help="comma-separated units (the reference is always timed)")
    ap.add_argument("--runtime", action="store_true",
                    help="also time the run of the reverse_50 and reverse_100 gradients (runtime_main.cpp)")
    args = ap.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in generate.UNITS.items():
        (out / f"{name}.cpp").write_text(text)
    compilers = [c for c in args.compilers.split(",") if shutil.which(c)]
    if not compilers:
        sys.exit("no compiler found")
    only = set(filter(None, args.only.split(",")))
    cases = [c for c in CASES if not only or c[0] in only or c[0] == REFERENCE]

    times = {(cc, u, o): [] for cc in compilers for (u, o) in cases}
    for rep in range(args.reps):
        for cc in compilers:
            for unit, opt in cases:
                times[(cc, unit, opt)].append(compile_once(cc, unit, opt, out))
        print(f"repetition {rep + 1} of {args.reps} done", file=sys.stderr)

    print(f"Compile times, median of {args.reps} interleaved repetitions (seconds; ratio to the reference "
          f"unit compiled in the same run)\n")
    header = "| unit | flags | " + " | ".join(f"{cc} s | {cc} ratio" for cc in compilers) + " |"
    print(header)
    print("|" + "---|" * (2 + 2 * len(compilers)))
    for unit, opt in cases:
        cells = []
        for cc in compilers:
            t = statistics.median(times[(cc, unit, opt)])
            ref = statistics.median(times[(cc, REFERENCE, "-O2")])
            cells += [f"{t:.2f}", f"{t / ref:.2f}"]
        print(f"| {WHAT[unit]} (`{unit}`) | {opt} | " + " | ".join(cells) + " |")
    if args.runtime:
        print()
        for cc in compilers:
            for unit in ("reverse_50", "reverse_100"):
                exe = out / f"{unit}_{cc}"
                subprocess.run([cc, "-std=c++20", "-O2", f"-I{ROOT / 'include'}", str(out / f"{unit}.cpp"),
                                str(HERE / "runtime_main.cpp"), "-o", str(exe)], check=True)
                r = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
                print(f"run time, {unit} built by {cc} -O2: {r.stdout.strip()}")


if __name__ == "__main__":
    main()
