#!/usr/bin/env bash
# Failed ranks and hangs, with HPCNN_TEST_FAULT (src/base/fault_injection.hpp) stopping,
# killing or crashing one rank at a chosen moment of an mpirun job:
#  - a rank stopped (SIGSTOP) in a timed iteration, or a parameter server stopped before its
#    point's set-up: the watchdog (--timeout 3) ends the job within the bound, exit 1, with ONE
#    line naming the operation and the rank that did not arrive; no result file, no temporary;
#  - a stop signal to one rank of an hpcnn-scale ring, ps-sync or ps-async point ends it within a
#    few iterations on every rank (exit 75), not at the end of its 100000 iterations;
#  - a rank stopped for 2 s and continued: the point completes, but says so (outlier_iters and a
#    warning), instead of passing as a clean measurement;
#  - a rank killed (SIGKILL) during set-up, a timed iteration, the exchange, and rank 0 killed
#    during the result write, at np 2-4, and a rank that segfaults: the job ends within the bound,
#    the launcher's report names the rank (Open MPI; MPICH's names the process), its host and the
#    signal; no result file is left (the temporary of a commit cut short is removed by the next
#    run in the folder), and the run resumes from its journal.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_MCA_mpi_yield_when_idle=1
BOUND=30  # seconds from the fault to the end of the job (watchdog: timeout 3 + grace 1.5 + ticks)
host=$(hostname)

