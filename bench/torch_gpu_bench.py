#!/usr/bin/env python3
"""The PyTorch side of bench/gpu_vs_pytorch.py: times one (model, data set, mode, batch, precision)
point on the GPU in plain eager PyTorch, as users run it.

    python3 bench/torch_gpu_bench.py --model resnet50 --dataset imagenet --mode train --batch 128
        [--precision fp32|tf32|bf16] [--iters 20] [--warmup 5] [--no-cudnn-benchmark] [--compile]
        [--memory-format channels_last|nchw] [--device cuda|cpu]

The last line of stdout is one JSON object with the result; everything else goes to stderr.
One iteration does the same work as hpcnn's timed iteration on the cuda backend:

  copy     the batch (images; labels too when training) from page-locked host memory to the
           GPU, .to(device, non_blocking=True)
  train    model.train(); zero_grad(set_to_none=True); forward; CrossEntropyLoss; backward;
           SGD(lr 0.01, momentum 0.9) step
  infer    model.eval() under torch.inference_mode(); forward only
  sync     torch.cuda.synchronize(), then time.perf_counter(): the iteration's end

Model: models_torch.build(), i.e. torchvision.models.resnet50(num_classes=classes) for resnet50,
model and input in channels_last (--memory-format). Data set shapes as hpcnn's synthetic ones:
imagenet 3x224x224 with 1000 classes, cifar10 3x32x32 with 10 classes.
Precision:
  fp32   no TF32 anywhere (cuDNN convolutions and cuBLAS matmuls in IEEE fp32)
  tf32   TF32 allowed for cuDNN convolutions and cuBLAS matmuls
  bf16   torch.autocast(device, dtype=bfloat16) around forward + loss, fp32 master weights
         (no GradScaler: bf16 has fp32's range); TF32 allowed for what autocast leaves in fp32
torch.backends.cudnn.benchmark is on unless --no-cudnn-benchmark. torch.compile is off unless
--compile (its compilation then happens in the warm-up iterations; raise --warmup).
Every iteration after the warm-up is timed alone; their mean gives img_per_s (delivered, as
hpcnn's), their median img_per_s_median. gpu_peak_mib is
torch.cuda.max_memory_allocated() over the whole run (the caching allocator's reserved peak is
gpu_reserved_peak_mib). With pynvml importable, joules_per_image comes from the GPU's energy
counter over the timed iterations; without it the field is null.

--device cpu exists to test this script on a machine without a GPU (no page-locked memory,
bf16 autocast on the CPU, no memory figures).
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# hpcnn's synthetic data set shapes: (image side, classes).
DATASETS = {"imagenet": (224, 1000), "cifar10": (32, 10), "cifar100": (32, 100)}
PRECISIONS = ("fp32", "tf32", "bf16")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--dataset", choices=sorted(DATASETS), default="imagenet")
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--iters", type=int, default=20, help="timed iterations")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations first")
    p.add_argument("--image-size", type=int, default=None, help="default: the data set's")
    p.add_argument("--classes", type=int, default=None, help="default: the data set's")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--memory-format", choices=("channels_last", "nchw"), default="channels_last")
    p.add_argument("--cudnn-benchmark", action=argparse.BooleanOptionalAction, default=True,
                   help="torch.backends.cudnn.benchmark (default: on)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (default: off)")
    p.add_argument("--impl", choices=("auto", "torchvision", "local"), default="auto",
                   help="where the resnets come from (see models_torch.py)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: only to test this script where there is no GPU")
    p.add_argument("--host-batches", type=int, default=2,
                   help="distinct page-locked host batches, cycled")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if args.iters < 1 or args.warmup < 0 or args.batch < 1 or args.host_batches < 1:
        p.error("--iters and --batch must be positive, --warmup not negative")
    return args


def set_tf32(torch, allowed):
    """Allows or forbids TF32 in cuDNN convolutions and cuBLAS matmuls. Uses the fp32_precision
    API where torch has it (2.9 and later; the allow_tf32 flags are deprecated there and must
    not be mixed with it), else the allow_tf32 flags. Returns what was set, for the report."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision") and hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        value = "tf32" if allowed else "ieee"
        torch.backends.cudnn.conv.fp32_precision = value
        torch.backends.cuda.matmul.fp32_precision = value
        return {"api": "fp32_precision", "cudnn.conv": torch.backends.cudnn.conv.fp32_precision,
                "cuda.matmul": torch.backends.cuda.matmul.fp32_precision}
    torch.backends.cudnn.allow_tf32 = allowed
    torch.backends.cuda.matmul.allow_tf32 = allowed
    return {"api": "allow_tf32", "cudnn": torch.backends.cudnn.allow_tf32,
            "cuda.matmul": torch.backends.cuda.matmul.allow_tf32}


