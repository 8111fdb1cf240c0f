#!/usr/bin/env python3
"""References for the hpcnn ReFrame tests from measured runs, with bounds from their noise.

    reframe/references_from_runs.py --system cluster:compute [--size smoke] RUN_DIR [RUN_DIR...]
    reframe/references_from_runs.py --system local:default results/reference/mybox/smoke

RUN_DIRs hold several runs of the tests' points (a blessed acceptance reference of the same size
has them: jobscripts/acceptance.sh BLESS=1). hpcnn-summary --stability gives each point's
geometric mean over the runs and the smallest change a new run can be shown to differ by (at
family level --alpha over the tests' points); the reference is [mean, -max(floor, that change),
null, unit]: a run below it is beyond what the noise of this system explains. The entries of the
system:partition are replaced in references.json (or --out); the other systems' are kept.
A point without runs enough to measure its spread (fewer than --min-runs) is an error (exit 2).
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hpcnn_points import SIZES, performance_points  # noqa: E402


def fail(message, status=2):
    print(f'{os.path.basename(sys.argv[0])}: {message}', file=sys.stderr)
    sys.exit(status)


def settings_of(text):
    """'suite=hpcnn-train model=lenet5 ...' -> {'suite': 'hpcnn-train', 'model': 'lenet5', ...}"""
    return dict(item.split('=', 1) for item in text.split() if '=' in item)


def matches(settings, where):
    for name, want in where.items():
        have = settings.get(name)
        if have is None:
            return False
        try:
            if float(have) != float(want):
                return False
        except ValueError:
            if have != str(want):
                return False
    return True


def stability_rows(summary, runs, alpha, min_runs):
    cmd = [summary, '--stability', '--format', 'csv', '--alpha', str(alpha), '--min-runs', str(min_runs)] + runs
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f'{" ".join(cmd)} exited {done.returncode}')
    return list(csv.DictReader(io.StringIO(done.stdout)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--system', required=True, help='system:partition the references are for')
    ap.add_argument('--size', default='smoke', choices=sorted(SIZES))
    ap.add_argument('--floor', type=float, default=0.05, help='narrowest lower bound (fraction)')
    ap.add_argument('--alpha', type=float, default=0.05, help='family-wise false-alarm rate over the tests')
    ap.add_argument('--min-runs', type=int, default=3)
    ap.add_argument('--hpcnn-summary', default=shutil.which('hpcnn-summary') or os.path.join(HERE, '..', 'hpcnn-summary'))
    ap.add_argument('--out', default=os.environ.get('HPCNN_RFM_REFERENCES', os.path.join(HERE, 'references.json')))
    ap.add_argument('runs', nargs='+', metavar='RUN_DIR')
    args = ap.parse_args()
    if ':' not in args.system:
        fail(f"--system '{args.system}': want system:partition")
    for run in args.runs:
        if not os.path.isdir(run):
            fail(f"no run folder '{run}'")
    rows = stability_rows(args.hpcnn_summary, args.runs, args.alpha, args.min_runs)
    entries = {}
    for name, variable, unit, where in performance_points(args.size):
        found = [r for r in rows if r['metric'] == variable and matches(settings_of(r['settings']), where)]
        if len(found) != 1:
            fail(f'{name}: {len(found)} points with {variable} where {where} in the runs, want 1')
        row = found[0]
        if not row['detectable']:
            fail(f'{name}: one run of its point: no spread to bound it by')
        lower = max(args.floor, float(row['detectable']))
        entries[name] = {variable: [float(row['figure']), -round(lower, 4), None, unit]}
        print(f'{name}: {variable} {float(row["figure"]):.4g} {unit}, lower bound -{100 * lower:.1f}% '
              f'(runs spread {100 * float(row["spread"]):.2f}%)')
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
