#!/usr/bin/env python3
"""The PyTorch side of bench/compare_pytorch.py: times one (model, mode, batch, threads) point.

Run it with any interpreter that has torch (Debian's /usr/bin/python3, a venv with the PyPI wheel);
it needs nothing but torch and models_torch.py next to it. The last line of stdout is one JSON
object with the result; everything else goes to stderr.

  train: model.train(); zero_grad; forward; CrossEntropyLoss; backward; SGD(lr, momentum) step
  infer: model.eval() under torch.no_grad(); forward only
  --precision bf16: the step under torch.autocast("cpu", dtype=torch.bfloat16), as PyTorch users
  run bf16 on a CPU (convolutions and linear layers in bf16, the loss in fp32, fp32 weights)
  --precision int8 (infer): post-training static quantization in FX graph mode with the x86
  engine's default qconfig (torch.ao.quantization: per-channel s8 weights, u8 activations,
  histogram observers), calibrated on 4 batches, as PyTorch documents int8 inference on the CPU
The input is synthetic (normal images, uniform labels), a few batches pre-generated and cycled,
as hpcnn's synthetic data set does. Every iteration is timed alone; img_per_s is delivered, as
hpcnn's is (the timed images over the timed iterations' total), img_per_s_median beside it.
--memory-format auto times contiguous (NCHW) and channels_last briefly and keeps the faster.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=30, help="timed iterations")
    p.add_argument("--warmup", type=int, default=10, help="untimed iterations first")
    p.add_argument("--image-size", type=int, default=None, help="default: hpcnn's size for the model")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--memory-format", choices=("auto", "nchw", "channels_last"), default="auto")
    p.add_argument("--probe-iters", type=int, default=8,
                   help="timed iterations per format when --memory-format auto")
    p.add_argument("--impl", choices=("auto", "torchvision", "local"), default="auto",
                   help="where the resnets come from (see models_torch.py)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--precision", choices=("fp32", "bf16", "int8"), default="fp32")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="after timing, profile N more iterations with torch.profiler and print "
                        "the time per op to stderr (where torch's time goes)")
    return p.parse_args(argv)


def quantize_int8(torch, model, images):
    """Post-training static int8 quantization (FX graph mode, x86 engine), calibrated on `images`."""
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "x86"
    model.eval()
    prepared = prepare_fx(model, get_default_qconfig_mapping("x86"), example_inputs=(images[0],))
    with torch.no_grad():
        for x in images:
            prepared(x)
    return convert_fx(prepared)


def main(argv=None):
    args = parse_args(argv)
    # Before torch starts its OpenMP pool, so it never holds more threads than asked for.
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    from torch import nn
    import models_torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model, shape, impl = models_torch.build(args.model, args.classes, args.image_size, args.impl)
    params = models_torch.param_count(model)
    expected = models_torch.EXPECTED_PARAMS[args.model]
    if args.image_size in (None, models_torch.DEFAULT_IMAGE_SIZE[args.model]) and params != expected:
        raise SystemExit(f"torch_bench: {args.model} has {params} parameters, hpcnn's has {expected}")

    train = args.mode == "train"
    nbatches = 4
    images = [torch.randn(args.batch, *shape) for _ in range(nbatches)]
    labels = [torch.randint(0, args.classes, (args.batch,)) for _ in range(nbatches)]
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum) if train else None

    if args.precision == "int8":
        if train:
            raise SystemExit("torch_bench: --precision int8 is for --mode infer")
        model = quantize_int8(torch, model, images)

    def set_format(fmt):
        mf = torch.channels_last if fmt == "channels_last" else torch.contiguous_format
        model.to(memory_format=mf)
        return [x.contiguous(memory_format=mf) for x in images]

    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16")

    def step(x, y):
        with autocast:
            forward_backward(x, y)

    def forward_backward(x, y):
        if train:
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        else:
            model(x)

    def run(fmt, warmup, iters):
        xs = set_format(fmt)
        model.train(train)
        times = []
        with torch.set_grad_enabled(train):
            for k in range(warmup + iters):
                x, y = xs[k % nbatches], labels[k % nbatches]
                t0 = time.perf_counter()
                step(x, y)
                t1 = time.perf_counter()
                if k >= warmup:
                    times.append(t1 - t0)
        return times

    probe = {}
    fmt = args.memory_format
    if fmt == "auto":
        for f in ("nchw", "channels_last"):
            probe[f] = statistics.median(run(f, max(2, args.warmup // 2), args.probe_iters))
        fmt = min(probe, key=probe.get)
    times = run(fmt, args.warmup, args.iters)
    med = statistics.median(times)
    if args.profile:
        xs = set_format(fmt)
        with torch.set_grad_enabled(train), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for k in range(args.profile):
                step(xs[k % nbatches], labels[k % nbatches])
        print(f"torch {torch.__version__} {args.model} {args.mode} ({fmt}), {args.profile} iterations:",
              file=sys.stderr)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25), file=sys.stderr)
    result = {
        "side": "torch",
        "torch": torch.__version__,
        "python": sys.executable,
        "impl": impl,
        "model": args.model,
        "mode": args.mode,
        "batch": args.batch,
        "threads": torch.get_num_threads(),
        "image_size": shape[1],
        "params": params,
        "memory_format": fmt,
        "precision": args.precision,
        "probe_median_s": probe,
        "iters": args.iters,
        "warmup": args.warmup,
        "iter_median_s": med,
        "iter_mean_s": statistics.fmean(times),
        "iter_min_s": min(times),
        "img_per_s": args.batch / statistics.fmean(times),
        "img_per_s_median": args.batch / med,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
