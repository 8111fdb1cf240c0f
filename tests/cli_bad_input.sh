#!/usr/bin/env bash
# Bad input to the suites: a one-line error naming the bad value, exit status 2 (usage) or 1
# (runtime), and no result file (nor temporary file) left behind.
set -u
cd "${HPCNN_BUILDDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

expect() {  # expect STATUS NEEDLE -- command...
  local want=$1 needle=$2; shift 3
  local err status
  err=$("$@" --output "$out" --iters 1 --warmup 0 2>&1 >/dev/null); status=$?
  local lines; lines=$(printf '%s' "$err" | grep -c '')
  if [ "$status" != "$want" ] || [ "$lines" != 1 ] || [[ "$err" != *"$needle"* ]]; then
    echo "FAIL: $* -> status $status (want $want), stderr: $err"; fail=1
  else
    echo "ok:   $* -> $status: $err"
  fi
  if [ -n "$(ls -A "$out")" ]; then echo "FAIL: $* left files: $(ls -A "$out")"; fail=1; rm -rf "${out:?}"/* "${out:?}"/.[!.]*; fi
}

for exe in ./hpcnn-train ./hpcnn-infer; do
  expect 2 "'vgg99'"      -- $exe --model vgg99
  expect 2 "'cuda9'"      -- $exe --backend cuda9
  expect 2 "'0'"          -- $exe --batch 0
  expect 2 "'-3'"         -- $exe --threads -3
  expect 2 "'x'"          -- $exe --batch 16,x
  expect 2 "'--bogus'"    -- $exe --bogus
  expect 2 "'svhn'"       -- $exe --dataset svhn
done
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
