#!/usr/bin/env python3
"""hpcnn's time outside the compute kernels, as a fraction of an iteration (dnnl backend).

    python3 bench/harness_overhead.py --hpcnn-build BUILD_DIR [--models lenet5,...]
        [--modes train,infer] [--batch 64] [--threads 2] [--iters 20] [--warmup 5] [--repeat 3]
        [--breakdown]

Method (the simplest honest one we know): for every point, alternately
  1. run hpcnn-train/-infer as usual and read the median iteration time T and the median
     update (SGD) time U from its result file (hpcnn-summary);
  2. run the same command with ONEDNN_VERBOSE=1 (DNNL_VERBOSE=1 for oneDNN < 2.5 too): oneDNN
     then times every primitive execution itself (the last field of each "exec" line) and the
     sum over one iteration is the time K spent inside oneDNN kernels (convolutions, batch norm,
     pooling, eltwise, inner products, sums, and the reorders the backend asks for).
The verbose run prints a line per primitive, so its own iteration times are not used: only its
per-primitive times, which oneDNN takes around the execution and not around the printing.
Then
     outside = T - K - U        (hpcnn code between and around the primitives, per iteration)
     overhead = outside / T
U, the SGD update, is hpcnn's own vectorised loop over all parameters: a kernel, not harness,
but shown apart. `outside` also holds any op hpcnn computes itself rather than through oneDNN
(e.g. the softmax cross-entropy loss), so it is an upper bound on the harness's own time.
Every run has `--warmup` untimed iterations first; the verbose run's lines are split into
iterations evenly (every iteration executes the same primitives) and the timed ones kept.
T and K come from different runs: their medians over --repeat alternating rounds are used; the
"(min)" columns repeat the computation with the fastest iteration of each kind (load from other
processes only adds time, so on a shared machine they are the less disturbed estimate).
--breakdown also prints K split by primitive kind and propagation (where the kernel time goes).
"""
import argparse
import collections
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

COLUMNS = ["img_per_s", "iter_median_s", "iter_min_s", "load_s", "forward_s", "backward_s", "update_s", "gflops"]


def csv_list(kind):
    return lambda text: [kind(s.strip()) for s in text.split(",") if s.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hpcnn-build", metavar="DIR", required=True)
    p.add_argument("--models", type=csv_list(str), default=["resnet18", "resnet50", "lenet5", "alexnet"])
    p.add_argument("--modes", type=csv_list(str), default=["train", "infer"])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--backend", default="dnnl")
    p.add_argument("--breakdown", action="store_true", help="print the kernel time by primitive kind")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    args.hpcnn_build = os.path.abspath(args.hpcnn_build)
    if args.backend != "dnnl":
        p.error("only the dnnl backend reports its kernel times (ONEDNN_VERBOSE)")
    return args


def command(args, model, mode, outdir):
    exe = os.path.join(args.hpcnn_build, "hpcnn-train" if mode == "train" else "hpcnn-infer")
    return [exe, "--model", model, "--backend", args.backend, "--batch", str(args.batch),
            "--threads", str(args.threads), "--iters", str(args.iters), "--warmup", str(args.warmup),
            "--output", outdir, "--quiet"]


def run(cmd, env):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"failed: {' '.join(cmd)}\n{proc.stdout[-3000:]}")
    return proc.stdout


