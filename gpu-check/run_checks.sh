#!/usr/bin/env bash
# gpu-check/run_checks.sh BUILD OUT [tests|bench|all] -- the GPU verification in one command, for a
# GPU machine without MPI (see gpu-check/runtime_env.sh for the MPI/HDF5 run time there).
#   tests : the GPU variants of the backend, network and memory-plan tests (tests/test_* --gpu),
#           compute-sanitizer's initcheck on one memory-plan case where the machine has it, the NCCL
#           collective tests, a short hpcnn-train / hpcnn-infer smoke run in every precision and
#           a fusion on/off comparison
#   bench : inference and training images/s against batch size side by side with PyTorch
#           (bench/gpu_vs_pytorch.py: experiments E1 and E3, docs/EXPERIMENTS.md), with GPU memory
#   all   : both
# BUILD holds the executables and tests/ of a build configured with CUDA; OUT receives the logs.
# Assumes the MPI run time is already in the environment (source gpu-check/runtime_env.sh first).
set -uo pipefail
build=${1:?usage: run_checks.sh BUILD OUT [tests|bench|all]}
out=${2:?usage: run_checks.sh BUILD OUT [tests|bench|all]}
what=${3:-all}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "$build" && pwd)
mkdir -p "$out"
step() { echo "=== $* ($(date +%T))"; }

if [ "$what" = tests ] || [ "$what" = all ]; then
  step "GPU"
  nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv
  step "test_backends --gpu"
  timeout "${HPCNN_TEST_SECONDS:-200}" "$build/tests/test_backends" --gpu --gtest_brief=1 > "$out/test_backends_gpu.txt" 2>&1
  echo "exit $?"; grep -E "FAILED|PASSED|SKIPPED:" "$out/test_backends_gpu.txt" | tail -40
  step "test_network --gpu"
  timeout "${HPCNN_TEST_SECONDS:-200}" "$build/tests/test_network" --gpu > "$out/test_network_gpu.txt" 2>&1
  echo "exit $?"; grep -E "\[ rule \]|FAILED|PASSED|SKIPPED:" "$out/test_network_gpu.txt" | tail -60
  step "test_memory_plan --gpu"
  timeout "${HPCNN_TEST_SECONDS:-200}" "$build/tests/test_memory_plan" --gpu > "$out/test_memory_plan_gpu.txt" 2>&1
  echo "exit $?"; grep -E "FAILED|PASSED|SKIPPED" "$out/test_memory_plan_gpu.txt" | tail -20
  # A case that did not repeat on an H200: does any kernel read device memory nobody wrote?
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [ -n "$sanitizer" ]; then
    step "compute-sanitizer initcheck: test_memory_plan, ResNet-18 at 32x32, fp32, no fusion"
    timeout "${HPCNN_TEST_SECONDS:-200}" "$sanitizer" --tool initcheck --print-limit 10 \
      "$build/tests/test_memory_plan" --gpu --gtest_filter='*cuda_resnet18_32_unfused' > "$out/initcheck.txt" 2>&1
    echo "exit $?"; grep -E "Uninitialized|ERROR SUMMARY|OK \]|FAILED \]" "$out/initcheck.txt" | head -20
  else
    echo "compute-sanitizer: not on this machine (skipped)"
  fi
  step "NCCL collectives (tests/nccl_collectives.sh)"
  (cd "$build" && HPCNN_SRCDIR="$root" HPCNN_BUILDDIR="$build" timeout "${HPCNN_TEST_SECONDS:-200}" \
    bash "$root/tests/nccl_collectives.sh") > "$out/nccl_collectives.txt" 2>&1
  echo "exit $?"; grep -E "FAIL|ok|SKIPPED" "$out/nccl_collectives.txt" | tail -20
  step "smoke: hpcnn-train / hpcnn-infer resnet50 imagenet batch 64, every precision"
  for p in fp32 tf32 bf16; do
    for s in train infer; do
      "$build/hpcnn-$s" --backend cuda --model resnet50 --dataset imagenet --batch 64 --precision $p \
        --iters 10 --warmup 5 --quiet --output "$out/smoke" 2>&1 | tail -2
    done
  done
  step "smoke: --cudnn-benchmark (bf16 train, fp32 infer)"
  "$build/hpcnn-train" --backend cuda --model resnet50 --dataset imagenet --batch 64 --precision bf16 \
    --cudnn-benchmark --iters 10 --warmup 5 --quiet --output "$out/smoke" 2>&1 | tail -2
  "$build/hpcnn-infer" --backend cuda --model resnet50 --dataset imagenet --batch 64 --precision fp32 \
    --cudnn-benchmark --iters 10 --warmup 5 --quiet --output "$out/smoke" 2>&1 | tail -2
  "$build/hpcnn-summary" "$out/smoke" --columns model,mode,precision,cudnn_benchmark,batch,img_per_s,iter_median_s,gpu_peak_mib,joules_per_image 2>&1
  step "fusion on vs off (resnet50 imagenet batch 128: tf32 train, bf16 infer)"
  "$build/hpcnn-train" --backend cuda --model resnet50 --dataset imagenet --batch 128 --precision tf32 \
    --fusion on,off --iters 10 --warmup 5 --quiet --output "$out/fusion" 2>&1 | tail -2
  "$build/hpcnn-infer" --backend cuda --model resnet50 --dataset imagenet --batch 128 --precision bf16 \
    --fusion on,off --iters 10 --warmup 5 --quiet --output "$out/fusion" 2>&1 | tail -2
  "$build/hpcnn-summary" "$out/fusion" --columns model,mode,precision,fusion,batch,img_per_s,gpu_peak_mib 2>&1
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  step "inference and training against PyTorch (E1, E3)"
  python3 "$root/bench/gpu_vs_pytorch.py" --hpcnn-build "$build" --markdown --csv "$out/gpu_vs_pytorch.csv" \
    --time-limit "${HPCNN_BENCH_SECONDS:-420}" ${HPCNN_BENCH_ARGS:-} 2>&1 | tee "$out/gpu_vs_pytorch.txt"
fi
step "done"
