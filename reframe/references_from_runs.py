#!/usr/bin/env python3
"""References for the hpcnn ReFrame tests from measured runs, with bounds from their noise.

    reframe/references_from_runs.py --system cluster:compute [--size smoke] RUN_DIR [RUN_DIR...]
    reframe/references_from_runs.py --system local:default results/reference/mybox/smoke

RUN_DIRs hold several runs of the tests' points (a blessed acceptance reference of the same size
has them: jobscripts/acceptance.sh BLESS=1, each run several rounds). A ReFrame test runs its
point once and compares that one figure with [value, lower, upper]: so the reference is made of
the figures such a single execution reports, one per result file. The value is their median; the
lower bound is where the figures' own spread puts a single execution with probability --alpha
shared over the tests (a log-normal spread: the median times exp(mean - z * sd) of the logs, z the
normal quantile of 1 - alpha / tests), and never closer than --floor. A run below it is beyond what
the noise of this system explains. The entries of the system:partition are replaced in
references.json (or --out); the other systems' are kept. A point with fewer than --min-runs
figures is an error (exit 2).
"""
import argparse
import json
import math
import os
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hpcnn_points import SIZES, matches, performance_points, summary_figures  # noqa: E402


def fail(message, status=2):
    print(f'{os.path.basename(sys.argv[0])}: {message}', file=sys.stderr)
    sys.exit(status)


def lower_bound(figures, z, floor):
    """(median, lower bound as a negative fraction) of single-execution figures."""
    med = statistics.median(figures)
    logs = [math.log(f / med) for f in figures]
    low = math.exp(statistics.fmean(logs) - z * statistics.stdev(logs)) - 1.0
    return med, min(-floor, low)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--system', required=True, help='system:partition the references are for')
    ap.add_argument('--size', default='smoke', choices=sorted(SIZES))
    ap.add_argument('--floor', type=float, default=0.05, help='narrowest lower bound (fraction)')
    ap.add_argument('--alpha', type=float, default=0.05, help='false-alarm rate of one execution, shared over the tests')
    ap.add_argument('--min-runs', type=int, default=3, help='fewest figures a point needs')
    ap.add_argument('--hpcnn-summary', default=shutil.which('hpcnn-summary') or os.path.join(HERE, '..', 'hpcnn-summary'))
    ap.add_argument('--out', default=os.environ.get('HPCNN_RFM_REFERENCES', os.path.join(HERE, 'references.json')))
    ap.add_argument('runs', nargs='+', metavar='RUN_DIR')
    args = ap.parse_args()
    if ':' not in args.system:
        fail(f"--system '{args.system}': want system:partition")
    for run in args.runs:
        if not os.path.isdir(run):
            fail(f"no run folder '{run}'")
    try:
        rows = summary_figures(args.hpcnn_summary, args.runs)
    except RuntimeError as e:
        fail(str(e))
    points = performance_points(args.size)
    z = statistics.NormalDist().inv_cdf(1.0 - args.alpha / len(points))
    entries = {}
    for name, variable, unit, where in points:
        figures = [float(r[variable]) for r in rows if r.get(variable) and matches(r, where)]
        if len(figures) < args.min_runs:
            fail(f'{name}: {len(figures)} figures of its point in the runs, want at least {args.min_runs}')
        value, lower = lower_bound(figures, z, args.floor)
        entries[name] = {variable: [round(value, 6), round(lower, 4), None, unit]}
        print(f'{name}: {variable} {value:.4g} {unit}, lower bound {100 * lower:.1f}% '
              f'({len(figures)} figures, {100 * (min(figures) / value - 1):.1f}% to {100 * (max(figures) / value - 1):+.1f}%)')
    try:
        with open(args.out) as f:
            table = json.load(f)
    except FileNotFoundError:
        table = {}
    for name, refs in entries.items():
        table.setdefault(name, {})[args.system] = refs
    tmp = args.out + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(table, f, indent=1)
        f.write('\n')
    os.replace(tmp, args.out)
    print(f'{len(entries)} references for {args.system} written to {args.out}')


if __name__ == '__main__':
    main()
