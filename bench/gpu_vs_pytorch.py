#!/usr/bin/env python3
"""Experiments E1 and E3 on a GPU: hpcnn's cuda backend beside eager PyTorch, same model, data
set shape, batch, mode and precision, run alternately; prints both images/s, their ratio and
the target (hpcnn training >= 1.0x PyTorch, inference >= 1.1x).

    python3 bench/gpu_vs_pytorch.py --hpcnn-build BUILD [--hpcnn-launch "CMD ..."]
        [--models resnet50] [--datasets imagenet,cifar10] [--batches 64,128]
        [--precisions fp32,tf32,bf16] [--modes train,infer] [--iters 20] [--warmup 5]
        [--repeat 1] [--cudnn-benchmark] [--layout auto|nchw|nhwc] [--fusion on|off] [--compile]
        [--csv FILE] [--markdown] [--time-limit SEC]

For every point (model x data set x precision x mode x batch) and each of --repeat rounds it
runs the torch side (bench/torch_gpu_bench.py in a fresh --torch-python process, so each run
starts with an empty GPU) and then hpcnn (BUILD/hpcnn-train or hpcnn-infer --backend cuda ...
--quiet, read back through hpcnn-summary --format csv). The table shows the medians over
rounds. Both sides time the same iteration: copy the batch from page-locked host memory to the
GPU, forward (+ loss, backward, SGD momentum 0.9 step), synchronize; median over iterations.
Data set shapes: imagenet 3x224x224 with 1000 classes, cifar10 3x32x32 with 10 classes.
Without --batches, imagenet runs batches 64,128 and cifar10 128,256 (the default sweep is
sized to take about 6 minutes on an H100); --batches applies one list to every data set.

Settings of each side (printed above the table):
  torch   channels_last model and input; cudnn.benchmark on (--no-torch-cudnn-benchmark);
          torch.compile off (--compile); fp32 = no TF32, tf32 = TF32 for convolutions and
          matmuls, bf16 = autocast(bfloat16) around forward + loss, fp32 master weights
  hpcnn   --precision as the column says (left out for fp32), --cudnn-benchmark only when
          given here, --layout only when not auto, --fusion off only when given here (default:
          hpcnn's own, on: ReLUs fused, inference batch norms folded)
--hpcnn-launch "CMD ..." is split like a shell would and put in front of every hpcnn command
(hpcnn-train, hpcnn-infer, hpcnn-summary), e.g. the script that sets up MPI's environment.
A failing run (non-zero exit, time-out, unreadable result) does not stop the sweep: its row
says "error: " and the last line the program printed to stderr. --csv writes every run as it
finishes, so a sweep cut short still leaves its runs there; --time-limit SEC starts no run
after SEC seconds and prints the table of what was done.

Development options (to test this script without a GPU, against a CPU build):
  --hpcnn-backend dnnl --torch-device cpu
"""
import argparse
import csv
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_pytorch import check_hpcnn_build, csv_list, fmt_num, log, median  # noqa: E402

TORCH_GPU_BENCH = os.path.join(HERE, "torch_gpu_bench.py")

# hpcnn's targets on the GPU: hpcnn images/s over PyTorch images/s, by mode (every point).
TARGETS = {"train": 1.0, "infer": 1.1}
# Batches per data set when --batches is not given.
DEFAULT_BATCHES = {"imagenet": [64, 128], "cifar10": [128, 256]}
PRECISIONS = ("fp32", "tf32", "bf16")

# hpcnn-summary fields read back; the optional ones may be unknown to the build (dropped then).
SUMMARY_REQUIRED = ["img_per_s", "iter_median_s"]
SUMMARY_OPTIONAL = ["params", "image_size", "classes", "status", "status_reason",
                    "gpu_peak_mib", "joules_per_image"]
_unknown_columns = set()
_output_option = {}

