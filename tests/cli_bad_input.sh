#!/usr/bin/env bash
# Bad input to the suites: a one-line error naming the bad value, exit status 2 (usage) or 1
# (runtime), and no result file (nor temporary file) left behind.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
# expect STATUS NEEDLE -- COMMAND...: COMMAND for one iteration (expect_error's checks; a limit the
# check misses can hang the library, oneDNN above OMP_THREAD_LIMIT: expect_error's timeout, 124).
expect() { expect_error "$1" "$2" -- "${@:4}" --iters 1 --warmup 0; }

for exe in ./hpcnn-train ./hpcnn-infer; do
  expect 2 "'vgg99'"      -- $exe --model vgg99
  expect 2 "'cuda9'"      -- $exe --backend cuda9
  expect 2 "'0'"          -- $exe --batch 0
  expect 2 "'-3'"         -- $exe --threads -3
  expect 2 "'x'"          -- $exe --batch 16,x
  expect 2 "'--bogus'"    -- $exe --bogus
  expect 2 "'svhn'"       -- $exe --dataset svhn
done
# int8 is inference on a backend that has it, with calibration data.
expect 2 "'int8'" -- ./hpcnn-train --precision int8
expect 2 "'int8'" -- ./hpcnn-scale --precision int8
expect 2 "--precision int8 needs calibration data: --calibration-batches 0" -- ./hpcnn-infer --precision int8 --calibration-batches 0
expect 2 "--precision int8: backend 'reference'" -- ./hpcnn-infer --backend reference --precision int8

# --threads above what a backend's library accepts: a usage error before any point runs,
# naming the value, the backend and the limit. The limits come from --list ("[--threads at most
# N]"), so the test follows the library this build has (OpenBLAS's MAX_THREADS is a build choice);
# 1,N+1 checks that a valid count earlier in the list does not start a point first.
limits=$(./hpcnn-train --list | sed -n 's/^  \([a-z0-9_-]*\) .*\[--threads at most \([0-9]*\)\]$/\1 \2/p')
if ./hpcnn-train --list | grep -q '^  openblas ' && [[ "$limits" != *"openblas "* ]]; then
  echo "FAIL: --list shows no thread limit for openblas"; fail=1
fi
checked=0
while read -r backend max; do
  [ -n "$backend" ] || continue
  over=$((max + 1))
  [ "$over" -le 4096 ] || continue  # above the option's own range: a different (parse) error
  for exe in ./hpcnn-train ./hpcnn-infer ./hpcnn-scale; do
    expect 2 "--threads $over: backend '$backend' accepts at most $max threads" -- $exe --backend "$backend" --threads "1,$over"
  done
  expect 2 "--threads $over: backend '$backend'" -- ./hpcnn-train --backend "reference,$backend" --threads "$over"
  checked=$((checked + 1))
done <<< "$limits"
# hpcnn-train --data (the accuracy suite) checks the same before it reads any data.
if [[ "$limits" == *"openblas 64"* ]]; then
  expect_error 2 "--threads 65: backend 'openblas'" -- ./hpcnn-train --data mnist --backend openblas --threads 65
fi
# oneDNN's limit is OpenMP's: OMP_THREAD_LIMIT makes one that every OpenMP runtime honours.
if ./hpcnn-train --list | grep -q '^  dnnl '; then
  expect 2 "--threads 3: backend 'dnnl' accepts at most 2 threads" -- env OMP_THREAD_LIMIT=2 ./hpcnn-train --backend dnnl --threads 3
  checked=$((checked + 1))
fi
echo "thread limits checked for $checked backend(s)"
# An output directory that cannot be created (a path below a regular file fails even for root).
err=$(./hpcnn-train --model lenet5 --output /etc/hostname/results --iters 1 --warmup 0 2>&1 >/dev/null); status=$?
if [ "$status" != 1 ] || [[ "$err" != *"/etc/hostname/results"* ]] || [ "$(printf '%s' "$err" | grep -c '')" != 1 ]; then
  echo "FAIL: unwritable output -> status $status, stderr: $err"; fail=1
else
  echo "ok:   unwritable output -> 1: $err"
fi
# Help and version succeed.
./hpcnn-train --help | grep -q -- '--batch' || { echo "FAIL: --help"; fail=1; }
./hpcnn-infer --version | grep -q 'hpcnn' || { echo "FAIL: --version"; fail=1; }
./hpcnn-train --list | grep -q 'resnet50' || { echo "FAIL: --list"; fail=1; }
exit $fail
