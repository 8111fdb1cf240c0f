#!/usr/bin/env python3
"""Runs the same model, batch and threads in PyTorch and in hpcnn, alternately, and prints both
images/s, their ratio and the project's target for it.

    /usr/bin/python3 bench/compare_pytorch.py --hpcnn-build BUILD_DIR
        [--models lenet5,alexnet,resnet18,resnet50] [--modes train,infer] [--precisions fp32,bf16,int8] [--batch 64]
        [--threads 2] [--iters 30] [--warmup 10] [--repeat 3]
        [--torch-python /usr/bin/python3 [--torch-python /opt/torch-pypi/bin/python-torch]]
        [--peak-gflops X] [--csv FILE] [--markdown]

For every point (model x mode x batch x threads) and each of --repeat rounds it runs the torch
side (bench/torch_bench.py, a subprocess of each --torch-python) and then hpcnn
(BUILD_DIR/hpcnn-train or hpcnn-infer --backend dnnl ... --quiet, read back through
hpcnn-summary --format csv); rounds alternate so that drifting machine load hits both sides.
Each run reports its delivered images/s (the timed images over the timed iterations' total, on
both sides); the table shows the median over rounds.
The first --torch-python is the reference for the targets; further ones are shown beside it.
--precisions bf16 runs hpcnn with --precision bf16 and torch under CPU autocast to bf16; its
target is 1.0 on every point (hpcnn's bf16 at least as fast as PyTorch's). --precisions int8
(inference points only; train x int8 is left out) runs hpcnn-infer --precision int8 and torch's
post-training static quantization (torch_bench.py: FX graph mode, x86 engine), target 1.0 too.

On a shared machine every run also measures the "foreign" CPU share: the CPU time other
processes took during it (/proc/stat minus this run's own), as a fraction of all CPUs. Before a
run the script waits (up to --wait-quiet seconds) for the machine to be idle, and a run with a
foreign share above --max-foreign is repeated (up to --retries times, keeping the least
disturbed attempt). The table's "foreign" column is the worst share among the runs it uses.
The torch side picks NCHW or channels_last by timing both in its first round (column "fmt").
This script needs no torch itself: any python3 can run it.
"""
import argparse
import csv
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_BENCH = os.path.join(HERE, "torch_bench.py")

# hpcnn's targets: hpcnn images/s over PyTorch images/s (dnnl, 2 threads, batch 64), against the
# first --torch-python (docs/PERFORMANCE.md).
TARGETS = {
    ("resnet18", "train"): 1.25,
    ("resnet50", "train"): 1.25,
    ("lenet5", "train"): 2.0,
    ("alexnet", "train"): 1.5,
    ("resnet18", "infer"): 1.2,
    ("resnet50", "infer"): 1.2,
    ("lenet5", "infer"): 1.2,
    ("alexnet", "infer"): 1.2,
}
TARGET_BATCH, TARGET_THREADS = 64, 2
# hpcnn --precision bf16 over PyTorch's CPU autocast to bf16, and int8 over PyTorch's quantized
# model, on every point.
BF16_TARGET = 1.0
INT8_TARGET = 1.0

HPCNN_COLUMNS = ["model", "mode", "batch", "threads", "img_per_s", "iter_median_s", "gflops",
                 "flops_per_image", "params", "load_s", "forward_s", "backward_s", "update_s", "peak_gflops"]


def csv_list(kind):
    def parse(text):
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise argparse.ArgumentTypeError("empty list")
        return [kind(s) for s in items]
    return parse


