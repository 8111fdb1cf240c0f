#!/usr/bin/env bash
# Acceptance testing end to end (issue 15), with the smoke set at tiny iteration counts:
#  1. BLESS=1 makes a run the reference (result files and a BLESSED note);
#  2. the reference compared with itself passes, and the JUnit file has no failure;
#  3. an unchanged rerun passes (a wide floor: this 2-core machine is shared and noisy, 30% run
#     to run and more for tiny allreduces), run as cron runs it (jobscripts/acceptance_cron.sh:
#     a dated folder in a history, the verdicts, and the trend over the history);
#  4. a deliberately slowed rerun (pinned to one core beside a busy loop on that core, several
#     times slower) exits 1 with the training point flagged REGRESSION;
#  5. an allreduce with a wrong element fails (STATUS) although it is as fast as the reference;
#  6. a point missing on either side is reported (MISSING-now, MISSING-reference) and fails.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
command -v taskset >/dev/null || { echo "SKIP: no taskset (util-linux)"; exit 77; }
script="$HPCNN_SRCDIR/jobscripts/acceptance.sh"
export HPCNN_BIN="$HPCNN_BUILDDIR" REFERENCE_DIR="$out/ref" ACCEPT_ITERS=10 ACCEPT_WARMUP=2 ACCEPT_DATA_LIMIT=200 THREADS=2
# Noise allowance of the runs compared here: 60% below the reference (a 2.5x slowdown) is still
# noise; tiny allreduces vary more than that here, so they get their own band.
export ACCEPT_SUMMARY_ARGS="--ignore-outliers --tolerance-floor 60% --tolerance busbw_gbs=95%"
ref="$out/ref/box/smoke"
hog=""
trap '[ -z "$hog" ] || kill "$hog" 2>/dev/null; rm -rf "$out"' EXIT
# failures FILE: the number of <failure> elements a CI reader finds in the JUnit file.
failures() { /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as ET
print(len(ET.parse(sys.argv[1]).getroot().findall("./testsuite/testcase/failure")))' "$1"; }

# 1. bless
run env BLESS=1 OUT="$out/run0" "$script" smoke box
n=$(ls "$ref"/*.h5 2>/dev/null | wc -l)
[ "$n" -ge 5 ] || { echo "FAIL: the blessed reference has $n result files, want >= 5 (one per step)"; fail=1; }
[ -s "$ref/BLESSED" ] || { echo "FAIL: no BLESSED note in $ref"; fail=1; }

# 2. identical files pass
run ./hpcnn-summary --compare "$ref" --ignore-outliers --junit "$out/same.xml" "$ref" > "$out/same.txt"
[ "$(failures "$out/same.xml")" = 0 ] || { echo "FAIL: identical files have JUnit failures"; cat "$out/same.xml"; fail=1; }
for suite in hpcnn-allreduce hpcnn-train hpcnn-infer hpcnn-blas hpcnn-scale; do
  grep -q "suite=$suite .* ok" "$out/same.txt" || { echo "FAIL: no ok verdict for $suite"; cat "$out/same.txt"; fail=1; }
done

# 3. an unchanged rerun passes; once more if not, as the machine is shared (another process can
# take a core for seconds): a real regression fails both times, a burst of foreign load rarely
# hits two runs.
cron="$HPCNN_SRCDIR/jobscripts/acceptance_cron.sh"
if ! env HISTORY="$out/hist" "$cron" smoke box > "$out/run1.log" 2>&1; then
  echo "note: the unchanged rerun failed once, trying again:"; grep -hE 'REGRESSION|MISSING|STATUS' "$out"/hist/box/smoke/*/*.txt
  sleep 1  # the next night's folder gets its own second
  run env HISTORY="$out/hist" "$cron" smoke box
fi
night=$(ls -d "$out"/hist/box/smoke/2*/ | head -1)
[ -s "$night/junit.xml" ] || { echo "FAIL: no junit.xml in the night's folder $night"; fail=1; }
grep -q '^trend: [0-9]* points and metrics' "$night/trend.txt" && [ -s "$night/trend-junit.xml" ] ||
  { echo "FAIL: no trend in the night's folder"; cat "$out/run1.log"; fail=1; }

# 4. a slowed rerun is flagged: the run pinned to core 0, where a busy loop takes half its time.
taskset -c 0 bash -c 'while :; do :; done' &
hog=$!
env OUT="$out/slow" taskset -c 0 "$script" smoke box > "$out/slow.log" 2>&1
status=$?
kill "$hog"; wait "$hog" 2>/dev/null; hog=""
grep -E 'suite=hpcnn-(train|infer) .*dataset=cifar10' "$out/slow/verdict.txt" || true
[ "$status" = 1 ] || { echo "FAIL: the slowed run exited $status, want 1"; cat "$out/slow.log"; fail=1; }
grep -Eq 'suite=hpcnn-train .*dataset=cifar10 .*img_per_s .*REGRESSION' "$out/slow/verdict.txt" ||
  { echo "FAIL: the slowed training point is not flagged"; cat "$out/slow.log"; fail=1; }
[ "$(failures "$out/slow/junit.xml")" -ge 1 ] || { echo "FAIL: the slowed run's JUnit file has no failure"; fail=1; }

# 5. wrong elements fail even when fast: the same allreduce points with one damaged element.
HPCNN_TEST_CORRUPT_ELEMENT=5 timeout 120 $MPIRUN -np 2 ./hpcnn-allreduce \
  --exchange mpi,ring --sizes 4K,1M --iters 10 --warmup 2 --quiet --output "$out/wrong" 2>/dev/null
./hpcnn-summary --compare "$ref" --where suite=hpcnn-allreduce --tolerance 10 "$out/wrong" > "$out/wrong.txt"
status=$?
[ "$status" = 1 ] || { echo "FAIL: wrong elements: hpcnn-summary exited $status, want 1"; cat "$out/wrong.txt"; fail=1; }
grep -q 'STATUS .*wrong elements' "$out/wrong.txt" || { echo "FAIL: no STATUS verdict naming wrong elements"; cat "$out/wrong.txt"; fail=1; }

# 6. a point missing on either side: the training file taken out of a copy of the reference.
mkdir -p "$out/part"
cp "$ref"/*.h5 "$out/part/"
for f in "$out"/part/hpcnn-infer-*.h5; do rm "$f"; done
./hpcnn-summary --compare "$ref" --ignore-outliers "$out/part" > "$out/part.txt"
status=$?
[ "$status" = 1 ] && grep -q 'suite=hpcnn-infer .*MISSING-now' "$out/part.txt" ||
  { echo "FAIL: a point missing now: exit $status"; cat "$out/part.txt"; fail=1; }
./hpcnn-summary --compare "$out/part" --ignore-outliers "$ref" > "$out/part.txt"
status=$?
[ "$status" = 1 ] && grep -q 'suite=hpcnn-infer .*MISSING-reference' "$out/part.txt" ||
  { echo "FAIL: a point missing in the reference: exit $status"; cat "$out/part.txt"; fail=1; }

# Bad usage: exit 2.
"$script" weekly box > /dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: an unknown set must exit 2"; fail=1; }
exit $fail
