#!/usr/bin/env bash
# Runs that cannot fit in this node's memory are refused before anything is allocated,
# with one line naming the sizes, instead of a bare std::bad_alloc or the kernel's OOM killer:
# a --batch far beyond memory (a failed point, exit 1), a data set of one 4096x4096 idx image
# (LeNet's activations: ~100 GiB at batch 64; batch 4096 here) and a
# --sizes of hpcnn-allreduce (exit 2). The sizes are terabytes, beyond any node's memory; every
# command runs under `ulimit -v` (8 GiB), so a check that no longer fires makes this test fail
# instead of exhausting the machine.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
ulimit -v $((8 << 20))

# refuses STATUS NEEDLE CMD...: CMD exits with STATUS and one line (of ours) containing NEEDLE.
refuses() {
  local want=$1 needle=$2 err st
  shift 2
  err=$(timeout 120 "$@" 2>&1 >/dev/null); st=$?
  if [ "$st" = "$want" ] && [ "$(printf '%s\n' "$err" | grep -c '^hpcnn-')" = 1 ] && [[ "$err" == *"$needle"* ]]; then
    echo "ok:   $* -> $st: $err"
  else
    echo "FAIL: $* -> exit $st (want $want and one line with '$needle'): $err"; fail=1
  fi
}

refuses 1 "the activations alone need" ./hpcnn-train --model resnet18 --backend reference --batch 1048576 --image-size 512 \
  --iters 1 --warmup 0 --quiet --output "$out/batch"
refuses 1 "the activations alone need" ./hpcnn-infer --model resnet18 --backend reference --batch 1048576 --image-size 512 \
  --iters 1 --warmup 0 --quiet --output "$out/batch"
[ -z "$(find "$out/batch" -name '*.tmp' 2>/dev/null)" ] || { echo "FAIL: temporaries left"; fail=1; }

# One 4096x4096 image in each idx set.
mkdir -p "$out/big"
for set in train t10k; do
  { printf '\x00\x00\x08\x03\x00\x00\x00\x01\x00\x00\x10\x00\x00\x00\x10\x00'; head -c $((4096 * 4096)) /dev/zero; } \
    > "$out/big/$set-images-idx3-ubyte"
  printf '\x00\x00\x08\x01\x00\x00\x00\x01\x00' > "$out/big/$set-labels-idx1-ubyte"
done
refuses 1 "1x4096x4096 images" ./hpcnn-train --data "$out/big" --model lenet5 --backend reference --batch 4096 \
  --epochs 1 --quiet --output "$out/data"
rm -rf "$out/big"

refuses 2 "this node has" ./hpcnn-allreduce --sizes 1024G --output "$out/allreduce"
exit $fail
