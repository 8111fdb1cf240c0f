#!/usr/bin/env bash
# Training checkpoints of hpcnn-scale --data: a distributed real-data point
# killed (SIGKILL) after a checkpoint, or stopped by a signal within an epoch, and continued with
# --resume is bit-identical to the same training uninterrupted: every epoch's training loss and
# accuracy, test loss and accuracy, and the final weights' digest, on the dnnl backend (1 thread per
# rank; the reference backend without it). Its phase arrays hold every step (the result checker
# recomputes the figures) and its file reads count the steps before the restart too.
#   ring, 3 workers, a checkpoint per epoch, rank 0 killed in the third epoch;
#   ps-sync, 2 workers + 1 server, a checkpoint every 4 steps, worker 1 killed at step 11 (the
#     server's weight and momentum shard come back from worker 0's request);
#   ring: SIGTERM to rank 2 at step 8 -> exit 75, checkpoint of that step, resumed from it;
#   ps-sync: SIGUSR1 to worker 1 -> the servers end every worker after the same step, exit 75;
#   ps-async, 3 workers + 1 server: killed in the second epoch, resumed from the first epoch's end
#     (asynchronous updates are not reproducible, so: the run completes, 3 epochs, status ok).
# A data file that shrinks under a running epoch (a rank is stopped at step 8 while the test cuts
# the image file in half, then continued), for ring and ps-sync: ONE line naming the file, exit 1,
# the journal and its checkpoint kept; with the file back, --resume is bit-identical again.
# And the refusals: step checkpoints with ps-async, checkpoints without --data.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
error_lines='^hpcnn-'
backend=reference
./hpcnn-scale --list | grep -q '^  dnnl ' && backend=dnnl
mkdir -p "$out/idx"
./tests/make_image_files idx "$out/idx" 288 64 || { echo "FAIL: make_image_files idx"; exit 1; }
# 288 images, batch 16: 6 steps per epoch on 3 workers, 9 on 2; uncached: every sample read from the files.
common=(--data "$out/idx" --train-limit 288 --model lenet5 --backend "$backend" --threads 1 --batch 16 --lr 0.05
        --momentum 0.9 --epochs 3 --quiet)
figures() { ./hpcnn-summary --table accuracy --format csv --columns epoch,train_loss,train_acc,test_loss,test_acc,params_digest,file_reads "$1"; }
field() { ./hpcnn-summary --format csv --columns "$2" "$1" | tail -1; }

# check NAME RESUMED -- SCALE OPTIONS...: $out/NAME (interrupted before, resumed now) against
# $out/NAME-full; RESUMED is "resumed_epochs,resumed_steps" of the resumed point.
compare() {
  local name=$1 resumed=$2 a b
  a=$(ls "$out/$name-full"/*.h5) b=$(ls "$out/$name"/*.h5) || { echo "FAIL: $name: no result file"; fail=1; return; }
  [ "$(field "$b" resumed_epochs,resumed_steps)" = "$resumed" ] ||
    { echo "FAIL: $name: resumed from $(field "$b" resumed_epochs,resumed_steps) (epochs,steps), not $resumed"; fail=1; }
  [ -n "$(field "$a" params_digest)" ] && [ "$(figures "$a")" = "$(figures "$b")" ] ||
    { echo "FAIL: $name: the resumed training differs:"; figures "$a"; figures "$b"; fail=1; }
  ./tests/result_checker "$b" || { echo "FAIL: $name: result_checker"; fail=1; }
  [ "$(ls -A "$out/$name")" = "${b##*/}" ] || { echo "FAIL: $name: left $(ls -A "$out/$name")"; fail=1; }
}
# interrupt NAME NP STATUS FAULT -- OPTIONS...: the uninterrupted run, then the run with
# HPCNN_TEST_FAULT=FAULT (exit STATUS: 75 for a stop signal; a kill ends the job otherwise), then --resume.
interrupt() {
  local name=$1 np=$2 status=$3 fault=$4 got; shift 5
  run timeout 300 $MPIRUN -np "$np" ./hpcnn-scale "${common[@]}" "$@" --output "$out/$name-full" --run-id full
  HPCNN_TEST_FAULT=$fault timeout 300 $MPIRUN -np "$np" ./hpcnn-scale "${common[@]}" "$@" --output "$out/$name" \
    --run-id cut >"$out/$name.log" 2>&1
  got=$?
  if [ "$status" = 75 ]; then
    [ $got = 75 ] && grep -q "continue with --run-id cut --resume (exit 75)" "$out/$name.log" ||
      { echo "FAIL: $name: a stop signal exited $got"; cat "$out/$name.log"; fail=1; }
  elif [ $got = 0 ] || [ $got = 124 ]; then
    echo "FAIL: $name: the killed run exited $got"; fail=1
  fi
  [ -e "$out/$name/.hpcnn-scale-cut.journal/ckpt-000000.bin" ] || { echo "FAIL: $name: no checkpoint"; fail=1; }
  run timeout 300 $MPIRUN -np "$np" ./hpcnn-scale "${common[@]}" "$@" --output "$out/$name" --run-id cut --resume
}

