#!/usr/bin/env python3
"""Peak resident memory of a training step, hpcnn against PyTorch, per image.

  flock /tmp/hpcnn-cpu.lock python3 bench/memory_vs_pytorch.py [--hpcnn-build .]
        [--models resnet50,resnet18] [--batches 32,128] [--threads 2] [--memory-plan on,off]
        [--torch-python /usr/bin/python3 --torch-python /opt/torch-pypi/bin/python-torch]

Every point is one child process (hpcnn-train, or bench/torch_bench.py under the given
interpreter, NCHW, torchvision's models where it has them) training a few iterations on synthetic
data of the model's hpcnn input size (3x32x32 for the ResNets, as bench/compare_pytorch.py). Its
peak RSS is the child's ru_maxrss from wait4 (what /usr/bin/time -v prints as "Maximum resident
set size"). With two batch sizes b1 < b2 the per-image slope (rss(b2) - rss(b1)) / (b2 - b1) is
the activation and gradient memory per image, free of what does not grow with the batch
(weights, optimizer state, libraries); the table gives it for every side and the ratio
hpcnn / PyTorch (the goal: <= 1). hpcnn's rows also show planned_activation_mib, the
executor's arena at the larger batch. Exit status 1 when a child fails.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_BENCH = os.path.join(HERE, "torch_bench.py")
DEFAULT_TORCH = ["/usr/bin/python3", "/opt/torch-pypi/bin/python-torch"]


def csv_list(kind):
    return lambda s: [kind(x) for x in s.split(",") if x]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hpcnn-build", default=os.path.dirname(HERE), help="folder with hpcnn-train (default: the checkout)")
    p.add_argument("--backend", default="dnnl")
    p.add_argument("--models", type=csv_list(str), default=["resnet50", "resnet18"])
    p.add_argument("--batches", type=csv_list(int), default=[32, 128])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=3, help="timed iterations per point (memory needs few)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--image-size", type=int, default=None, help="default: hpcnn's size for the model")
    p.add_argument("--memory-plan", type=csv_list(str), default=["on", "off"], help="hpcnn's --memory-plan values")
    p.add_argument("--torch-python", action="append", default=None,
                   help="interpreter with torch (repeatable; default: those of %s that exist)" % ", ".join(DEFAULT_TORCH))
    args = p.parse_args(argv)
    if len(args.batches) != 2 or args.batches[0] >= args.batches[1]:
        p.error(f"--batches needs two sizes, the smaller first: got {args.batches}")
    for plan in args.memory_plan:
        if plan not in ("on", "off"):
            p.error(f"--memory-plan: '{plan}' is not on or off")
    if args.torch_python is None:
        args.torch_python = [t for t in DEFAULT_TORCH if os.access(t, os.X_OK)]
    return args


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def peak_rss_mib(cmd, env=None):
    """Runs cmd; returns (peak RSS in MiB from wait4, stdout). Raises on a non-zero exit."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.read()[-3000:]}")
        return usage.ru_maxrss / 1024.0, out.read()  # ru_maxrss is in KiB on Linux


def hpcnn_point(args, model, batch, plan, outdir):
    cmd = [os.path.join(args.hpcnn_build, "hpcnn-train"), "--model", model, "--backend", args.backend,
           "--batch", str(batch), "--threads", str(args.threads), "--iters", str(args.iters),
           "--warmup", str(args.warmup), "--memory-plan", plan, "--output", outdir, "--quiet"]
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    log("  $ " + " ".join(cmd))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rss, _ = peak_rss_mib(cmd, env)
    summary = subprocess.run([os.path.join(args.hpcnn_build, "hpcnn-summary"), "--format", "csv", "--columns",
                              "planned_activation_mib", outdir], capture_output=True, text=True, check=True)
    rows = [r for r in csv.reader(io.StringIO(summary.stdout)) if r and not r[0].startswith("#")]
    return rss, float(rows[-1][0])


def torch_point(args, python, model, batch):
    cmd = [python, TORCH_BENCH, "--model", model, "--mode", "train", "--batch", str(batch),
           "--threads", str(args.threads), "--iters", str(args.iters), "--warmup", str(args.warmup),
           "--memory-format", "nchw"]
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    log("  $ " + " ".join(cmd))
    rss, out = peak_rss_mib(cmd, dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    version = out.strip().splitlines()[-1].split('"torch": "')[1].split('"')[0]
    return rss, version


def main(argv=None):
    args = parse_args(argv)
    b1, b2 = args.batches
    rows = []  # (model, side, rss1, rss2, slope, planned)
    try:
        for model in args.models:
            torch_slopes = []
            for python in args.torch_python:
                r1, version = torch_point(args, python, model, b1)
                r2, _ = torch_point(args, python, model, b2)
                torch_slopes.append((r2 - r1) / (b2 - b1))
                rows.append((model, f"torch {version}", r1, r2, torch_slopes[-1], None))
            for plan in args.memory_plan:
                with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
                    r1, _ = hpcnn_point(args, model, b1, plan, d1)
                    r2, planned = hpcnn_point(args, model, b2, plan, d2)
                slope = (r2 - r1) / (b2 - b1)
                rows.append((model, f"hpcnn plan {plan}", r1, r2, slope, planned))
                for (m, side, *_), ts in zip([r for r in rows if r[0] == model and r[1].startswith("torch")], torch_slopes):
                    rows.append((model, f"  ratio vs {side}", None, None, slope / ts if ts > 0 else float("nan"), None))
    except (RuntimeError, OSError) as e:
        log(f"memory_vs_pytorch: {e}")
        return 1
    print(f"peak RSS of a training step, {args.threads} threads, batches {b1} and {b2}, backend {args.backend} "
          f"(MiB; slope in MiB per image; ratio: hpcnn slope / torch slope)")
    print(f"{'model':10} {'side':28} {'rss@' + str(b1):>10} {'rss@' + str(b2):>10} {'slope':>8} {'planned@' + str(b2):>12}")
    for model, side, r1, r2, slope, planned in rows:
        cells = [f"{r1:10.1f}" if r1 is not None else " " * 10, f"{r2:10.1f}" if r2 is not None else " " * 10]
        print(f"{model:10} {side:28} {cells[0]} {cells[1]} {slope:8.3f} "
              + (f"{planned:12.1f}" if planned is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