def energy_counter(torch, device):
    """A function returning the GPU's energy counter in joules, or None (no pynvml, no GPU)."""
    if device != "cuda":
        return None
    try:
        import pynvml
        pynvml.nvmlInit()
        index = torch.cuda.current_device()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:  # NVML numbers all GPUs; CUDA only the visible ones
            index = int(visible.split(",")[index])
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)  # fails where unsupported
        return lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) / 1000.0  # mJ -> J
    except Exception:
        return None


def main(argv=None):
    args = parse_args(argv)
    import torch
    from torch import nn
    import models_torch

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("torch_gpu_bench: torch sees no CUDA device (--device cpu to test without one)")
    device = torch.device(args.device)
    size, classes = DATASETS[args.dataset]
    size = args.image_size or size
    classes = args.classes or classes

    tf32 = set_tf32(torch, args.precision != "fp32") if cuda else None
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    torch.manual_seed(args.seed)

    model, shape, impl = models_torch.build(args.model, classes, size, args.impl)
    params = models_torch.param_count(model)
    mf = torch.channels_last if args.memory_format == "channels_last" else torch.contiguous_format
    model = model.to(device=device, memory_format=mf)
    train = args.mode == "train"
    if train:
        model.train()
    else:
        model.eval()
    run_model = torch.compile(model) if args.compile else model
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum) if train else None

    # Host batches, page-locked (pinned) on a GPU run, already in the model's memory format so
    # that the copy is the only per-iteration work on the input.
    c, h, w = shape
    images, labels = [], []
    for _ in range(args.host_batches):
        if args.memory_format == "channels_last":  # NHWC storage seen as an NCHW tensor
            x = torch.empty(args.batch, h, w, c, pin_memory=cuda).permute(0, 3, 1, 2)
        else:
            x = torch.empty(args.batch, c, h, w, pin_memory=cuda)
        x.copy_(torch.randn(args.batch, c, h, w))
        y = torch.empty(args.batch, dtype=torch.long, pin_memory=cuda)
        y.copy_(torch.randint(0, classes, (args.batch,)))
        images.append(x)
        labels.append(y)

    autocast_dtype = torch.bfloat16 if args.precision == "bf16" else None

    def forward_loss(x, y):
        if autocast_dtype is None:
            out = run_model(x)
            return out, (criterion(out, y) if train else None)
        with torch.autocast(device_type=args.device, dtype=autocast_dtype):
            out = run_model(x)
            return out, (criterion(out, y) if train else None)

    def step(k):
        x = images[k % args.host_batches].to(device, non_blocking=True)
        if train:
            y = labels[k % args.host_batches].to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            out, loss = forward_loss(x, y)
            loss.backward()
            optimizer.step()
            return x, out, loss
        out, _ = forward_loss(x, None)
        return x, out, None

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    energy = energy_counter(torch, args.device)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times = []
    last = None
    grad_context = torch.enable_grad() if train else torch.inference_mode()
    with grad_context:
        for k in range(args.warmup):
            last = step(k)
        sync()
        e0 = energy() if energy else None
        t0 = time.perf_counter()
        for k in range(args.warmup, args.warmup + args.iters):
            last = step(k)
            sync()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            t0 = t1
        e1 = energy() if energy else None

    x, out, loss = last
    if cuda and args.memory_format == "channels_last" and not x.is_contiguous(memory_format=torch.channels_last):
        print("torch_gpu_bench: warning: the input lost channels_last on its way to the GPU", file=sys.stderr)
    med = statistics.median(times)
    mib = 1024.0 * 1024.0
    result = {
        "side": "torch",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "gpu": torch.cuda.get_device_name() if cuda else "cpu",
        "python": sys.executable,
        "impl": impl,
        "model": args.model,
        "dataset": args.dataset,
        "mode": args.mode,
        "batch": args.batch,
        "precision": args.precision,
        "image_size": shape[1],
        "classes": classes,
        "params": params,
        "memory_format": args.memory_format,
        "cudnn_benchmark": args.cudnn_benchmark,
        "compile": args.compile,
        "tf32": tf32,
        "out_dtype": str(out.dtype).replace("torch.", ""),
        "final_loss": float(loss.detach()) if loss is not None else None,
        "iters": args.iters,
        "warmup": args.warmup,
        "iter_median_s": med,
        "iter_min_s": min(times),
        "iter_max_s": max(times),
        "iter_mean_s": statistics.fmean(times),
        "img_per_s": args.batch / statistics.fmean(times),
        "img_per_s_median": args.batch / med,
        "gpu_peak_mib": torch.cuda.max_memory_allocated() / mib if cuda else None,
        "gpu_reserved_peak_mib": torch.cuda.max_memory_reserved() / mib if cuda else None,
        "joules_per_image": (e1 - e0) / (args.iters * args.batch) if energy else None,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
