#!/usr/bin/env bash
# False alarms and detection, reduced (bench/acceptance_noise.sh measures them at length; the
# figures are in docs/ACCEPTANCE.md): a reference of 6 runs of the smoke set at short points, then
# 8 nights, no retries:
#  - 5 unchanged nights: at most one may fail (the goal, docs/ACCEPTANCE.md, is at most one night
#    in 20; five nights cannot tell 1 in 20 from 1 in 10, so one false alarm is allowed, two are
#    not: a verdict that fails unchanged nights as a rule still fails this test);
#  - 3 nights with a slowdown injected: training 3x slower (HPCNN_TEST_SLOWDOWN), SGEMM 3x slower,
#    and the whole night pinned to one core (training's two threads share it): each must fail,
#    with the slowed suite's points among its REGRESSION verdicts. (3x: a six-run reference blessed
#    on a busy CI VM could not tell a 2x training slowdown from its own spread once; the 2x and
#    smaller slowdowns are measured at length on a quiet machine, docs/ACCEPTANCE.md.)
# The nights alternate between unchanged and slowed, so that a drift of the machine reaches both.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
command -v taskset >/dev/null || { echo "SKIP: no taskset (util-linux)"; exit 77; }
script="$HPCNN_SRCDIR/jobscripts/acceptance.sh"
export HPCNN_BIN="$HPCNN_BUILDDIR" REFERENCE_DIR="$out/ref" THREADS=2 ACCEPT_DATA=none
export ACCEPT_ITERS=10 ACCEPT_WARMUP=2 ACCEPT_MIN_TIME=0.3 ACCEPT_ROUNDS=3 BLESS_RUNS=6 ACCEPT_MIN_RUNS=6
# A CI machine is a small shared VM: descheduled iterations are no failure, and the two-rank steps
# move with where the hypervisor puts their two ranks (the allreduce 3x apart for minutes, the
# two-rank training step beyond a 15% floor in 3 unchanged nights of 5 on such a VM): changes
# below 40% fail nothing, the allreduce only beyond 75%. The injected slowdowns (3x, one core) are
# beyond both; docs/ACCEPTANCE.md measures the smaller ones at length (bench/acceptance_noise.sh).
export ACCEPT_SUMMARY_ARGS="--ignore-outliers --tolerance-floor 40% --tolerance busbw_gbs=75%"

run env BLESS=1 OUT="$out/bless" "$script" smoke box
[ -s "$out/ref/box/smoke/STABILITY.txt" ] && cat "$out/ref/box/smoke/STABILITY.txt"

# night NAME EXPECT SUITE [ENV...] [-- PREFIX...]: one night; EXPECT pass or fail (then SUITE's
# points must be among its REGRESSION verdicts).
night() {
  local name=$1 expect=$2 suite=$3 status
  shift 3
  local envs=() prefix=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; prefix=("$@"); }
  env "${envs[@]}" OUT="$out/$name" "${prefix[@]}" "$script" smoke box > "$out/$name.log" 2>&1
  status=$?
  local failures
  failures=$(grep '^failure:' "$out/$name/verdict.txt" 2>/dev/null | cut -c1-160)
  if [ "$expect" = pass ] && [ "$status" != 0 ]; then
    false_alarms=$((false_alarms + 1))
    echo "false alarm ($false_alarms): unchanged night $name exited $status:"; echo "$failures"
    [ "$false_alarms" -le 1 ] || { echo "FAIL: $false_alarms of the unchanged nights failed, at most 1 may"; fail=1; }
  elif [ "$expect" = fail ] && { [ "$status" != 1 ] || ! grep -q "^failure: REGRESSION: suite=$suite " "$out/$name/verdict.txt"; }; then
    echo "FAIL: slowed night $name exited $status without a REGRESSION of $suite:"; echo "$failures"
    grep -E "suite=$suite " "$out/$name/verdict.txt"; fail=1
  else
    echo "ok:   night $name ($expect): exit $status, $(grep -c '^failure:' "$out/$name/verdict.txt" 2>/dev/null) failing verdicts"
    # (the slowed suite's ratio and interval, for the log)
    [ "$expect" = pass ] || grep -m1 "^failure: REGRESSION: suite=$suite " "$out/$name/verdict.txt" | grep -o ' ratio [^:]*' || true
  fi
}
false_alarms=0
night unchanged-1 pass -
night slow-train fail hpcnn-train HPCNN_TEST_SLOWDOWN=hpcnn-train:200%
night unchanged-2 pass -
night slow-blas fail hpcnn-blas HPCNN_TEST_SLOWDOWN=hpcnn-blas:200%
night unchanged-3 pass -
night one-core fail hpcnn-train -- taskset -c 0
night unchanged-4 pass -
night unchanged-5 pass -
exit $fail