def check_hpcnn_build(parser, args):
    """--hpcnn-build is required unless --torch-only, and must hold the executables; made absolute."""
    if not args.torch_only and not args.hpcnn_build:
        parser.error("--hpcnn-build DIR is required (or --torch-only)")
    if args.hpcnn_build:
        args.hpcnn_build = os.path.abspath(args.hpcnn_build)
        for exe in ("hpcnn-train", "hpcnn-infer", "hpcnn-summary"):
            if not os.access(os.path.join(args.hpcnn_build, exe), os.X_OK):
                parser.error(f"{exe} not found in {args.hpcnn_build} (build it first)")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hpcnn-build", metavar="DIR", help="build directory with hpcnn-train, hpcnn-infer, hpcnn-summary")
    p.add_argument("--torch-only", action="store_true", help="run only the torch side (no --hpcnn-build needed)")
    p.add_argument("--models", type=csv_list(str), default=["resnet18", "resnet50", "lenet5", "alexnet"])
    p.add_argument("--modes", type=csv_list(str), default=["train", "infer"])
    p.add_argument("--precisions", type=csv_list(str), default=["fp32"], help="fp32, bf16 (torch: CPU autocast), int8 (inference; torch: static quantization)")
    p.add_argument("--batch", type=csv_list(int), default=[64])
    p.add_argument("--threads", type=csv_list(int), default=[2])
    p.add_argument("--iters", type=int, default=30, help="timed iterations of every run (both sides)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up iterations of every run (both sides)")
    p.add_argument("--repeat", type=int, default=3, help="alternating rounds per point")
    p.add_argument("--image-size", type=int, default=None, help="default: hpcnn's size for each model")
    p.add_argument("--backend", default="dnnl")
    p.add_argument("--torch-python", action="append", metavar="PATH",
                   help="interpreter for the torch side; repeat for more (default /usr/bin/python3)")
    p.add_argument("--memory-format", choices=("auto", "nchw", "channels_last"), default="auto",
                   help="torch side: auto picks the faster in the first round")
    p.add_argument("--peak-gflops", type=float, default=None,
                   help="FP32 FMA peak of the threads used (bench/fma_peak) for the %%peak column; default: the "
                        "peak of each point's precision that hpcnn measured and recorded (peak_gflops)")
    p.add_argument("--csv", metavar="FILE", help="also write every run (not only medians) as CSV")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    p.add_argument("--verbose", action="store_true", help="print every command")
    p.add_argument("--max-foreign", type=float, default=0.15,
                   help="repeat a run when other processes took more than this share of the CPUs")
    p.add_argument("--retries", type=int, default=2, help="repeats of a disturbed run")
    p.add_argument("--wait-quiet", type=float, default=120,
                   help="seconds to wait at most, before each run, for the CPUs to be idle")
    args = p.parse_args(argv)
    check_hpcnn_build(p, args)
    for m in args.modes:
        if m not in ("train", "infer"):
            p.error(f"--modes: unknown mode {m!r} (train, infer)")
    for prec in args.precisions:
        if prec not in ("fp32", "bf16", "int8"):
            p.error(f"--precisions: unknown precision {prec!r} (fp32, bf16, int8)")
    args.torch_python = args.torch_python or ["/usr/bin/python3"]
    if args.repeat < 1 or args.iters < 1:
        p.error("--repeat and --iters must be positive")
    return args


