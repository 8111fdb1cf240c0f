#!/usr/bin/env python3
"""How many of the hpcnn ReFrame tests' performance references a run's figures violate.

    bench/reframe_bounds.py --references FILE --system SYS:PART [--size smoke] RUN_DIR

Reads the run's figures with hpcnn-summary (HPCNN_BIN), finds each ReFrame test's point
(reframe/hpcnn_rfm/points.py) and checks it against [value, lower, upper] of the test's reference
for SYS:PART, as ReFrame's performance stage does. Prints one line: the violated tests, and exits 0.
bench/acceptance_noise.sh uses it to measure the ReFrame references' false alarms and detection
on the same nights as the acceptance verdicts.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'reframe'))
from hpcnn_points import matches, performance_points, summary_figures  # noqa: E402

def figures(run):
    """The run's rows; none when hpcnn-summary cannot read it (every test then has no figure)."""
    try:
        return summary_figures(os.path.join(os.environ.get('HPCNN_BIN', os.path.join(HERE, '..')), 'hpcnn-summary'), [run])
    except RuntimeError:
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--references', required=True)
    ap.add_argument('--system', required=True)
    ap.add_argument('--size', default='smoke')
    ap.add_argument('run')
    args = ap.parse_args()
    with open(args.references) as f:
        table = json.load(f)
    rows = figures(args.run)
    violated = []
    for name, variable, _unit, where in performance_points(args.size):
        ref = table.get(name, {}).get(args.system, {}).get(variable)
        if not ref:
            continue
        value, lower, upper = ref[0], ref[1], ref[2]
        found = [r for r in rows if matches(r, where) and r.get(variable)]
        if not found:
            violated.append(f'{name} (no figure)')
            continue
        x = float(found[0][variable])
        if (lower is not None and x < value * (1 + lower)) or (upper is not None and x > value * (1 + upper)):
            violated.append(f'{name} ({x:.4g} vs {value:.4g} {lower:+})')
    print(f'{len(violated)} violated' + (': ' + '; '.join(violated) if violated else ''))


if __name__ == '__main__':
    main()
