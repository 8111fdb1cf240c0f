#!/usr/bin/env bash
# hpcnn-blas bad input: an unknown library, a size of 0, a thread count above what the library
# allows, --sizes outside --sweep gemm: one-line error naming the value, exit 2, no file left.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
have() { ./hpcnn-blas --list | grep -q "^  $1 "; }
# expect STATUS NEEDLE -- ARGS...: hpcnn-blas ARGS for one iteration (expect_error's checks).
expect() { expect_error "$1" "$2" -- ./hpcnn-blas "${@:4}" --iters 1 --warmup 0; }

expect 2 "'nosuchblas'"  -- --sweep gemm --backend nosuchblas --sizes 64
expect 2 "'nosuchblas'"  -- --sweep model --backend nosuchblas
expect 2 "'0'"           -- --sweep gemm --sizes 0
expect 2 "'64x0x64'"     -- --sweep gemm --sizes 64x0x64
expect 2 "'12x'"         -- --sweep gemm --sizes 12x
expect 2 "'-2'"          -- --sweep gemm --threads -2
expect 2 "'bogus'"       -- --sweep bogus
expect 2 "--sizes"       -- --sweep layers --sizes 64
expect 2 "'vgg99'"       -- --sweep layers --model vgg99
if have openblas; then
  # OpenBLAS's MAX_THREADS is a build choice: the limit as --list shows it.
  max=$(./hpcnn-blas --list | sed -n 's/^  openblas .*\[--threads at most \([0-9]*\)\]$/\1/p')
  if [ -z "$max" ]; then
    echo "FAIL: hpcnn-blas --list shows no thread limit for openblas"; fail=1
  elif [ $((max + 1)) -le 4096 ]; then
    over=$((max + 1))
    expect 2 "--threads $over: library 'openblas' accepts at most $max" -- --sweep gemm --backend openblas --threads 1,$over --sizes 64
    expect 2 "--threads $over: backend 'openblas' accepts at most $max" -- --sweep model --backend openblas --threads $over
    expect 2 "--threads $over: backend 'openblas' accepts at most $max" -- --sweep layers --backend openblas --threads $over
  fi
fi
if have eigen; then
  expect 2 "4097"        -- --sweep gemm --backend eigen --threads 4097 --sizes 64
fi
# --precision: a library without a bf16 GEMM, and a CPU without bf16 kernels, are usage errors.
expect 2 "'fp8'"         -- --sweep gemm --precision fp8 --sizes 64
if have openblas; then
  expect 2 "--precision bf16: library 'openblas' has no bf16 GEMM" -- --sweep gemm --backend openblas --precision bf16 --sizes 64
fi
if have dnnl && ! ./hpcnn-train --list | grep -q -- '--precision fp32,bf16 on this CPU'; then
  expect 2 "--precision bf16: library 'dnnl'" -- --sweep gemm --backend dnnl --precision bf16 --sizes 64
fi
./hpcnn-blas --help | grep -q -- '--sizes' || { echo "FAIL: --help lacks --sizes"; fail=1; }
exit $fail
