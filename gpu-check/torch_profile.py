#!/usr/bin/env python3
"""Where PyTorch's GPU time goes in one ResNet training or inference step, by kernel family, to
compare with `hpcnn-train --profile ops` (per operator kind) on the same GPU:

    python3 gpu-check/torch_profile.py [--model resnet50] [--batch 128] [--image 224]
        [--classes 1000] [--precision fp32|tf32|bf16] [--mode train|infer] [--iters 10]

Kernels are grouped by name: convolution (cuDNN/CUTLASS conv and implicit-GEMM kernels),
batch_norm, elementwise (ReLU, add, copies), gemm (fully connected), optimizer, other. Printed as
milliseconds per iteration (CUDA time from the profiler, summed over kernels), plus the top kernels.
"""
import argparse
import collections

import torch
import torchvision


def family(name):
    n = name.lower()
    if "bn_" in n or "batch_norm" in n or "batchnorm" in n or "welford" in n:
        return "batch_norm"
    if any(k in n for k in ("conv", "dgrad", "wgrad", "fprop", "implicit", "xmma", "cudnn", "nhwc", "nchw")):
        return "convolution"
    if "gemm" in n or "cutlass" in n or "sm90" in n:
        return "gemm/conv-gemm"
    if "multi_tensor" in n or "sgd" in n or "foreach" in n:
        return "optimizer"
    if "elementwise" in n or "threshold" in n or "relu" in n or "add" in n or "copy" in n or "fill" in n:
        return "elementwise"
    return "other"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--image", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--precision", choices=("fp32", "tf32", "bf16"), default="tf32")
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument("--iters", type=int, default=10)
    a = p.parse_args()
    tf32 = a.precision != "fp32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, a.model)(num_classes=a.classes).cuda().to(memory_format=torch.channels_last)
    x = torch.randn(a.batch, 3, a.image, a.image, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, a.classes, (a.batch,), device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            if a.mode == "infer":
                with torch.inference_mode():
                    return model(x)
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    if a.mode == "infer":
        model.eval()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(a.iters):
            step()
        torch.cuda.synchronize()
    per_family = collections.Counter()
    per_kernel = collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            us = e.device_time if hasattr(e, "device_time") else e.cuda_time
            per_family[family(e.name)] += us
            per_kernel[e.name[:90]] += us
    total = sum(per_family.values())
    print(f"torch {torch.__version__} {a.model} {a.mode} {a.precision} batch {a.batch} image {a.image}: "
          f"GPU kernel time {total / a.iters / 1000:.2f} ms/iter")
    for fam, us in per_family.most_common():
        print(f"  {fam:16s} {us / a.iters / 1000:8.2f} ms  {100 * us / total:5.1f}%")
    print("  top kernels:")
    for name, us in per_kernel.most_common(12):
        print(f"    {us / a.iters / 1000:7.2f} ms  {name}")


if __name__ == "__main__":
    main()