CSV_FIELDS = ["side", "model", "dataset", "mode", "precision", "batch", "round", "img_per_s",
              "iter_median_s", "gpu_peak_mib", "joules_per_image", "params", "wall_s", "error",
              "detail"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hpcnn-build", metavar="DIR", help="build directory with hpcnn-train, hpcnn-infer, hpcnn-summary")
    p.add_argument("--hpcnn-launch", metavar="CMD", default="",
                   help="prefix of every hpcnn command, split with shlex (default: none)")
    p.add_argument("--torch-only", action="store_true", help="run only the torch side (no --hpcnn-build needed)")
    p.add_argument("--models", type=csv_list(str), default=["resnet50"])
    p.add_argument("--datasets", type=csv_list(str), default=["imagenet", "cifar10"])
    p.add_argument("--batches", type=csv_list(int), default=None,
                   help="batches of every data set (default: imagenet 64,128; cifar10 128,256)")
    p.add_argument("--precisions", type=csv_list(str), default=list(PRECISIONS))
    p.add_argument("--modes", type=csv_list(str), default=["train", "infer"])
    p.add_argument("--iters", type=int, default=20, help="timed iterations of every run (both sides)")
    p.add_argument("--warmup", type=int, default=5, help="warm-up iterations of every run (both sides)")
    p.add_argument("--repeat", type=int, default=1, help="alternating rounds per point")
    p.add_argument("--image-size", type=int, default=None, help="both sides (default: the data set's)")
    p.add_argument("--cudnn-benchmark", action="store_true", help="hpcnn: pass --cudnn-benchmark")
    p.add_argument("--layout", choices=("auto", "nchw", "nhwc"), default="auto",
                   help="hpcnn: --layout (passed when not auto)")
    p.add_argument("--fusion", choices=("on", "off"), default="on",
                   help="hpcnn: --fusion (default on, hpcnn's default; off passes --fusion off)")
    p.add_argument("--torch-cudnn-benchmark", action=argparse.BooleanOptionalAction, default=True,
                   help="torch: torch.backends.cudnn.benchmark (default: on)")
    p.add_argument("--compile", action="store_true", help="torch: torch.compile the model (default: off)")
    p.add_argument("--torch-python", metavar="PATH", default=sys.executable,
                   help="interpreter for the torch side (default: this one)")
    p.add_argument("--timeout", type=float, default=300, help="seconds one run may take (default 300)")
    p.add_argument("--time-limit", type=float, default=0,
                   help="start no run after this many seconds of the sweep (default 0: no limit)")
    p.add_argument("--csv", metavar="FILE", help="also write every run (not only medians) as CSV")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed or a run failed")
    p.add_argument("--verbose", action="store_true", help="print every command")
    # Development: test the script without a GPU (a CPU build and CPU torch).
    p.add_argument("--hpcnn-backend", default="cuda", help=argparse.SUPPRESS)
    p.add_argument("--torch-device", default="cuda", choices=("cuda", "cpu"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    check_hpcnn_build(p, args)
    args.launch = shlex.split(args.hpcnn_launch)
    for m in args.modes:
        if m not in TARGETS:
            p.error(f"--modes: unknown mode {m!r} (train, infer)")
    for x in args.precisions:
        if x not in PRECISIONS:
            p.error(f"--precisions: unknown precision {x!r} ({', '.join(PRECISIONS)})")
    for d in args.datasets:
        if d not in DEFAULT_BATCHES:
            p.error(f"--datasets: unknown data set {d!r} ({', '.join(DEFAULT_BATCHES)})")
    if args.repeat < 1 or args.iters < 1 or args.warmup < 0:
        p.error("--repeat and --iters must be positive, --warmup not negative")
    return args


def last_line(*texts):
    """The last non-empty line of the first text that has one (stderr, then stdout)."""
    for text in texts:
        lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
        if lines:
            return lines[-1]
    return "no message"


def run_command(cmd, args, env=None):
    """Runs cmd; returns (CompletedProcess or None on time-out, wall seconds)."""
    if args.verbose:
        log("  $ " + shlex.join(cmd))
    t0 = time.perf_counter()
    # A session of its own: on a time-out the whole group goes (a launcher's children hold the GPU).
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          start_new_session=True) as child:
        try:
            out, err = child.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.communicate()
            return None, time.perf_counter() - t0
    return subprocess.CompletedProcess(cmd, child.returncode, out, err), time.perf_counter() - t0


# ------------------------------------------------------------------------------- torch side
def run_failure(proc, wall, args):
    """The result row of a run that timed out or exited non-zero, or None when it succeeded."""
    if proc is None:
        return {"error": f"timed out after {args.timeout:.0f} s", "wall_s": wall}
    if proc.returncode != 0:
        return {"error": last_line(proc.stderr, proc.stdout), "wall_s": wall}
    return None


def run_torch(args, model, dataset, precision, mode, batch):
    cmd = [args.torch_python, TORCH_GPU_BENCH, "--model", model, "--dataset", dataset, "--mode", mode,
           "--batch", str(batch), "--precision", precision, "--iters", str(args.iters),
           "--warmup", str(args.warmup), "--device", args.torch_device,
           "--cudnn-benchmark" if args.torch_cudnn_benchmark else "--no-cudnn-benchmark"]
    if args.compile:
        cmd.append("--compile")
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    proc, wall = run_command(cmd, args)
    failure = run_failure(proc, wall, args)
    if failure:
        return failure
    try:
        res = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "no JSON result: " + last_line(proc.stdout, proc.stderr), "wall_s": wall}
    res["wall_s"] = wall
    return res


# ------------------------------------------------------------------------------- hpcnn side
def output_option(args, exe, outdir):
    """--out FILE.h5 where the build's --help lists it, else --output DIR (both read back from
    outdir by hpcnn-summary)."""
    if exe not in _output_option:
        proc, _ = run_command(args.launch + [exe, "--help"], args)
        text = (proc.stdout + proc.stderr) if proc else ""
        _output_option[exe] = "--out" if re.search(r"^\s*--out\s", text, re.M) else "--output"
    if _output_option[exe] == "--out":
        return ["--out", os.path.join(outdir, "result.h5")]
    return ["--output", outdir]


def hpcnn_command(args, model, dataset, precision, mode, batch, outdir):
    exe = os.path.join(args.hpcnn_build, "hpcnn-train" if mode == "train" else "hpcnn-infer")
    cmd = [exe, "--backend", args.hpcnn_backend, "--model", model, "--dataset", dataset,
           "--batch", str(batch), "--iters", str(args.iters), "--warmup", str(args.warmup)]
    if precision != "fp32":  # builds without --precision run fp32 only
        cmd += ["--precision", precision]
    if args.cudnn_benchmark:
        cmd.append("--cudnn-benchmark")
    if args.layout != "auto":
        cmd += ["--layout", args.layout]
    if args.fusion == "off":  # builds without --fusion have no fusion
        cmd += ["--fusion", "off"]
    if args.image_size:
        cmd += ["--image-size", str(args.image_size)]
    return args.launch + cmd + output_option(args, exe, outdir) + ["--quiet"]


def read_summary(args, outdir):
    """The last point of the result file(s) in outdir as a dict of floats (strings where not
    numbers). Optional fields the build does not know are dropped (and not asked for again)."""
    summary = os.path.join(args.hpcnn_build, "hpcnn-summary")
    while True:
        columns = SUMMARY_REQUIRED + [c for c in SUMMARY_OPTIONAL if c not in _unknown_columns]
        cmd = args.launch + [summary, "--format", "csv", "--columns", ",".join(columns), outdir]
        proc, _ = run_command(cmd, args)
        if proc is None:
            raise RuntimeError("hpcnn-summary timed out")
        unknown = re.search(r"unknown column '([^']+)'", proc.stderr)
        if proc.returncode != 0 and unknown and unknown.group(1) in SUMMARY_OPTIONAL \
                and unknown.group(1) not in _unknown_columns:
            _unknown_columns.add(unknown.group(1))
            continue
        if proc.returncode != 0:
            raise RuntimeError("hpcnn-summary: " + last_line(proc.stderr, proc.stdout))
        break
    rows = [r for r in csv.reader(io.StringIO(proc.stdout)) if r and not r[0].startswith("#")]
    if len(rows) < 2:
        raise RuntimeError("hpcnn-summary printed no point")
    # Header cells may carry units ("img_per_s (images/s)"): keep the field name.
    header = [h.strip().split(" ")[0].split("[")[0].split("(")[0] for h in rows[0]]
    out = {}
    for k, v in zip(header, rows[-1]):
        try:
            out[k] = float(v)
        except ValueError:
            out[k] = v if v != "" else None
    return out


def run_hpcnn(args, model, dataset, precision, mode, batch):
    outdir = tempfile.mkdtemp(prefix="hpcnn-gpu-cmp-")
    try:
        cmd = hpcnn_command(args, model, dataset, precision, mode, batch, outdir)
        proc, wall = run_command(cmd, args)
        failure = run_failure(proc, wall, args)
        if failure:
            return failure
        try:
            rec = read_summary(args, outdir)
        except RuntimeError as e:
            return {"error": str(e), "wall_s": wall}
        if rec.get("status") not in (None, "ok"):
            return dict(rec, error=f"{rec['status']}: {rec.get('status_reason') or '?'}", wall_s=wall)
        if not isinstance(rec.get("img_per_s"), float) or not rec["img_per_s"] > 0:
            return dict(rec, error=f"img_per_s is {rec.get('img_per_s')!r} in the result", wall_s=wall)
        rec.update(side="hpcnn", wall_s=wall)
        return rec
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


# ------------------------------------------------------------------------------- reporting
def cudnn_text(v):
    """torch.backends.cudnn.version() as major.minor.patch (cuDNN 9: 91002; cuDNN 8: 8902)."""
    if not isinstance(v, int):
        return "-"
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}" if v >= 90000 else f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def describe(args, torch_info):
    """Lines about the machine and the settings of both sides, and the command line."""
    t = torch_info or {}
    gpu = t.get("gpu", "?")
    versions = f"torch {t.get('torch', '?')}, CUDA {t.get('cuda') or '-'}, cuDNN {cudnn_text(t.get('cudnn'))}"
    torch_side = (f"torch: {t.get('memory_format', 'channels_last')}, cudnn.benchmark "
                  f"{'on' if args.torch_cudnn_benchmark else 'off'}, torch.compile {'on' if args.compile else 'off'}, "
                  f"eager, TF32 api {(t.get('tf32') or {}).get('api', '-')}")
    hpcnn_side = (f"hpcnn: --backend {args.hpcnn_backend}, cudnn-benchmark {'on' if args.cudnn_benchmark else 'off'}, "
                  f"layout {args.layout}")
    command = shlex.join([os.path.basename(sys.executable)] + sys.argv)
    return f"GPU {gpu}; {versions}", torch_side + ("" if args.torch_only else f"; {hpcnn_side}"), command