NCPU = os.cpu_count() or 1
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_busy_seconds():
    """Busy CPU seconds of the whole machine so far (all CPUs), or None without /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / TICK


def children_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def wait_quiet(max_wait, threshold):
    """Waits until other processes use less than `threshold` of the CPUs over one second."""
    deadline = time.time() + max_wait
    while True:
        b0 = cpu_busy_seconds()
        if b0 is None:
            return 0.0
        time.sleep(1.0)
        share = (cpu_busy_seconds() - b0) / NCPU
        if share < threshold or time.time() >= deadline:
            return share
        time.sleep(4.0)


def measured(fn, args):
    """Runs fn() (one benchmark subprocess) and returns (result, foreign CPU share during it),
    waiting for a quiet machine first and repeating a disturbed run (least disturbed kept)."""
    best = None
    for _ in range(args.retries + 1):
        wait_quiet(args.wait_quiet, args.max_foreign / 2)
        b0, c0, t0 = cpu_busy_seconds(), children_cpu_seconds(), time.time()
        res = fn()
        b1, c1, t1 = cpu_busy_seconds(), children_cpu_seconds(), time.time()
        foreign = 0.0 if b0 is None else max(0.0, ((b1 - b0) - (c1 - c0)) / (NCPU * (t1 - t0)))
        if best is None or foreign < best[1]:
            best = (res, foreign)
        if foreign <= args.max_foreign:
            break
        log(f"    (disturbed: other processes took {100 * foreign:.0f}% of the CPUs; again)")
    return best


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_torch(args, python, model, mode, prec, batch, threads, fmt):
    cmd = [python, TORCH_BENCH, "--model", model, "--mode", mode, "--batch", str(batch),
           "--threads", str(threads), "--iters", str(args.iters), "--warmup", str(args.warmup),
           "--memory-format", fmt, "--precision", prec]
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    if args.verbose:
        log("  $ " + " ".join(cmd))
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"torch side failed ({' '.join(cmd)}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def hpcnn_command(args, model, mode, prec, batch, threads, outdir):
    exe = os.path.join(args.hpcnn_build, "hpcnn-train" if mode == "train" else "hpcnn-infer")
    cmd = [exe, "--model", model, "--backend", args.backend, "--batch", str(batch),
           "--threads", str(threads), "--iters", str(args.iters), "--warmup", str(args.warmup),
           "--precision", prec, "--output", outdir, "--quiet"]
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    return cmd


def read_summary(build, outdir):
    cmd = [os.path.join(build, "hpcnn-summary"), "--format", "csv", "--columns", ",".join(HPCNN_COLUMNS), outdir]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"hpcnn-summary failed ({' '.join(cmd)}):\n{proc.stderr[-3000:]}")
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    rows = [r for r in rows if r and not r[0].startswith("#")]
    if len(rows) < 2:
        raise RuntimeError(f"hpcnn-summary printed no point:\n{proc.stdout}")
    # Header cells may carry units ("img_per_s (images/s)"): keep the field name.
    header = [h.strip().split(" ")[0].split("[")[0].split("(")[0] for h in rows[0]]
    rec = dict(zip(header, rows[-1]))
    out = {}
    for k in HPCNN_COLUMNS:
        v = rec.get(k, "")
        try:
            out[k] = float(v)
        except ValueError:
            out[k] = v
    return out


def run_hpcnn(args, model, mode, prec, batch, threads):
    outdir = tempfile.mkdtemp(prefix="hpcnn-cmp-")
    try:
        cmd = hpcnn_command(args, model, mode, prec, batch, threads, outdir)
        if args.verbose:
            log("  $ " + " ".join(cmd))
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"hpcnn failed ({' '.join(cmd)}):\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
        rec = read_summary(args.hpcnn_build, outdir)
        rec["side"] = "hpcnn"
        return rec
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_num(x, spec=".1f"):
    return "-" if x is None or x != x else format(x, spec)


def main(argv=None):
    args = parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    log(f"compare_pytorch: {started}, load average {os.getloadavg()[0]:.2f}")
    points = [(m, mode, prec, b, t) for m in args.models for mode in args.modes for prec in args.precisions
              for b in args.batch for t in args.threads if not (prec == "int8" and mode == "train")]
    all_runs = []
    results = []
    for (model, mode, prec, batch, threads) in points:
        torch_ips = [[] for _ in args.torch_python]
        torch_info = [None for _ in args.torch_python]
        formats = [args.memory_format for _ in args.torch_python]
        hp_ips, hp_last, pair_ratios = [], None, []
        worst_foreign = 0.0
        log(f"{model} {mode} {prec} batch {batch} threads {threads}")
        for r in range(args.repeat):
            round_torch = []
            for i, py in enumerate(args.torch_python):
                res, foreign = measured(lambda: run_torch(args, py, model, mode, prec, batch, threads, formats[i]), args)
                res["foreign"] = foreign
                worst_foreign = max(worst_foreign, foreign)
                formats[i] = res["memory_format"]  # auto -> the winner, kept for later rounds
                torch_ips[i].append(res["img_per_s"])
                torch_info[i] = res
                round_torch.append(res["img_per_s"])
                all_runs.append(dict(res, round=r, loadavg=os.getloadavg()[0]))
            line = f"  round {r + 1}: torch " + " / ".join(f"{x:.1f}" for x in round_torch)
            if not args.torch_only:
                hp, foreign = measured(lambda: run_hpcnn(args, model, mode, prec, batch, threads), args)
                hp["foreign"] = foreign
                worst_foreign = max(worst_foreign, foreign)
                hp_ips.append(hp["img_per_s"])
                hp_last = hp
                pair_ratios.append(hp["img_per_s"] / round_torch[0])
                all_runs.append(dict(hp, round=r, loadavg=os.getloadavg()[0]))
                line += f", hpcnn {hp['img_per_s']:.1f} img/s (ratio {pair_ratios[-1]:.2f})"
            log(line)
        t_med = [median(x) for x in torch_ips]
        h_med = median(hp_ips) if hp_ips else None
        ratio = h_med / t_med[0] if h_med else None
        if prec in ("bf16", "int8"):
            target = BF16_TARGET if prec == "bf16" else INT8_TARGET
        else:
            target = TARGETS.get((model, mode)) if (batch, threads) == (TARGET_BATCH, TARGET_THREADS) else None
        verdict = "-" if target is None or ratio is None else ("PASS" if ratio >= target else "MISS")
        gflops = None
        if hp_last and isinstance(hp_last.get("flops_per_image"), float) and h_med:
            gflops = hp_last["flops_per_image"] * h_med * 1e-9
        results.append(dict(model=model, mode=mode, prec=prec, batch=batch, threads=threads, torch=t_med,
                            torch_versions=[ti["torch"] for ti in torch_info], formats=formats,
                            hpcnn=h_med, ratio=ratio, pair_ratios=pair_ratios, target=target,
                            verdict=verdict, gflops=gflops, foreign=worst_foreign,
                            flops_per_image=hp_last.get("flops_per_image") if hp_last else None,
                            peak_gflops=hp_last.get("peak_gflops") if hp_last and isinstance(hp_last.get("peak_gflops"), float)
                            else None))

    # ---------------------------------------------------------------- the table
    versions = results[0]["torch_versions"] if results else []
    head = ["model", "mode", "prec", "batch", "thr", f"torch {versions[0] if versions else ''} img/s", "fmt"]
    if not args.torch_only:
        head += ["hpcnn img/s", "ratio", "ratio range", "target", "result", "hpcnn GFLOP/s"]
        head += ["% peak"]
    for v in versions[1:]:
        head += [f"torch {v} img/s", "fmt", "hpcnn/this" if not args.torch_only else ""]
    head += ["foreign"]
    rows = []
    for r in results:
        row = [r["model"], r["mode"], r["prec"], str(r["batch"]), str(r["threads"]), fmt_num(r["torch"][0]), r["formats"][0]]
        if not args.torch_only:
            rng = f"{min(r['pair_ratios']):.2f}-{max(r['pair_ratios']):.2f}" if r["pair_ratios"] else "-"
            row += [fmt_num(r["hpcnn"]), fmt_num(r["ratio"], ".2f"), rng,
                    fmt_num(r["target"], ".2f") if r["target"] else "-", r["verdict"], fmt_num(r["gflops"])]
            peak = args.peak_gflops or r["peak_gflops"]
            row += [fmt_num(100 * r["gflops"] / peak if r["gflops"] and peak else None, ".0f")]
        for i in range(1, len(r["torch"])):
            other = r["torch"][i]
            row += [fmt_num(other), r["formats"][i],
                    fmt_num(r["hpcnn"] / other, ".2f") if r["hpcnn"] and not args.torch_only else ""]
        row += [f"{100 * r['foreign']:.0f}%"]
        rows.append(row)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" if i < 5 or h in ("fmt", "result") else "---:" for i, h in enumerate(head)) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for row in rows:
            print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
    print(f"# {started}; medians of {args.repeat} alternating rounds of {args.iters} timed iterations "
          f"(after {args.warmup} warm-up) per side; ratio = hpcnn / torch {versions[0] if versions else ''}; "
          f"ratio range = per-round ratios; foreign = the largest CPU share other processes took during "
          f"a run used; load average at the end {os.getloadavg()[0]:.2f}")

    if args.csv:
        keys = sorted({k for run in all_runs for k in run})
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            for run in all_runs:
                w.writerow({k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in run.items()})
    missed = any(r["verdict"] == "MISS" for r in results)
    return 1 if (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
