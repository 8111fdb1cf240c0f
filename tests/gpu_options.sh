#!/usr/bin/env bash
# The GPU options, and the backends' own settings (--conv-algorithm, --gemm-columns), wherever the
# tests run: bad combinations are usage errors (exit 2, one line naming the problem, no result
# file), in CUDA builds and in builds without CUDA alike; the dnnl backend records the convolution
# algorithm each point ran with; a CPU
# backend's exchange records exchange_memory host; and
# hpcnn-scale --preflight prints one row for the two ranks of mpirun -np 2 (ranks that agree share
# a row), saying "no GPU" and
# exiting 0 where there is none (and 1 when a GPU was asked for).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
MPI="timeout 120 $MPIRUN"
# Under mpirun, mpirun may add its own notice: expect_error counts only the suites' lines.
error_lines='^hpcnn-'

list=$(./hpcnn-allreduce --list)
echo "$list" | tail -2
if grep -q '^device memory: built' <<<"$list"; then cuda=1; else cuda=0; fi
if grep -q '^CUDA-aware MPI: yes' <<<"$list"; then aware=1; else aware=0; fi
grep -q '^CUDA-aware MPI: \(yes\|no\) (' <<<"$list" || { echo "FAIL: --list has no CUDA-aware MPI line"; fail=1; }

if [ $cuda = 1 ]; then
  expect_error 2 "nccl sums GPU memory only" -- ./hpcnn-allreduce --exchange nccl --memory host
  expect_error 2 "ring adds on the CPU" -- ./hpcnn-allreduce --exchange ring --memory device
  expect_error 2 "rhd adds on the CPU" -- ./hpcnn-allreduce --exchange rhd,mpi --memory host,device
  [ $aware = 1 ] || expect_error 2 "this MPI is not CUDA-aware" -- ./hpcnn-allreduce --exchange mpi --memory device
  expect_error 2 "backend 'reference' is a CPU backend" -- ./hpcnn-scale --model lenet5 --backend reference --exchange nccl
else
  expect_error 2 "unknown scheme 'nccl'" -- ./hpcnn-allreduce --exchange nccl --memory host
  expect_error 2 "this build has no CUDA" -- ./hpcnn-allreduce --exchange ring --memory device
  expect_error 2 "this build has no CUDA" -- ./hpcnn-allreduce --exchange mpi --memory device
