#!/usr/bin/env bash
# failure_digest.sh [BUILD_DIR]: after a failed `make check`, each failed test's own verdict lines
# (those that start with FAIL or name an error) and the last lines of its output, taken from
# CTest's log, so that a log that keeps only its end (a CI page) still says why each test failed.
# Prints nothing when the log names no failed test.
build=${1:-.}
failed=$build/Testing/Temporary/LastTestsFailed.log
log=$build/Testing/Temporary/LastTest.log
[ -s "$failed" ] && [ -s "$log" ] || exit 0
echo "==== why the failed tests failed (from $log)"
# LastTestsFailed.log holds "NUMBER:NAME" lines.
cut -d: -f2- "$failed" | while read -r name; do
  [ -n "$name" ] || continue
  # One test's block runs from "N/M Testing: NAME" to the next "Testing:" line.
  block=$(awk -v name="$name" '
    / Testing: / { inside = ($NF == name) ; next }
    inside { print }' "$log")
  echo "---- $name"
  grep -E '^(FAIL|.*[Ee]rror[: ]|.*Assertion|.*Failure$|.*timed out|.*Timeout)' <<<"$block" | grep -v '^ok: ' |
    head -n 25 | cut -c1-300
  echo "  (last lines)"
  grep -vE '^(\+ |<end of output>|Test time|Test (Passed|Failed)|"|----------|End testing|[a-z]+ += )' <<<"$block" |
    grep . | tail -n 15 | cut -c1-300 | sed 's/^/  /'
done