def plain_run(args, model, mode):
    outdir = tempfile.mkdtemp(prefix="hpcnn-ovh-")
    try:
        run(command(args, model, mode, outdir), dict(os.environ))
        out = run([os.path.join(args.hpcnn_build, "hpcnn-summary"), "--format", "csv", "--columns",
                   ",".join(COLUMNS), outdir], dict(os.environ))
        rows = [r for r in csv.reader(io.StringIO(out)) if r and not r[0].startswith("#")]
        header = [h.strip().split(" ")[0] for h in rows[0]]
        return {k: float(v) for k, v in zip(header, rows[-1])}
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def verbose_run(args, model, mode):
    """Per timed iteration: (total kernel seconds, {(kind, prop, impl): seconds})."""
    outdir = tempfile.mkdtemp(prefix="hpcnn-ovh-")
    try:
        env = dict(os.environ, ONEDNN_VERBOSE="1", DNNL_VERBOSE="1")
        out = run(command(args, model, mode, outdir), env)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    execs = []
    for line in out.splitlines():
        f = line.split(",")
        if len(f) > 6 and f[0] in ("onednn_verbose", "dnnl_verbose") and f[1] == "exec":
            try:
                ms = float(f[-1])
            except ValueError:
                continue
            execs.append(((f[3], f[5], f[4]), ms * 1e-3))
    total_iters = args.warmup + args.iters
    if not execs or len(execs) % total_iters:
        raise RuntimeError(f"{model} {mode}: {len(execs)} primitive executions do not split into "
                           f"{total_iters} equal iterations")
    per = len(execs) // total_iters
    iters = []
    for k in range(args.warmup, total_iters):
        chunk = execs[k * per:(k + 1) * per]
        kinds = collections.Counter()
        for key, s in chunk:
            kinds[key] += s
        iters.append((sum(s for _, s in chunk), kinds))
    return iters, per


def main(argv=None):
    args = parse_args(argv)
    rows = []
    for model in args.models:
        for mode in args.modes:
            T, U, L, K, Tmin, Kmin, breakdown = [], [], [], [], [], [], collections.Counter()
            nprims = 0
            for _ in range(args.repeat):
                p = plain_run(args, model, mode)
                T.append(p["iter_median_s"])
                U.append(p["update_s"] if mode == "train" else 0.0)
                L.append(p["load_s"])
                iters, nprims = verbose_run(args, model, mode)
                K.append(statistics.median(s for s, _ in iters))
                Tmin.append(p["iter_min_s"])
                Kmin.append(min(s for s, _ in iters))
                for _, kinds in iters:
                    breakdown.update(kinds)
                print(f"{model} {mode}: T {T[-1] * 1e3:.2f} ms, kernels {K[-1] * 1e3:.2f} ms, "
                      f"update {U[-1] * 1e3:.2f} ms", file=sys.stderr, flush=True)
            t, k, u, l = (statistics.median(x) for x in (T, K, U, L))
            outside = t - k - u
            # The same with the fastest iteration of each run: load from other processes only
            # ever adds time, so on a shared machine this is the less disturbed estimate.
            tmin, kmin = min(Tmin), min(Kmin)
            outside_min = tmin - kmin - u
            rows.append([model, mode, f"{t * 1e3:.2f}", f"{k * 1e3:.2f}", f"{u * 1e3:.2f}", f"{l * 1e3:.3f}",
                         f"{outside * 1e3:.2f}", f"{100 * outside / t:.1f}",
                         f"{tmin * 1e3:.2f}", f"{kmin * 1e3:.2f}", f"{100 * outside_min / tmin:.1f}", str(nprims)])
            if args.breakdown:
                n = args.repeat * args.iters
                total = sum(breakdown.values()) / n
                print(f"\n{model} {mode}: oneDNN kernel time per iteration {total * 1e3:.2f} ms "
                      f"({nprims} primitive executions)")
                byk = collections.Counter()
                for (kind, prop, impl), s in breakdown.items():
                    byk[(kind, prop)] += s / n
                for (kind, prop), s in byk.most_common():
                    print(f"  {kind:14} {prop:18} {s * 1e3:9.2f} ms {100 * s / total:5.1f}%")
    head = ["model", "mode", "iter ms", "oneDNN kernels ms", "SGD update ms", "load ms",
            "outside ms", "outside %", "min iter ms", "min kernels ms", "outside % (min)", "prims/iter"]
    print()
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|---|---|" + "---:|" * (len(head) - 2))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        print("  ".join(h.rjust(x) for h, x in zip(head, w)))
        for r in rows:
            print("  ".join(c.rjust(x) for c, x in zip(r, w)))
    print(f"# batch {args.batch}, {args.threads} threads, medians of {args.repeat} rounds of "
          f"{args.iters} iterations; outside = iter - kernels - update; load is part of outside; "
          f"(min): fastest iteration and fastest kernel sum instead of medians")
    return 0


if __name__ == "__main__":
    sys.exit(main())
