#!/usr/bin/env bash
# Blessing a reference (jobscripts/bless.sh, which acceptance.sh BLESS=1 calls): only a
# clean measurement becomes the reference.
#  1. a run with a stall (hpcnn-scale, one rank, stopped from outside for 1.5 s during its timed
#     iterations, then continued) is refused, naming the share of the time it took, and no
#     reference appears;
#  2. BLESS_MAX_STALLS=100 (a shared noisy machine) blesses it: files and BLESSED note;
#  3. a run measured with a test's fault injected (an allreduce with a wrong element,
#     HPCNN_TEST_CORRUPT_ELEMENT) is refused, naming the injection, and the reference blessed
#     before is left exactly as it was;
#  4. bad usage exits 2, a folder without result files 1.
# One run is blessed here (BLESS_MIN_RUNS=1): what makes a run clean does not depend on how many.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HPCNN_BIN=$HPCNN_BUILDDIR REFERENCE_DIR=$out/ref BLESS_MIN_RUNS=1
bless=$HPCNN_SRCDIR/jobscripts/bless.sh
ref=$out/ref/box/smoke
pid=""
trap '[ -z "$pid" ] || { kill -CONT "$pid"; kill "$pid"; } 2>/dev/null; rm -rf "$out"' EXIT

# 1. outliers: the process (one rank, no launcher: its pid is ours) is stopped (SIGSTOP) from
# outside once its timed iterations run: --min-time 6 keeps them running for 6 s after a start of
# well under a second; the stop comes 2.5 s after the start, the SIGCONT 1.5 s later.
./hpcnn-scale --model lenet5 --batch 16 --exchange ring --iters 12 --warmup 1 --min-time 6 \
  --output "$out/paused" --quiet &
pid=$!
sleep 2.5
kill -STOP "$pid"
sleep 1.5
echo "process $pid state before SIGCONT: $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)"
kill -CONT "$pid"
wait "$pid" || { echo "FAIL: the paused run exited $?"; fail=1; }
pid=""
./hpcnn-summary --format csv --columns outlier_iters "$out/paused" | tail -1 | grep -q '^[1-9]' ||
  { echo "FAIL: the paused run has no outlier iteration"; fail=1; }
"$bless" "$out/paused" box smoke > "$out/b1.txt" 2>&1
status=$?
cat "$out/b1.txt"
[ "$status" = 1 ] && grep -q '^stalls took [0-9]*% of the timed time: .*hpcnn-scale' "$out/b1.txt" ||
  { echo "FAIL: a run with a stall: exit $status, want 1 naming it"; fail=1; }
[ ! -e "$ref" ] || { echo "FAIL: a refused run left a reference"; fail=1; }

# 2. accepted where stalls are accepted.
run env BLESS_MAX_STALLS=100 "$bless" "$out/paused" box smoke
[ "$(ls "$ref"/run-1/*.h5 2>/dev/null | wc -l)" = 1 ] && grep -q "^blessed .* from 1 runs: $out/paused" "$ref/BLESSED" ||
  { echo "FAIL: no blessed reference in $ref"; ls -la "$ref"; fail=1; }
before=$(cd "$ref" && find . -type f | sort | xargs md5sum)

# 3. a failed point: refused, the reference untouched.
HPCNN_TEST_CORRUPT_ELEMENT=3 timeout 120 $MPIRUN -np 2 ./hpcnn-allreduce \
  --exchange ring --sizes 4K --iters 3 --warmup 1 --output "$out/wrong" --quiet 2>/dev/null
env BLESS_MAX_STALLS=100 "$bless" "$out/wrong" box smoke > "$out/b3.txt" 2>&1
status=$?
cat "$out/b3.txt"
[ "$status" = 1 ] && grep -q 'was measured with a fault injected (HPCNN_TEST_CORRUPT_ELEMENT=3)' "$out/b3.txt" ||
  { echo "FAIL: a run with a fault injected: exit $status, want 1 naming it"; fail=1; }
[ "$(cd "$ref" && find . -type f | sort | xargs md5sum)" = "$before" ] || { echo "FAIL: a refused run changed the reference"; fail=1; }
[ -z "$(ls -A "$out/ref/box" | grep -v '^smoke$')" ] || { echo "FAIL: leftovers beside the reference: $(ls -A "$out/ref/box")"; fail=1; }

# 4. usage
"$bless" box smoke > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: no run folder must exit 2"; fail=1; }
"$bless" "$out/nowhere" box smoke > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: a missing folder must exit 2"; fail=1; }
"$bless" "$out/paused" 'b/x' smoke > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: a bad system name must exit 2"; fail=1; }
env BLESS_MAX_STALLS=1x "$bless" "$out/paused" box smoke > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: a bad BLESS_MAX_STALLS must exit 2"; fail=1; }
mkdir -p "$out/empty"
"$bless" "$out/empty" box smoke > /dev/null 2>&1; [ $? = 1 ] || { echo "FAIL: a folder without result files must exit 1"; fail=1; }
exit $fail
