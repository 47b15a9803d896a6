#!/usr/bin/env python3
"""Compares two builds of one Google Benchmark program (say scalar_bench before and after a
change): runs them in turn, alternating which goes first, and prints each benchmark's median
time for both and their ratio. Interleaving puts both builds through the same noisy minutes of a
shared machine; the median of several repetitions discards the outliers.

    python3 benchmarks/ab.py OLD/scalar_bench NEW/scalar_bench --reps 5 --filter adx
"""
import argparse
import collections
import json
import statistics
import subprocess


def run(exe, flt, min_time):
    out = subprocess.run([exe, f"--benchmark_filter={flt}", "--benchmark_format=json",
                          f"--benchmark_min_time={min_time}"], capture_output=True, text=True, check=True).stdout
    return {b["name"]: b["real_time"] for b in json.loads(out)["benchmarks"] if b.get("run_type") != "aggregate"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--reps", type=int, default=5, help="repetitions of each build (default 5)")
    p.add_argument("--filter", default=".", help="--benchmark_filter (default: all)")
    p.add_argument("--min-time", default="0.2", help="--benchmark_min_time per benchmark (default 0.2)")
    a = p.parse_args()
    times = {"old": collections.defaultdict(list), "new": collections.defaultdict(list)}
    for r in range(a.reps):
        order = (("old", a.old), ("new", a.new)) if r % 2 == 0 else (("new", a.new), ("old", a.old))
        for tag, exe in order:
            for name, t in run(exe, a.filter, a.min_time).items():
                times[tag][name].append(t)
    print(f"{'benchmark':44} {'old':>11} {'new':>11} {'new/old':>8}")
    for name, old in times["old"].items():
        if name not in times["new"]:
            continue
        o, n = statistics.median(old), statistics.median(times["new"][name])
        print(f"{name:44} {o:11.3f} {n:11.3f} {n / o:8.3f}")


if __name__ == "__main__":
    main()
