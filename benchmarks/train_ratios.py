#!/usr/bin/env python3
"""Prints train_bench's medians and the ratios the training targets are stated in, from the JSON
of one run with interleaved repetitions:

    train_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true --benchmark_format=json > train.json
    python3 benchmarks/train_ratios.py train.json
"""
import json
import sys


def main():
    runs = json.load(open(sys.argv[1]))["benchmarks"]
    median = {b["run_name"]: b["real_time"] for b in runs if b.get("aggregate_name") == "median"}
    unit = {b["run_name"]: b["time_unit"] for b in runs if b.get("aggregate_name") == "median"}
    for name in sorted(median):
        print(f"{name:22s} {median[name]:10.3f} {unit[name]} (median)")
    pairs = [("conv_lenet/torch", "conv_lenet/adx", "LibTorch / adx, LeNet-sized network (target >= 2)"),
             ("conv_wide/torch", "conv_wide/adx", "LibTorch / adx, wide layer (target >= 1)"),
             ("adam_1m/adx", "adam_1m/hand", "optim::adam / hand loop, 2^20 parameters (target <= 1.2)")]
    for a, b, what in pairs:
        if a in median and b in median:
            print(f"{median[a] / median[b]:6.2f}  {what}")


if __name__ == "__main__":
    main()
