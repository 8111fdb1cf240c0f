#!/usr/bin/env python3
"""Side by side throughput of two hpcnn builds (a change against the code before it): the same
hpcnn-train / hpcnn-infer points run alternately with build A and build B, --rounds times, and
the table shows both medians over rounds and B/A. A refactoring should give ratios within the
machine's noise (about 0.85-1.15 on the shared 2-core machine).

    /usr/bin/python3 bench/ab_builds.py --a OLD_BUILD --b NEW_BUILD
        [--models lenet5,resnet18,resnet50] [--modes train,infer] [--batch 64] [--threads 2]
        [--iters 20] [--warmup 10] [--rounds 3]

Each run is one hpcnn process whose image/s is the median of its timed iterations (read back with
that build's hpcnn-summary); runs wait for a quiet machine and a disturbed run is repeated, as in
bench/compare_pytorch.py, whose helpers this script uses.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_pytorch as cp  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="build directory A (the reference)")
    p.add_argument("--b", required=True, help="build directory B")
    p.add_argument("--models", type=cp.csv_list(str), default=["lenet5", "resnet18", "resnet50"])
    p.add_argument("--modes", type=cp.csv_list(str), default=["train", "infer"])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--backend", default="dnnl")
    p.add_argument("--image-size", type=int, default=0)
    p.add_argument("--wait-quiet", type=float, default=20.0)
    p.add_argument("--max-foreign", type=float, default=0.10)
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    for side in (args.a, args.b):
        for exe in ("hpcnn-train", "hpcnn-infer", "hpcnn-summary"):
            if not os.access(os.path.join(side, exe), os.X_OK):
                p.error(f"{side}: no executable {exe} (build it first)")
    return args


def img_per_s(args, build, model, mode):
    args.hpcnn_build = build
    rec, foreign = cp.measured(lambda: cp.run_hpcnn(args, model, mode, args.batch, args.threads), args)
    return rec["img_per_s"], foreign


def main(argv=None):
    args = parse_args(argv)
    rows = []
    for model in args.models:
        for mode in args.modes:
            a, b, worst = [], [], 0.0
            for r in range(args.rounds):
                # Alternate which side goes first, so a drifting load hits both alike.
                order = [("a", args.a), ("b", args.b)] if r % 2 == 0 else [("b", args.b), ("a", args.a)]
                for side, build in order:
                    ips, foreign = img_per_s(args, build, model, mode)
                    (a if side == "a" else b).append(ips)
                    worst = max(worst, foreign)
                cp.log(f"{model} {mode} round {r + 1}: A {a[-1]:.1f}  B {b[-1]:.1f} images/s")
            ma, mb = cp.median(a), cp.median(b)
            rows.append((model, mode, ma, mb, mb / ma if ma > 0 else float("nan"), worst))
    print("| model | mode | A img/s | B img/s | B/A | foreign |")
    print("|---|---|---:|---:|---:|---:|")
    for model, mode, ma, mb, ratio, worst in rows:
        print(f"| {model} | {mode} | {ma:.1f} | {mb:.1f} | {ratio:.3f} | {100 * worst:.0f}% |")
    ratios = sorted(r[4] for r in rows)
    print(f"B/A median over points: {cp.median(ratios):.3f} (min {ratios[0]:.3f}, max {ratios[-1]:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
