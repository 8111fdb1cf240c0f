#!/usr/bin/env bash
# Training checkpoints: a real-data training point killed (SIGKILL) after its second
# checkpoint (per epoch, and per 5 steps: inside an epoch), or stopped by SIGTERM within an epoch,
# and continued with --resume is bit-identical to the same training uninterrupted:
# the loss of every step, every epoch's train and test figures and the final parameters' digest.
# At np 1 (lenet5) and np 2 (resnet18 with batch norm: every rank's running statistics are
# restored), on dnnl (1 thread per rank) or, without it, the reference backend. A damaged
# checkpoint is refused in one line naming the file.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || { echo "SKIP: $data not installed (apt-get install dataset-fashion-mnist)"; exit 77; }
backend=reference
./hpcnn-train --list | grep -q '^  dnnl ' && backend=dnnl
# step_loss FILE: the values of the point's step_loss array
step_loss() { h5dump -d /points/000000/step_loss "$1" | sed -n '/DATA {/,/}/p'; }
figures() { ./hpcnn-summary --table accuracy --format csv --columns epoch,train_loss,train_acc,test_loss,test_acc "$1"; }

# check NAME RESUMED LAUNCH... -- TRAINING OPTIONS...: killed after the second checkpoint of
# $checkpoints, resumed from it: RESUMED is "resumed_epochs,resumed_steps" of the resumed point.
checkpoints=(--checkpoint-every 1)
check() {
  local name=$1 resumed=$2; shift 2
  local launch=()
  while [ "$1" != -- ]; do launch+=("$1"); shift; done; shift
  run "${launch[@]}" ./hpcnn-train "$@" --output "$out/$name-full" --run-id full --quiet
  HPCNN_TEST_KILL_AFTER_CHECKPOINTS=2 "${launch[@]}" ./hpcnn-train "$@" "${checkpoints[@]}" --output "$out/$name" \
    --run-id cut --quiet >/dev/null 2>&1
  [ -e "$out/$name/.hpcnn-train-cut.journal/ckpt-000000.bin" ] || { echo "FAIL: $name: no checkpoint after the kill"; fail=1; }
  run "${launch[@]}" ./hpcnn-train "$@" "${checkpoints[@]}" --output "$out/$name" --run-id cut --resume --quiet
  compare "$name" "$resumed"
}
# compare NAME RESUMED: $out/NAME's resumed point against $out/NAME-full's uninterrupted one
compare() {
  local name=$1 resumed=$2
  local a=$out/$name-full/hpcnn-train-full.h5 b=$out/$name/hpcnn-train-cut.h5
  [ "$(./hpcnn-summary --format csv --columns resumed_epochs,resumed_steps "$b" | tail -1)" = "$resumed" ] ||
    { echo "FAIL: $name: the resumed point did not start from $resumed (epochs,steps): $(./hpcnn-summary --format csv --columns resumed_epochs,resumed_steps "$b" | tail -1)"; fail=1; }
  [ -n "$(step_loss "$a")" ] && [ "$(step_loss "$a")" = "$(step_loss "$b")" ] ||
    { echo "FAIL: $name: step_loss differs:"; step_loss "$a"; step_loss "$b"; fail=1; }
  [ "$(figures "$a")" = "$(figures "$b")" ] || { echo "FAIL: $name: epoch figures differ:"; figures "$a"; figures "$b"; fail=1; }
  local da db
  da=$(./hpcnn-summary --format csv --columns params_digest "$a" | tail -1)
  db=$(./hpcnn-summary --format csv --columns params_digest "$b" | tail -1)
  [ -n "$da" ] && [ "$da" = "$db" ] || { echo "FAIL: $name: final parameters differ ($da, $db)"; fail=1; }
  [ "$(ls -A "$out/$name")" = hpcnn-train-cut.h5 ] || { echo "FAIL: $name: left $(ls -A "$out/$name")"; fail=1; }
}

# 256 images in batches of 32: 8 steps per epoch (np 2, batch 16: 8 too).
data=(--data fashion-mnist --train-limit 256 --test-limit 64 --epochs 4 --threads 1)
check lenet5 2,16 -- "${data[@]}" --model lenet5 --backend $backend --batch 32
check resnet18 2,16 $MPIRUN -np 2 -- "${data[@]}" --model resnet18 --image-size 32 --backend $backend --batch 16
# Every 5 steps: the second checkpoint is at step 10, inside the second epoch (batch 2 of 8).
checkpoints=(--checkpoint-every 5 --checkpoint-unit step)
check lenet5-steps 1,10 -- "${data[@]}" --model lenet5 --backend $backend --batch 32

# A stop signal within an epoch: every rank stops at the next step (not at the end of the epoch),
# after a checkpoint of that step; exit 75; --resume continues bit-identically. np 2; SIGTERM to
# rank 0 at step 12 (HPCNN_TEST_FAULT), i.e. after 4 of the second epoch's 8 steps.
name=signal
run $MPIRUN -np 2 ./hpcnn-train "${data[@]}" --model lenet5 --backend $backend --batch 16 \
  --output "$out/$name-full" --run-id full --quiet
HPCNN_TEST_FAULT=term,iteration,12,0 $MPIRUN -np 2 ./hpcnn-train "${data[@]}" --model lenet5 --backend $backend \
  --batch 16 --checkpoint-every 1 --output "$out/$name" --run-id cut --quiet >/dev/null 2>"$out/$name.err"
st=$?
[ $st = 75 ] && grep -q "interrupted by signal 15" "$out/$name.err" ||
  { echo "FAIL: SIGTERM within an epoch: exit $st: $(cat "$out/$name.err")"; fail=1; }
run $MPIRUN -np 2 ./hpcnn-train "${data[@]}" --model lenet5 --backend $backend --batch 16 --checkpoint-every 1 \
  --output "$out/$name" --run-id cut --resume --quiet
compare "$name" 1,12

# A damaged checkpoint: one line naming it, exit 1.
HPCNN_TEST_KILL_AFTER_CHECKPOINTS=1 ./hpcnn-train "${data[@]}" --model lenet5 --backend $backend --batch 32 \
  --checkpoint-every 1 --output "$out/bad" --run-id bad --quiet >/dev/null 2>&1
ckpt=$out/bad/.hpcnn-train-bad.journal/ckpt-000000.bin
if [ -e "$ckpt" ]; then
  printf '\x55' | dd of="$ckpt" bs=1 seek=200 conv=notrunc status=none
  err=$(./hpcnn-train "${data[@]}" --model lenet5 --backend $backend --batch 32 --checkpoint-every 1 --output "$out/bad" \
        --run-id bad --resume --quiet 2>&1 >/dev/null); st=$?
  [ $st = 1 ] && [ "$(grep -c . <<<"$err")" = 1 ] && grep -q "ckpt-000000.bin: damaged checkpoint" <<<"$err" ||
    { echo "FAIL: a damaged checkpoint gave exit $st: $err"; fail=1; }
else
  echo "FAIL: no checkpoint to damage"; fail=1
fi
exit $fail
