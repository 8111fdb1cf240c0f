#!/usr/bin/env python3
"""Real-data accuracy and epoch time: hpcnn-train --data against PyTorch with the same settings.

The target: lenet5 on Fashion-MNIST (1x28x28 padded to 32x32 with zero pixels, i.e.
hpcnn's --image-size 32), batch 64, SGD lr 0.01 momentum 0.9, 3 epochs, 2 threads: hpcnn's test
accuracy within 1 percentage point of PyTorch's and its epoch time at most PyTorch's.

Both sides read the same idx.gz files (PyTorch through gzip + numpy, no torchvision), normalize with
the training set's mean and standard deviation, reshuffle every epoch, keep the short last batch
(60000 = 937 x 64 + 32), and evaluate the whole test set after every epoch. Epoch time is the
training loop only (batches assembled from the decoded set, forward, backward, update); PyTorch's
set is pre-normalized in memory, hpcnn converts each batch from bytes in its loader thread.
The rounds alternate (hpcnn, PyTorch, hpcnn, ...) with different seeds; medians are reported.

    /usr/bin/python3 bench/accuracy_vs_pytorch.py --hpcnn-build . [--repeat 3] [--epochs 3]
"""
import argparse
import csv
import gzip
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def read_idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(data_dir, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(data_dir, name)):
            return os.path.join(data_dir, name)
    sys.exit(f"accuracy_vs_pytorch: {stem}[.gz] not found in {data_dir}")


def run_torch(args, seed):
    import torch
    from torch import nn
    from models_torch import LeNet5

    torch.set_num_threads(args.threads)
    torch.manual_seed(seed)
    xtr = read_idx(find(args.data, "train-images-idx3-ubyte")).astype(np.float32) / 255.0
    ytr = read_idx(find(args.data, "train-labels-idx1-ubyte")).astype(np.int64)
    xte = read_idx(find(args.data, "t10k-images-idx3-ubyte")).astype(np.float32) / 255.0
    yte = read_idx(find(args.data, "t10k-labels-idx1-ubyte")).astype(np.int64)
    if args.train_limit:
        xtr, ytr = xtr[:args.train_limit], ytr[:args.train_limit]
    mean, std = float(xtr.mean(dtype=np.float64)), float(xtr.std(dtype=np.float64))
    pad = (args.image_size - xtr.shape[1]) // 2

    def prep(x):  # zero pixels around, then normalize (as hpcnn's loader)
        x = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
        return torch.from_numpy(((x - mean) / std).astype(np.float32)).unsqueeze(1)

    xtr, xte = prep(xtr), prep(xte)
    ytr, yte = torch.from_numpy(ytr), torch.from_numpy(yte)
    model = LeNet5(classes=10, in_channels=1, image_size=args.image_size)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(seed)
    epochs = []
    for _ in range(args.epochs):
        model.train()
        t0 = time.perf_counter()
        order = torch.randperm(len(ytr), generator=gen)
        for k in range(0, len(order), args.batch):
            idx = order[k:k + args.batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
        epoch_s = time.perf_counter() - t0
        model.eval()
        correct = 0
        with torch.no_grad():
            for k in range(0, len(yte), args.batch):
                correct += int((model(xte[k:k + args.batch]).argmax(1) == yte[k:k + args.batch]).sum())
        epochs.append({"epoch_s": epoch_s, "test_acc": 100.0 * correct / len(yte)})
    return {"side": "pytorch", "seed": seed, "epochs": epochs, "version": torch.__version__}


def run_hpcnn(args, seed):
    out = tempfile.mkdtemp(prefix="hpcnn_acc_")
    cmd = [os.path.join(args.hpcnn_build, "hpcnn-train"), "--data", args.data, "--model", "lenet5",
           "--backend", args.backend, "--batch", str(args.batch), "--lr", str(args.lr), "--momentum", str(args.momentum),
           "--epochs", str(args.epochs), "--threads", str(args.threads), "--image-size", str(args.image_size),
           "--seed", str(seed), "--output", out, "--quiet"]
    if args.train_limit:
        cmd += ["--train-limit", str(args.train_limit)]
    if args.verbose:
        print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    text = subprocess.run([os.path.join(args.hpcnn_build, "hpcnn-summary"), "--table", "accuracy", "--format", "csv", out],
                          check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    subprocess.run(["rm", "-rf", out], check=True)
    return {"side": "hpcnn", "seed": seed,
            "epochs": [{"epoch_s": float(r["epoch_s"]), "test_acc": float(r["test_acc"])} for r in rows]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hpcnn-build", default=".", metavar="DIR")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist", metavar="DIR")
    p.add_argument("--backend", default="dnnl")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--train-limit", type=int, default=0, help="first N training images only (quick checks)")
    p.add_argument("--repeat", type=int, default=3, help="alternating rounds, seeds 1..N")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()

    runs = {"hpcnn": [], "pytorch": []}
    version = "?"
    for seed in range(1, args.repeat + 1):
        for side in ("hpcnn", "pytorch") if seed % 2 else ("pytorch", "hpcnn"):
            r = run_hpcnn(args, seed) if side == "hpcnn" else run_torch(args, seed)
            version = r.get("version", version)
            runs[side].append(r)
            last = r["epochs"][-1]
            times = ", ".join(f"{e['epoch_s']:.2f}" for e in r["epochs"])
            print(f"  {side:8s} seed {seed}: test accuracy {last['test_acc']:.2f} %, epoch times [{times}] s", flush=True)

    def med(side, key):
        return statistics.median(r["epochs"][-1][key] if key == "test_acc" else statistics.median(e[key] for e in r["epochs"])
                                 for r in runs[side])

    acc_h, acc_t = med("hpcnn", "test_acc"), med("pytorch", "test_acc")
    ep_h, ep_t = med("hpcnn", "epoch_s"), med("pytorch", "epoch_s")
    diff, ratio = acc_h - acc_t, ep_h / ep_t
    print(f"lenet5 on {args.data}, batch {args.batch}, SGD lr {args.lr} momentum {args.momentum}, {args.epochs} epochs, "
          f"{args.threads} threads, {args.repeat} rounds (PyTorch {version}, hpcnn backend {args.backend})")
    print(f"test accuracy after epoch {args.epochs} (median): hpcnn {acc_h:.2f} %, PyTorch {acc_t:.2f} %, "
          f"difference {diff:+.2f} pp (target |diff| <= 1): {'met' if abs(diff) <= 1 else 'MISSED'}")
    print(f"epoch time (median): hpcnn {ep_h:.2f} s, PyTorch {ep_t:.2f} s, ratio hpcnn/PyTorch {ratio:.3f} "
          f"(target <= 1): {'met' if ratio <= 1 else 'MISSED'}")
    if args.strict and (abs(diff) > 1 or ratio > 1):
        sys.exit(1)


if __name__ == "__main__":
    main()
