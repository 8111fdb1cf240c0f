#!/usr/bin/env bash
# The ReFrame test library (reframe/) run by ReFrame against the local scheduler
# (reframe/config/local.py), in a venv the test installs once (tests/reframe_lib.sh):
#  1. the smoke size of every suite's test passes (sanity from hpcnn's exit status and the CSV's
#     status/wrong columns), with a performance variable per test read from hpcnn-summary's CSV
#     and checked against a reference with a lower bound;
#  2. a reference set above what the machine can do is a performance failure;
#  3. an allreduce with a wrong element is a sanity failure, however fast.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
source "$HPCNN_SRCDIR/tests/reframe_lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TMPDIR=$out PYTHONDONTWRITEBYTECODE=1  # ReFrame's log files; no __pycache__ in the sources
reframe_venv
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$HPCNN_SRCDIR/reframe/references.json" ||
  { echo "FAIL: reframe/references.json is not JSON"; fail=1; }
rfm() {
  local prefix=$1; shift
  timeout 300 "$reframe" -C "$HPCNN_SRCDIR/reframe/config/local.py" -c "$HPCNN_SRCDIR/reframe/checks" -R \
    -S mpirun_options=--oversubscribe -S hpcnn_bin="$HPCNN_BUILDDIR" --prefix "$out/$prefix" "$@" -r
}

# 1. smoke: every suite, references any working machine meets (a lower bound of 1).
cat > "$out/low.json" <<'JSON'
{"HpcnnTrain %size=smoke": {"*": {"img_per_s": [1, -0.5, null, "images/s"]}},
 "HpcnnAllreduce %size=smoke %exchange=ring": {"local:default": {"busbw_gbs": [0.0001, -0.5, null, "GB/s"]}}}
JSON
HPCNN_RFM_REFERENCES=$out/low.json rfm smoke -t smoke -T acceptance > "$out/smoke.log" 2>&1
status=$?
grep -E '^P: |PASSED|FAILED' "$out/smoke.log"
[ "$status" = 0 ] || { echo "FAIL: the smoke tests exited $status, want 0"; cat "$out/smoke.log"; fail=1; }
grep -Eq 'Ran 7/7 test case\(s\).*\(0 failure' "$out/smoke.log" || { echo "FAIL: want 7 test cases, no failure"; fail=1; }
for var in 'img_per_s: [0-9.e+]+ images/s' 'gflops: [0-9.e+]+ GFLOP/s' 'busbw_gbs: [0-9.e+]+ GB/s'; do
  grep -Eq "^P: $var" "$out/smoke.log" || { echo "FAIL: no performance variable '$var'"; fail=1; }
done
grep -Eq '^P: img_per_s: .*r:1, l:-0.5' "$out/smoke.log" || { echo "FAIL: the reference of HpcnnTrain was not applied"; fail=1; }

# 2. a reference above what the machine can do: a performance failure, exit non-zero.
cat > "$out/high.json" <<'JSON'
{"HpcnnTrain %size=smoke": {"*": {"img_per_s": [1e12, -0.1, null, "images/s"]}}}
JSON
HPCNN_RFM_REFERENCES=$out/high.json rfm high -n '^HpcnnTrain' -t smoke > "$out/high.log" 2>&1
status=$?
grep -E 'performance|FAILED' "$out/high.log"
[ "$status" != 0 ] || { echo "FAIL: an unreachable reference passed"; cat "$out/high.log"; fail=1; }
grep -Eq 'performance error.*img_per_s' "$out/high.log" || { echo "FAIL: no performance error reported"; cat "$out/high.log"; fail=1; }

# 3. a wrong element: a sanity failure naming hpcnn's exit status.
HPCNN_TEST_CORRUPT_ELEMENT=5 HPCNN_RFM_REFERENCES=$out/low.json rfm wrong -n '^HpcnnAllreduce' -t smoke -x ring \
  > "$out/wrong.log" 2>&1
status=$?
grep -E 'sanity|FAILED' "$out/wrong.log"
[ "$status" != 0 ] && grep -Eq 'sanity error' "$out/wrong.log" ||
  { echo "FAIL: wrong elements were not a sanity failure (exit $status)"; cat "$out/wrong.log"; fail=1; }
exit $fail