fi
expect_error 2 "'gpu'" -- ./hpcnn-allreduce --memory gpu
# A cuda point on a machine without a usable GPU is skipped with its reason; the rest of the sweep
# runs and the exit status is 0. (With a GPU both points run.)
if ./hpcnn-train --list | grep -q '^  cuda '; then
  ./hpcnn-train --backend reference,cuda --model lenet5 --batch 4 --iters 2 --warmup 1 --quiet \
    --output "$out/skip" 2>"$out/skip.err"
  status=$?
  csv=$(./hpcnn-summary --format csv --columns backend,status,status_reason "$out/skip")
  echo "$csv"; cat "$out/skip.err"
  if grep -q '^cuda,ok,' <<<"$csv"; then
    echo "ok:   a GPU is here: the cuda point ran"
  elif [ "$status" = 0 ] && grep -q '^reference,ok,' <<<"$csv" &&
       grep -q "^cuda,skipped,skipped: backend 'cuda' cannot run here: " <<<"$csv" &&
       [ "$(grep -c 'point 2: skipped: ' "$out/skip.err")" = 1 ]; then
    echo "ok:   cuda without a GPU -> skipped with the reason, reference ok, exit 0"
  else
    echo "FAIL: cuda point without a GPU: exit $status"; fail=1
  fi
  ./tests/result_checker "$out/skip"/*.h5 || { echo "FAIL: result_checker on a file with a skipped point"; fail=1; }
fi

# GPU-only settings with a CPU backend, in every build.
expect_error 2 "--precision bf16: backend 'reference' computes in fp32 only" -- ./hpcnn-train --backend reference --precision fp32,bf16
expect_error 2 "--cudnn-benchmark: backend 'reference' is not a GPU backend" -- ./hpcnn-infer --backend reference --cudnn-benchmark
expect_error 2 "--layout nhwc: backend 'reference' is not a GPU backend" -- ./hpcnn-train --backend reference --layout nhwc
expect_error 2 "'fp16'" -- ./hpcnn-train --backend reference --precision fp16
expect_error 2 "--cudnn-api legacy: backend 'reference' is not a GPU backend" -- ./hpcnn-train --backend reference --cudnn-api legacy
expect_error 2 "--cudnn-bn-activation off: backend 'reference' is not a GPU backend" -- ./hpcnn-train --backend reference --cudnn-bn-activation off
# A backend's own settings: the convolution algorithm of dnnl, the im2col GEMM of openblas and eigen.
expect_error 2 "--conv-algorithm direct: backend 'reference' has no choice of convolution algorithm" -- ./hpcnn-train --backend reference --conv-algorithm auto,direct
expect_error 2 "--gemm-columns 2048: backend 'reference' runs no im2col GEMM" -- ./hpcnn-infer --backend reference --gemm-columns 2048
expect_error 2 "'winograd'" -- ./hpcnn-train --conv-algorithm winograd
if ./hpcnn-train --list | grep -q '^  dnnl '; then
  run ./hpcnn-infer --backend dnnl --model resnet18 --batch 2 --iters 1 --warmup 1 --conv-algorithm auto,direct --quiet --output "$out/algo"
  got=$(./hpcnn-summary --format csv --columns conv_algorithm,status "$out/algo" | tail -n +2 | paste -sd' ')
  [ "$got" = "auto,ok direct,ok" ] || { echo "FAIL: --conv-algorithm auto,direct recorded as '$got'"; fail=1; }
  h5dump -A "$out"/algo/*.h5 | grep -q -- '--conv-algorithm direct' || { echo "FAIL: no reproducer with --conv-algorithm direct"; fail=1; }
fi

# A CPU backend's exchange works on host memory, and the result says so.
run $MPI -np 2 ./hpcnn-scale --model lenet5 --backend reference --batch 4 --iters 2 --warmup 1 --exchange ring,ps-sync \
  --quiet --output "$out/cpu"
csv=$(./hpcnn-summary --format csv --columns exchange,exchange_memory,status "$out/cpu")
echo "$csv"
[ "$(grep -c '^\(ring\|ps-sync\),host,ok$' <<<"$csv")" = 2 ] || { echo "FAIL: want exchange_memory host for ring and ps-sync"; fail=1; }

# Preflight: a header and one row for the host's ranks 0 and 1 (ranks that agree share a row).
$MPI -np 2 ./hpcnn-scale --preflight --backend reference > "$out/pre" 2> "$out/pre.err"
status=$?
cat "$out/pre" "$out/pre.err"
head -1 "$out/pre" | grep -q '^rank  *host  *local  *gpu ' || { echo "FAIL: preflight header"; fail=1; }
[ "$(grep -c '^[0-9]' "$out/pre")" = 1 ] && grep -q '^0-1 .* 0-1 ' "$out/pre" ||
  { echo "FAIL: preflight: want one row for ranks 0-1, local ranks 0-1"; fail=1; }
if grep -q '^0-1 .*no GPU: ' "$out/pre"; then
  # No GPU here: the GPU checks are skipped, which is not a failure unless a GPU was asked for.
  [ "$status" = 0 ] && grep -q '^preflight: ok; GPU checks skipped: ' "$out/pre" ||
    { echo "FAIL: preflight without GPU -> $status, want 0 and 'GPU checks skipped'"; fail=1; }
  if [ $cuda = 1 ]; then
    expect_error 1 "preflight failed: rank 0: a GPU was asked for" -- ./hpcnn-scale --preflight --exchange nccl --backend reference
    # nccl without a GPU: the point fails on every rank with the reason, exit 1.
    expect_error 1 "sees no GPU" -- $MPI -np 2 ./hpcnn-allreduce --exchange nccl --sizes 4 --iters 1 --warmup 0 --quiet
  fi
else
  # A GPU machine: the status must match the verdict line (nccl_collectives.sh checks the rest).
  if { [ "$status" = 0 ] && grep -q '^preflight: ok' "$out/pre"; } ||
     { [ "$status" = 1 ] && grep -q '^preflight: FAILED: ' "$out/pre"; }; then echo "ok:   preflight with GPUs -> $status"
  else echo "FAIL: preflight with GPUs -> $status, verdict line does not match"; fail=1; fi
fi
exit $fail