# Every process of a job has its output folder on its command line: stopped by it on every exit
# path (a stopped rank that the launcher failed to kill would otherwise outlive the test).
cleanup() {
  local p
  for p in $(pgrep -f -- "--output $out/" 2>/dev/null); do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT

scale=(./hpcnn-scale --model lenet5 --warmup 2 --quiet)
# leftovers DIR: result files and temporaries in DIR
leftovers() { find "$1" -maxdepth 1 \( -name '*.h5' -o -name '.*.tmp' \) 2>/dev/null; }
# job NAME NP FAULT ARGS...: runs `mpirun -np NP` hpcnn-scale with HPCNN_TEST_FAULT=FAULT into
# $out/NAME; sets $status, $elapsed (s) and $err (stderr)
job() {
  local name=$1 np=$2 fault=$3 t0
  shift 3
  t0=$(date +%s.%N)
  HPCNN_TEST_FAULT=$fault timeout 120 $MPIRUN -np "$np" "${scale[@]}" "$@" --output "$out/$name" \
    >"$out/$name.out" 2>"$out/$name.err"
  status=$?
  elapsed=$(echo "$(date +%s.%N) - $t0" | bc)
  err=$(cat "$out/$name.err")
}
check() {  # check WHAT CONDITION...: a failure naming WHAT when the condition is false
  printf "[%3d s] " "$SECONDS"
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what (exit $status, ${elapsed} s): $err"; fail=1; fi
}
within_bound() { [ "$(echo "$elapsed < $BOUND" | bc)" = 1 ]; }
one_watchdog_line() { [ "$(grep -c 'watchdog:' <<<"$err")" = 1 ]; }
names() { grep -q -- "$1" <<<"$err"; }
clean() { [ -z "$(leftovers "$out/$1")" ]; }

# ---- hangs: the watchdog --------------------------------------------------------------------------
job hang 3 stop,iteration,6,1 --batch 16 --exchange ring --iters 200 --timeout 3
check "a stopped rank: watchdog, exit 1, within ${BOUND} s (${elapsed} s)" eval '[ $status = 1 ] && within_bound'
check "a stopped rank: one line naming the wait and rank 1" eval 'one_watchdog_line && names "rank 1 (no answer" && names "allreduce step\|gradient exchange"'
check "a stopped rank: no result file or temporary" clean hang

job server 3 stop,setup,0,2 --batch 16 --exchange ps-sync --ps-servers 1 --iters 200 --timeout 3
check "a stopped server: watchdog, exit 1, within ${BOUND} s (${elapsed} s)" eval '[ $status = 1 ] && within_bound'
check "a stopped server: one line naming rank 2" eval 'one_watchdog_line && names "rank 2 (no answer"'
check "a stopped server: no result file or temporary" clean server

# ---- a stop signal: hpcnn-scale (an allreduce scheme) stops at the next iteration, not the point's end
job signal 3 usr1,iteration,5,1 --batch 16 --exchange ring --iters 100000 --timeout 20 --run-id sig
check "SIGUSR1 to rank 1 in a 100000-iteration point: exit 75 within ${BOUND} s (${elapsed} s)" \
  eval '[ $status = 75 ] && within_bound && names "interrupted by signal 10"'
for scheme in ps-sync ps-async; do  # 2 workers and a server: the server ends the run
  job "signal-$scheme" 3 usr1,iteration,5,1 --batch 16 --exchange $scheme --ps-servers 1 --iters 100000 --timeout 20 \
    --run-id "sig-$scheme"
  check "SIGUSR1 to worker 1 of a 100000-iteration $scheme point: exit 75 within ${BOUND} s (${elapsed} s)" \
    eval '[ $status = 75 ] && within_bound && names "interrupted by signal 10"'
done

# ---- a pause that ends: the point says so --------------------------------------------------------
HPCNN_TEST_FAULT=stop,iteration,8,1 $MPIRUN -np 2 "${scale[@]}" --batch 16 --exchange ring --iters 30 --timeout 0 \
  --output "$out/pause" >"$out/pause.out" 2>"$out/pause.err" &
launcher=$!
stopped=""
for _ in $(seq 600); do  # until rank 1 stops itself (at most 60 s)
  for p in $(pgrep -f -- "--output $out/pause" 2>/dev/null); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxE '(OMPI_COMM_WORLD_RANK|PMI_RANK)=1' &&
       [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ]; then stopped=$p; fi
  done
  [ -n "$stopped" ] && break
  sleep 0.1
done
[ -n "$stopped" ] && { sleep 2; kill -CONT "$stopped"; }
timeout 120 tail --pid=$launcher -f /dev/null; wait $launcher; status=$? elapsed=- err=$(cat "$out/pause.err")
outliers=$(./hpcnn-summary --format csv --columns outlier_iters "$out/pause" 2>/dev/null | tail -n 1)
check "a paused rank (stopped: ${stopped:-never}): the point completes" eval '[ -n "$stopped" ] && [ $status = 0 ]'
check "a paused rank: outlier_iters ${outliers:-missing} >= 1, and a warning" eval '[ "${outliers:-0}" -ge 1 ] && names "outlier_iters"'

# ---- a rank dies: the launcher ends the job -------------------------------------------------------
for spec in "setup 2 kill,setup,0,1" "iteration 3 kill,iteration,5,2" "exchange 4 kill,exchange,5,3" "crash 2 segv,iteration,4,1"; do
  read -r name np fault <<<"$spec"
  rank=${fault##*,}
  job "$name" "$np" "$fault" --batch 16 --exchange ring --iters 50 --timeout 20 --run-id "$name"
  signal=9; [ "$name" = crash ] && signal=11
  check "rank $rank killed ($name, np $np): exit non-zero within ${BOUND} s (${elapsed} s)" eval '[ $status != 0 ] && within_bound'
  if [ "$mpi_kind" = hydra ]; then
    # MPICH's report (on stdout) names a process, its host and signal, not the rank; and over UCX
    # a peer may abort first (a transfer from the dead rank failed): the report is then of it.
    check "rank $rank killed ($name): the launcher reports a process killed on host $host" \
      eval 'grep -q "RUNNING AT $host" "$out/$name.out" && grep -Eq "\(signal [0-9]+\)" "$out/$name.out"'
  else
    check "rank $rank killed ($name): a line names rank $rank, host $host and signal $signal" \
      eval 'grep -q "rank $rank.*$host.*signal $signal" <<<"$err"'
  fi
  check "rank $rank killed ($name): no result file or temporary" clean "$name"
done

# Rank 0 killed while it writes the result file (its third commit: two journal points, then the
# run's file): its temporary is the only trace, and the next run
# in the folder removes it (its lock is free); --resume then completes the run from the journal.
job commit 2 kill,commit,3,0 --exchange ring --iters 5 --batch 8,16 --run-id commit
check "rank 0 killed in the commit: exit non-zero within ${BOUND} s (${elapsed} s)" eval '[ $status != 0 ] && within_bound'
check "rank 0 killed in the commit: its temporary is there" eval '[ -e "$out/commit/.hpcnn-scale-commit.h5.tmp" ]'
run ./hpcnn-scale --model lenet5 --batch 8 --iters 2 --warmup 0 --quiet --output "$out/commit" --run-id other
check "another run in the folder removes the dead run's temporary" eval '[ ! -e "$out/commit/.hpcnn-scale-commit.h5.tmp" ]'
run $MPIRUN -np 2 "${scale[@]}" --exchange ring --iters 5 --batch 8,16 --output "$out/commit" \
  --run-id commit --resume
points=$(./hpcnn-summary --format csv --columns batch,status "$out/commit/hpcnn-scale-commit.h5" 2>/dev/null | grep -c ',ok$')
check "after the commit was cut short: --resume ends with both points ($points)" eval '[ "$points" = 2 ]'
check "after the commit was cut short: no temporary left" eval '[ -z "$(find "$out/commit" -maxdepth 1 -name ".*.tmp")" ]'
exit $fail
