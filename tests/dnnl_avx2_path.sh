#!/usr/bin/env bash
# oneDNN picks other kernels on AVX2 than on AVX-512, and the dnnl backend adapts to
# some of them: a 3x3 kernel larger than its map gets its weight gradient as one GEMM over the
# batch (kernels/dnnl/conv_batch_gemm.hpp), and a convolution that only oneDNN's gemm fallback
# implements (AlexNet's 11x11/4 first layer) runs channels-last. CI's machine may have either
# instruction set, so this test caps oneDNN to AVX2 (ONEDNN_MAX_CPU_ISA, and DNNL_MAX_CPU_ISA
# for 2.x) and runs on that path what checks the dnnl backend's numbers: test_backends' dnnl
# cases (every op against the reference backend, forward and backward) and test_network without
# the other CPU libraries (whole models against the reference, fusion, finite differences). A
# short hpcnn-infer's result file must name the capped instruction set. oneDNN has no bf16 kernel
# on AVX2: --precision bf16 must end with one line naming what the CPU lacks (exit 2, no file),
# and `--list` must say so.
# On an AVX2-only machine the cap changes nothing (the same tests ran uncapped). Skipped (77)
# when this build has no dnnl backend or the CPU has no AVX2.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"

./hpcnn-train --list | grep -q '^  dnnl ' || { echo "skipped: this build has no dnnl backend"; exit 77; }
grep -qw avx2 /proc/cpuinfo || { echo "skipped: this CPU has no AVX2"; exit 77; }
export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2

run ./tests/test_backends --gtest_brief=1 --gtest_filter='*dnnl*'
run ./tests/test_network --gtest_brief=1 --gtest_filter='-*openblas*:*eigen*'
run ./hpcnn-infer --model alexnet --backend dnnl --batch 2 --iters 1 --warmup 1 --quiet --output "$out/res"
isa=$(h5dump -a /provenance/libraries/oneDNN_isa "$out"/res/*.h5 | sed -n 's/^ *(0): "\(.*\)"/\1/p')
case "$isa" in
  avx2*) echo "ok:   result file: oneDNN instruction set $isa" ;;
  *) echo "FAIL: with ONEDNN_MAX_CPU_ISA=AVX2 the result file names instruction set '$isa'"; fail=1 ;;
esac
expect_error 2 "--precision bf16: backend 'dnnl': oneDNN has no bf16 convolution kernel for this CPU (its ISA: avx2" \
  -- ./hpcnn-train --model lenet5 --backend dnnl --precision bf16 --iters 1 --warmup 0
./hpcnn-train --list | grep -q -- '--precision fp32 (bf16: oneDNN has no bf16' ||
  { echo "FAIL: hpcnn-train --list does not say bf16 is unavailable:"; ./hpcnn-train --list | grep -- '--precision'; fail=1; }
exit $fail
