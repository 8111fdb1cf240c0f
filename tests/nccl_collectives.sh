#!/usr/bin/env bash
# NCCL on GPUs. Skipped (exit 77, saying why) in a build without CUDA or on a machine
# without a GPU; otherwise:
#   - tests/test_nccl at -np 1 and -np 2 (its NCCL cases need a GPU per rank: with one GPU the
#     -np 2 run skips them, saying so, and still trains the staged schemes on the shared GPU);
#   - hpcnn-allreduce --exchange nccl element by element (odd sizes, not divisible by the ranks);
#   - with one GPU, nccl at -np 2 must stop with one clear error naming 2 ranks and 1 GPU;
#   - mpi on device memory: runs when the MPI is CUDA-aware, else exit 2 with the reason;
#   - hpcnn-scale --preflight at -np 1: NCCL ok, exit 0;
#   - with a cuda backend in the build: hpcnn-scale trains with nccl on device memory and with
#     ring staged through the host, and records which.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
MPI="timeout 300 $MPIRUN"
if [ ! -x ./tests/test_nccl ]; then
  echo "SKIPPED: this build has no CUDA (tests/test_nccl is not built)"
  exit 77
fi
echo "=== mpirun -np 1 tests/test_nccl"
$MPI -np 1 ./tests/test_nccl
status=$?
[ "$status" = 77 ] && exit 77  # it printed "SKIPPED: no GPU (reason)"
[ "$status" = 0 ] || { echo "FAIL: -np 1 tests/test_nccl exited $status"; fail=1; }
gpus=$(./tests/test_nccl --count-gpus)
echo "=== GPUs visible: $gpus"
echo "=== mpirun -np 2 tests/test_nccl"
[ "$gpus" -ge 2 ] || echo "(one GPU: the NCCL cases of this run are SKIPPED; staged training still runs)"
run $MPI -np 2 ./tests/test_nccl

# hpcnn-allreduce: every element of every size checked by the suite (wrong = 0, exit 0).
allreduce_ok() {  # allreduce_ok NP EXCHANGE MEMORY
  local np=$1 ex=$2 mem=$3 dir="$out/ar-$1-$2-$3" csv
  run $MPI -np "$np" ./hpcnn-allreduce --exchange "$ex" --memory "$mem" --sizes 0,4,12,4004,1M,16777228 \
    --iters 3 --warmup 1 --quiet --output "$dir"
  csv=$(./hpcnn-summary --format csv --columns exchange,exchange_memory,ranks,size_bytes,wrong,status "$dir")
  echo "$csv"
  [ "$(grep -c "^$ex,device,$np,[0-9]*,0,ok$" <<<"$csv")" = 6 ] ||
    { echo "FAIL: $ex at -np $np: expected 6 rows on device memory with wrong = 0"; fail=1; }
}
allreduce_ok 1 nccl device
if [ "$gpus" -ge 2 ]; then
  allreduce_ok 2 nccl device
else
  # NCCL refuses two ranks on one GPU ("Duplicate GPU"): hpcnn must say so first, in one line.
  $MPI -np 2 ./hpcnn-allreduce --exchange nccl --sizes 4 --iters 1 --warmup 0 --quiet --output "$out/dup" 2>"$out/dup.err"
  status=$?
  cat "$out/dup.err"
  if [ "$status" = 1 ] && grep -q '2 ranks on host .* but only 1 GPU' "$out/dup.err"; then
    echo "ok:   nccl at -np 2 on one GPU -> exit 1 naming 2 ranks and 1 GPU"
  else echo "FAIL: nccl at -np 2 on one GPU -> exit $status without the ranks/GPUs message"; fail=1; fi
fi

# mpi on device memory: only with a CUDA-aware MPI (the run-time answer printed by --list).
if ./hpcnn-allreduce --list | grep -q '^CUDA-aware MPI: yes'; then
  allreduce_ok 1 mpi device
else
  err=$(./hpcnn-allreduce --exchange mpi --memory device --output "$out/mpi" 2>&1 >/dev/null); status=$?
  if [ "$status" = 2 ] && [[ "$err" == *"not CUDA-aware"* ]]; then echo "ok:   mpi --memory device -> 2: $err"
  else echo "FAIL: mpi --memory device without CUDA-aware MPI -> $status: $err"; fail=1; fi
fi

# Preflight on one GPU: NCCL's 1-element sum works, exit 0.
$MPI -np 1 ./hpcnn-scale --preflight --backend reference --exchange nccl > "$out/pre" 2>&1
status=$?
cat "$out/pre"
if [ "$status" = 0 ] && grep -q '^0 .*ok (sum 1)' "$out/pre" && grep -q '^preflight: ok$' "$out/pre"; then
  echo "ok:   --preflight -np 1 -> 0, NCCL ok"
else echo "FAIL: --preflight -np 1 -> $status (want 0 with 'ok (sum 1)')"; fail=1; fi

# Training on the GPU with nccl (device memory) and ring (staged), when the cuda backend exists.
if ./hpcnn-scale --list | grep -q '^  cuda '; then
  run $MPI -np 1 ./hpcnn-scale --model lenet5 --backend cuda --batch 8 --iters 3 --warmup 1 --exchange nccl,ring,mpi \
    --bucket-mb 0.01 --quiet --output "$out/scale"
  csv=$(./hpcnn-summary --format csv --columns exchange,exchange_memory,img_per_s,status "$out/scale")
  echo "$csv"
  grep -q '^nccl,device,[0-9.]*,ok$' <<<"$csv" || { echo "FAIL: nccl row (device memory)"; fail=1; }
  grep -q '^ring,host-staged,[0-9.]*,ok$' <<<"$csv" || { echo "FAIL: ring row (host-staged)"; fail=1; }
  grep -q '^mpi,\(device\|host-staged\),[0-9.]*,ok$' <<<"$csv" || { echo "FAIL: mpi row"; fail=1; }
else
  echo "SKIPPED part: hpcnn-scale on the GPU (this build has no cuda backend yet)"
fi
exit $fail