interrupt ring 3 kill kill,iteration,15,0 -- --exchange ring --checkpoint-every 1
compare ring 2,12
[ "$(field "$out/ring" file_reads)" = 864 ] || { echo "FAIL: ring: file_reads $(field "$out/ring" file_reads), not 3 x 6 x 16 x 3"; fail=1; }
interrupt ps-sync 3 kill kill,iteration,11,1 -- --exchange ps-sync --ps-servers 1 --checkpoint-every 4 --checkpoint-unit step
compare ps-sync 0,8
interrupt ring-term 3 75 term,iteration,8,2 -- --exchange ring --checkpoint-every 1
compare ring-term 1,8
# The first server decides the last step after worker 1's request: step 8 or a later one.
interrupt ps-sync-usr1 3 75 usr1,iteration,8,1 -- --exchange ps-sync --ps-servers 1 --checkpoint-every 2
resumed=$(field "$out/ps-sync-usr1" resumed_steps)
[ "${resumed:-0}" -ge 8 ] && [ "$resumed" -lt 27 ] || { echo "FAIL: ps-sync-usr1: resumed from step $resumed"; fail=1; }
compare ps-sync-usr1 "$(field "$out/ps-sync-usr1" resumed_epochs),$resumed"

interrupt ps-async 4 kill kill,iteration,9,0 -- --exchange ps-async --ps-servers 1 --checkpoint-every 1
got=$(field "$out/ps-async" resumed_epochs,resumed_steps,epochs_done,status)
[ "$got" = "1,6,3,ok" ] || { echo "FAIL: ps-async: resumed_epochs,resumed_steps,epochs_done,status = $got"; fail=1; }
./tests/result_checker "$(ls "$out"/ps-async/*.h5)" || { echo "FAIL: ps-async: result_checker"; fail=1; }

# shrink NAME NP -- OPTIONS...: the run of `interrupt`, with the image file cut while rank 1 is stopped.
shrink() {
  local name=$1 np=$2 pid="" got i lines; shift 3
  local images=$out/idx-$name/train-images-idx3-ubyte
  cp -r "$out/idx" "$out/idx-$name"
  local opts=("${common[@]}")
  opts[1]=$out/idx-$name  # common's --data
  run timeout 300 $MPIRUN -np "$np" ./hpcnn-scale "${opts[@]}" "$@" --output "$out/$name-full" --run-id full
  HPCNN_TEST_FAULT=stop,iteration,8,1 timeout 300 $MPIRUN -np "$np" ./hpcnn-scale "${opts[@]}" "$@" \
    --output "$out/$name" --run-id cut >"$out/$name.log" 2>&1 &
  local job=$!
  for ((i = 0; i < 600; i++)); do
    for p in $(pgrep -f -- "--output $out/$name " 2>/dev/null); do
      [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && pid=$p
    done
    [ -z "$pid" ] || break
    sleep 0.1
  done
  cp "$images" "$out/$name.images"
  truncate -s 100000 "$images"
  [ -n "$pid" ] && kill -CONT "$pid" || { echo "FAIL: $name: rank 1 never stopped at step 8"; fail=1; }
  wait "$job"
  got=$?
  lines=$(grep -c '^hpcnn-' "$out/$name.log")
  [ $got = 1 ] && [ "$lines" = 1 ] && grep -q "^hpcnn-scale: stopped: rank [0-9]*: $images: .*continue with --run-id cut --resume once the files are back (exit 1)" "$out/$name.log" ||
    { echo "FAIL: $name: a file cut under the epoch exited $got with $lines lines of hpcnn:"; cat "$out/$name.log"; fail=1; }
  [ -e "$out/$name/.hpcnn-scale-cut.journal/ckpt-000000.bin" ] || { echo "FAIL: $name: no checkpoint kept"; fail=1; }
  cp "$out/$name.images" "$images"
  run timeout 300 $MPIRUN -np "$np" ./hpcnn-scale "${opts[@]}" "$@" --output "$out/$name" --run-id cut --resume
}
shrink shrink-ring 3 -- --exchange ring --checkpoint-every 4 --checkpoint-unit step
compare shrink-ring "$(field "$out/shrink-ring" resumed_epochs,resumed_steps)"
[ "$(field "$out/shrink-ring" resumed_steps)" -ge 4 ] || { echo "FAIL: shrink-ring: resumed from step 0"; fail=1; }
shrink shrink-ps-sync 3 -- --exchange ps-sync --ps-servers 1 --checkpoint-every 4 --checkpoint-unit step
compare shrink-ps-sync "$(field "$out/shrink-ps-sync" resumed_epochs,resumed_steps)"
[ "$(field "$out/shrink-ps-sync" resumed_steps)" -ge 4 ] || { echo "FAIL: shrink-ps-sync: resumed from step 0"; fail=1; }

expect_error 2 "--checkpoint-unit step" -- $MPIRUN -np 2 ./hpcnn-scale "${common[@]}" --exchange ps-async --ps-servers 1 \
  --checkpoint-every 2 --checkpoint-unit step
expect_error 2 "--checkpoint-every 1" -- $MPIRUN -np 2 ./hpcnn-scale --model lenet5 --iters 2 --checkpoint-every 1 --quiet
exit $fail
