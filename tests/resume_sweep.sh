#!/usr/bin/env bash
# Resumable sweeps and stop signals:
#  - a sweep killed by SIGKILL after 2 of 3 points keeps them (the journal) and leaves no partial
#    result file (the file is written whole at the end), refuses to start
#    again under the same --run-id without --resume, and with --resume ends with one result file
#    whose points equal an uninterrupted run's, point by point (settings, status, reproducer),
#    provenance restarts 1 and both starts; a second --resume leaves the finished file alone;
#  - --resume with other settings is refused naming the setting;
#  - SIGTERM (np 1) and SIGUSR1 to mpirun (np 3) stop every rank at the next iteration boundary:
#    exit 75, a result file with the completed points, no temporary file, the journal kept; the
#    resumed run completes the sweep; a second signal exits at once (143) leaving no partial file;
#  - a second process on the same run id is refused while the first runs.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_MCA_mpi_yield_when_idle=1
# The runs started in the background: stopped on every exit path (a failed wait leaves one running).
started=()
stop_started() {
  local p
  for p in "${started[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 1
  for p in "${started[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$out"
}
trap stop_started EXIT
sweep=(--model lenet5 --backend reference --iters 3 --warmup 1 --quiet)
# csv DIR: the points' settings, status and reproducer, in file order
csv() { ./hpcnn-summary --format csv --columns model,batch,iters,warmup,seed,ranks,status,reproducer "$1"; }
# provenance DIR ATTR: the value of /provenance/ATTR of the one result file in DIR
provenance() { h5dump -a "/provenance/$2" "$1"/*.h5 | sed -n 's/^ *(0): //p' | tr -d '"'; }
# leftovers DIR: temporary files a run left behind
leftovers() { find "$1" -maxdepth 1 -name '.*.tmp'; }
# refuses STATUS NEEDLE CMD...: CMD (with its own --output) exits with STATUS, one stderr line
# containing NEEDLE
refuses() {
  local want=$1 needle=$2 err st
  shift 2
  err=$(timeout 120 "$@" 2>&1 >/dev/null); st=$?
  if [ "$st" != "$want" ] || [ "$(grep -c . <<<"$err")" != 1 ] || [[ "$err" != *"$needle"* ]]; then
    echo "FAIL: $* -> $st (want $want and one line containing $needle): $err"; fail=1
  else
    echo "ok:   $* -> $st: $err"
  fi
}
# wait_for FILE: until it exists (at most 60 s)
wait_for() { for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done; echo "FAIL: $1 never appeared"; fail=1; return 1; }

# ---- SIGKILL after 2 points, then --resume -------------------------------------------------------
run ./hpcnn-train "${sweep[@]}" --batch 2,4,8 --output "$out/full"
HPCNN_TEST_KILL_AFTER_POINTS=2 ./hpcnn-train "${sweep[@]}" --batch 2,4,8 --output "$out/r" --run-id job1 2>/dev/null
st=$?
[ $st = 137 ] || { echo "FAIL: the killed run exited $st, want 137 (SIGKILL)"; fail=1; }
n=$(ls "$out/r/.hpcnn-train-job1.journal" | grep -c '^point-')
[ "$n" = 2 ] || { echo "FAIL: the journal holds $n points after the kill, want 2"; fail=1; }
[ -z "$(leftovers "$out/r")" ] || { echo "FAIL: SIGKILL left $(leftovers "$out/r")"; fail=1; }
refuses 2 "add --resume" ./hpcnn-train "${sweep[@]}" --batch 2,4,8 --output "$out/r" --run-id job1
run ./hpcnn-train "${sweep[@]}" --batch 2,4,8 --output "$out/r" --run-id job1 --resume
if [ "$(csv "$out/r")" != "$(csv "$out/full")" ]; then
  echo "FAIL: the resumed run's points differ from the uninterrupted run's:"; csv "$out/r"; csv "$out/full"; fail=1
fi
[ "$(ls -A "$out/r")" = "hpcnn-train-job1.h5" ] || { echo "FAIL: left in the result folder: $(ls -A "$out/r")"; fail=1; }
[ "$(provenance "$out/r" restarts)" = 1 ] || { echo "FAIL: provenance restarts '$(provenance "$out/r" restarts)', want 1"; fail=1; }
starts=$(provenance "$out/r" run_starts | tr ',' '\n' | grep -c 'T')
[ "$starts" = 2 ] || { echo "FAIL: provenance run_starts has $starts starts, want 2"; fail=1; }
before=$(md5sum < "$out/r/hpcnn-train-job1.h5")
got=$(./hpcnn-train "${sweep[@]}" --batch 2,4,8 --output "$out/r" --run-id job1 --resume)
grep -q "is complete" <<<"$got" || { echo "FAIL: a second --resume said '$got'"; fail=1; }
[ "$(md5sum < "$out/r/hpcnn-train-job1.h5")" = "$before" ] || { echo "FAIL: a second --resume changed the file"; fail=1; }

# ---- --resume with other settings ---------------------------------------------------------------
HPCNN_TEST_KILL_AFTER_POINTS=1 ./hpcnn-train "${sweep[@]}" --batch 2,4 --output "$out/s" --run-id job2 2>/dev/null
refuses 2 "--iters 3, not 4" ./hpcnn-train "${sweep[@]:0:4}" --iters 4 --warmup 1 --quiet --batch 2,4 --output "$out/s" \
  --run-id job2 --resume
refuses 2 "--run-id: 'a/b'" ./hpcnn-train "${sweep[@]}" --batch 2,4 --output "$out/s" --run-id 'a/b' --resume

# ---- SIGTERM at np 1 ----------------------------------------------------------------------------
long=(--model lenet5 --backend reference --iters 300 --warmup 1 --batch 2,3,4,5 --quiet)
./hpcnn-train "${long[@]}" --output "$out/t" --run-id job3 2>"$out/t.err" &
pid=$!
started+=($pid)
if wait_for "$out/t/.hpcnn-train-job3.journal/point-000000.h5"; then
  # A second process on the same run id is refused while this one runs.
  refuses 1 "in progress" ./hpcnn-train "${long[@]}" --output "$out/t" --run-id job3 --resume
  kill -TERM $pid
fi
timeout 60 tail --pid=$pid -f /dev/null; wait $pid; st=$?
[ $st = 75 ] || { echo "FAIL: SIGTERM: exit $st, want 75"; cat "$out/t.err"; fail=1; }
grep -q -- "--run-id job3 --resume" "$out/t.err" || { echo "FAIL: SIGTERM: no resume hint: $(cat "$out/t.err")"; fail=1; }
[ -z "$(leftovers "$out/t")" ] || { echo "FAIL: SIGTERM left $(leftovers "$out/t")"; fail=1; }
done_points=$(csv "$out/t" | grep -c ',ok,')
[ "$done_points" -ge 1 ] && [ "$done_points" -lt 4 ] || { echo "FAIL: SIGTERM: $done_points points in the file"; fail=1; }
run ./hpcnn-train "${long[@]}" --output "$out/t" --run-id job3 --resume
[ "$(csv "$out/t" | grep -c ',ok,')" = 4 ] || { echo "FAIL: the resumed SIGTERM run has not 4 points:"; csv "$out/t"; fail=1; }

# ---- a second signal exits at once, leaving no partial file ----------------------------------------
# The second signal must find the first one's stop under way: a first signal that lands before the
# point's iterations (set-up is slow under a sanitizer) ends the run at once with exit 75, or
# commits its file before the second signal comes (then the file stays, complete), and the
# attempt is made again, the first signal later.
judged=0
for delay in 0.5 3 10; do
  rm -rf "$out/d"
  ./hpcnn-train --model resnet50 --backend reference --batch 16 --iters 5 --warmup 1 --quiet --output "$out/d" \
    --run-id job4 2>/dev/null &
  pid=$!
  started+=($pid)
  wait_for "$out/d/.hpcnn-train-job4.journal/run.txt" && sleep $delay
  kill -TERM $pid; sleep 0.2
  if ! kill -TERM $pid 2>/dev/null; then
    wait $pid
    echo "the first signal ended the run within 0.2 s (exit $?): again, the first signal ${delay} s later"
    continue
  fi
  timeout 30 tail --pid=$pid -f /dev/null; wait $pid; st=$?
  [ $st = 143 ] || { echo "FAIL: two signals: exit $st, want 143"; fail=1; }
  [ -z "$(leftovers "$out/d")" ] || { echo "FAIL: two signals left: $(ls -A "$out/d")"; fail=1; }
  if [ -e "$out/d/hpcnn-train-job4.h5" ]; then
    # The first stop had committed its file before the second signal came (a point boundary):
    # nothing was being written, so the file stays, complete. Again, the first signal later.
    ./tests/result_checker "$out/d/hpcnn-train-job4.h5" >/dev/null ||
      { echo "FAIL: two signals: the file the first stop committed is damaged"; fail=1; }
    echo "the first stop had committed before the second signal: again, the first signal ${delay} s later"
    continue
  fi
  judged=1
  break
done
[ $judged = 1 ] || { echo "FAIL: two signals: the first signal always ended the run before the second came"; fail=1; }

# ---- SIGUSR1 to mpirun at np 3: every rank stops together ----------------------------------------
$MPIRUN -np 3 ./hpcnn-train "${long[@]}" --output "$out/m" --run-id job5 >/dev/null 2>"$out/m.err" &
pid=$!
started+=($pid)
if wait_for "$out/m/.hpcnn-train-job5.journal/point-000000.h5"; then kill -USR1 $pid; fi
timeout 60 tail --pid=$pid -f /dev/null; wait $pid; st=$?
grep -q "interrupted by signal 10" "$out/m.err" || { echo "FAIL: np 3 SIGUSR1 (exit $st): $(cat "$out/m.err")"; fail=1; }
[ -z "$(leftovers "$out/m")" ] || { echo "FAIL: np 3 SIGUSR1 left $(leftovers "$out/m")"; fail=1; }
run $MPIRUN -np 3 ./hpcnn-train "${long[@]}" --output "$out/m" --run-id job5 --resume
[ "$(csv "$out/m" | grep -c ',3,ok,')" = 4 ] || { echo "FAIL: the resumed np 3 run has not 4 points of 3 ranks:"; csv "$out/m"; fail=1; }
exit $fail