def print_table(head, rows, markdown, left=5):
    """Text (right-aligned columns) or Markdown; the first `left` columns are labels."""
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" if i < left or h == "result" else "---:" for i, h in enumerate(head)) + "|")
        for row in rows:
            print("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        return
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))


def combined(runs, key, how):
    """how() of the runs' numeric values of key (max for memory peaks, median for energy), or None."""
    vals = [x[key] for x in runs if isinstance(x.get(key), float)]
    return how(vals) if vals else None


def elapsed_text(seconds):
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"


def main(argv=None):
    args = parse_args(argv)
    t_start = time.perf_counter()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    points = [(model, dataset, precision, mode, batch)
              for model in args.models for dataset in args.datasets for precision in args.precisions
              for mode in args.modes for batch in (args.batches or DEFAULT_BATCHES[dataset])]
    sides = 1 if args.torch_only else 2
    log(f"gpu_vs_pytorch: {started}; {len(points)} points x {args.repeat} round(s) x {sides} side(s) "
        f"= {len(points) * args.repeat * sides} runs")
    csv_file = open(args.csv, "w", newline="") if args.csv else None
    csv_writer = csv.DictWriter(csv_file, fieldnames=CSV_FIELDS) if csv_file else None
    if csv_writer:
        csv_writer.writeheader()
        csv_file.flush()

    def record(res, side, point, rnd):
        model, dataset, precision, mode, batch = point
        if csv_writer:
            detail = {k: v for k, v in res.items() if k not in CSV_FIELDS}
            row = {k: res.get(k) for k in CSV_FIELDS}
            row.update(side=side, model=model, dataset=dataset, mode=mode, precision=precision,
                       batch=batch, round=rnd, detail=json.dumps(detail))
            csv_writer.writerow(row)
            csv_file.flush()

    def out_of_time():
        return args.time_limit > 0 and time.perf_counter() - t_start > args.time_limit

    results, torch_info, runs = [], None, 0
    for point in points:
        model, dataset, precision, mode, batch = point
        log(f"{model} {dataset} {mode} {precision} batch {batch}")
        t_runs, h_runs = [], []
        for r in range(args.repeat):
            if out_of_time():
                break
            tr = run_torch(args, *point)
            runs += 1
            record(tr, "torch", point, r)
            t_runs.append(tr)
            if "error" not in tr:
                torch_info = torch_info or tr
            line = (f"  round {r + 1}: torch " +
                    (f"error: {tr['error']}" if "error" in tr else f"{tr['img_per_s']:.1f} img/s") +
                    f" ({tr['wall_s']:.1f} s)")
            if not args.torch_only:  # a round is a pair: the time limit only stops new rounds
                hr = run_hpcnn(args, *point)
                runs += 1
                record(hr, "hpcnn", point, r)
                h_runs.append(hr)
                line += ", hpcnn " + (f"error: {hr['error']}" if "error" in hr else f"{hr['img_per_s']:.1f} img/s")
                line += f" ({hr['wall_s']:.1f} s)"
                if "error" not in hr and "error" not in tr:
                    line += f", ratio {hr['img_per_s'] / tr['img_per_s']:.2f}"
            log(line)
        t_ok = [x for x in t_runs if "error" not in x]
        h_ok = [x for x in h_runs if "error" not in x]
        t_ips = median([x["img_per_s"] for x in t_ok]) if t_ok else None
        h_ips = median([x["img_per_s"] for x in h_ok]) if h_ok else None
        ratio = h_ips / t_ips if (h_ips and t_ips) else None
        pair = [h["img_per_s"] / t["img_per_s"] for t, h in zip(t_runs, h_runs) if "error" not in t and "error" not in h]

        t_params = next((x.get("params") for x in t_ok), None)
        h_params = next((x.get("params") for x in h_ok), None)
        if t_params and h_params and int(t_params) != int(h_params):
            log(f"  note: parameters differ: torch {int(t_params):,}, hpcnn {int(h_params):,}")
        target = TARGETS[mode]
        if not t_runs or (not args.torch_only and not h_runs):
            verdict = "skipped"
        elif ratio is None:  # FAIL when hpcnn failed; no verdict when only torch did
            verdict = "FAIL" if not args.torch_only and not h_ok else "-"
        else:
            verdict = "PASS" if ratio >= target else "FAIL"
        results.append(dict(model=model, dataset=dataset, mode=mode, precision=precision, batch=batch,
                            torch=t_ips, hpcnn=h_ips, ratio=ratio, pair=pair, target=target, verdict=verdict,
                            torch_error=t_runs[-1]["error"] if t_runs and not t_ok else None,
                            hpcnn_error=h_runs[-1]["error"] if h_runs and not h_ok else None,
                            hpcnn_mib=combined(h_ok, "gpu_peak_mib", max),
                            torch_mib=combined(t_ok, "gpu_peak_mib", max),
                            hpcnn_j=combined(h_ok, "joules_per_image", median),
                            torch_j=combined(t_ok, "joules_per_image", median)))
    if csv_file:
        csv_file.close()

    # ---------------------------------------------------------------- the table
    def cell(x, err, spec=".1f"):  # the whole message is in --csv
        return ("error: " + (err if len(err) <= 100 else err[:97] + "...")) if err else fmt_num(x, spec)

    with_energy = any(r["hpcnn_j"] is not None or r["torch_j"] is not None for r in results)
    head = ["model", "dataset", "mode", "precision", "batch", "torch img/s"]
    if not args.torch_only:
        head += ["hpcnn img/s", "ratio"] + (["ratio range"] if args.repeat > 1 else []) + ["target", "result",
                                                                                          "hpcnn GPU MiB"]
    head += ["torch GPU MiB"]
    if with_energy:
        head += (["hpcnn J/img"] if not args.torch_only else []) + ["torch J/img"]
    rows = []
    for r in results:
        row = [r["model"], r["dataset"], r["mode"], r["precision"], str(r["batch"]),
               cell(r["torch"], r["torch_error"])]
        if not args.torch_only:
            row += [cell(r["hpcnn"], r["hpcnn_error"]), fmt_num(r["ratio"], ".2f")]
            if args.repeat > 1:
                row += [f"{min(r['pair']):.2f}-{max(r['pair']):.2f}" if r["pair"] else "-"]
            row += [f"{r['target']:.1f}", r["verdict"], fmt_num(r["hpcnn_mib"], ".0f")]
        row += [fmt_num(r["torch_mib"], ".0f")]
        if with_energy:
            row += ([fmt_num(r["hpcnn_j"], ".3f")] if not args.torch_only else []) + [fmt_num(r["torch_j"], ".3f")]
        rows.append(row)

    machine, settings, command = describe(args, torch_info)
    iters = (f"medians of {args.repeat} alternating round(s) of {args.iters} timed iterations "
             f"(after {args.warmup} warm-up) per side; ratio = hpcnn / torch img/s; target: "
             f"train {TARGETS['train']:.1f}, infer {TARGETS['infer']:.1f}; GPU MiB = peak allocated "
             f"(torch.cuda.max_memory_allocated; hpcnn gpu_peak_mib)")
    if args.markdown:
        print(f"{machine}  \n{settings}  \n`{command}`\n")
        print_table(head, rows, True)
        print(f"\n{started}; {iters}.")
    else:
        print(f"# {machine}\n# {settings}\n# {command}")
        print_table(head, rows, False)
        print(f"# {started}; {iters}")
    total = time.perf_counter() - t_start
    skipped = sum(1 for r in results if r["verdict"] == "skipped")
    print(("" if args.markdown else "# ") + f"total elapsed {elapsed_text(total)} ({runs} runs"
          + (f"; {skipped} point(s) skipped: --time-limit {args.time_limit:.0f} s" if skipped else "") + ")")
    bad = any(r["verdict"] in ("FAIL", "skipped") for r in results)
    return 1 if (args.strict and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
