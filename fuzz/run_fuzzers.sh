#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/fuzz-TARGET, built by `make fuzz-build`) from the build folder:
# `make fuzz` and the CTest fuzz_smoke call it.
# usage: run_fuzzers.sh --seconds N [--work DIR] [--seed S] [--keep-going] TARGET...
# Per target, for N seconds: the seeds are fuzz/corpus/TARGET and fuzz/regressions/TARGET, less
# the cases of fuzz/known_failures (a case that still crashes would stop the run at its first
# input); new inputs go to DIR/TARGET/corpus (default DIR: fuzz-work). A crash, sanitizer report,
# leak, unexpected exception, hang (an input over 10 s) or memory blow-up (over 2 GB) is kept in
# DIR/TARGET/findings/ and fails the run; see docs/FUZZING.md for what to do with it. Without
# --keep-going a target stops at its first finding; with it (libFuzzer's fork mode) it goes on
# for the whole time and keeps every finding.
# Exit status: 0 when no target found anything, 1 otherwise, 2 for bad usage.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
seconds="" work=fuzz-work seed="" keep_going=() targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2-}; shift 2 ;;
    --work) work=${2-}; shift 2 ;;
    --seed) seed=${2-}; shift 2 ;;
    --keep-going) keep_going=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1); shift ;;
    -*) echo "run_fuzzers.sh: unknown option '$1'" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "run_fuzzers.sh: --seconds: '$seconds' is not a positive number" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || { echo "usage: run_fuzzers.sh --seconds N [--work DIR] [--seed S] TARGET..." >&2; exit 2; }

# The cases of fuzz/known_failures (lines "TARGET/FILE reason"), one per line.
known=$(sed -e 's/#.*//' "$srcdir/fuzz/known_failures" | awk 'NF { print $1 }')

failed=0
for t in "${targets[@]}"; do
  binary=./fuzz/fuzz-$t
  [ -x "$binary" ] || { echo "run_fuzzers.sh: $binary is not built (make fuzz-build)" >&2; exit 2; }
  dir=$work/$t
  rm -rf "$dir/seeds" "$dir/findings"
  mkdir -p "$dir/corpus" "$dir/seeds" "$dir/findings"
  # fuzz/generated/TARGET: seeds written by make check into the build folder (fuzz/Makefile.inc).
  for f in "$srcdir/fuzz/corpus/$t"/* "fuzz/generated/$t"/* "$srcdir/fuzz/regressions/$t"/*; do
    [ -f "$f" ] || continue
    case "$f" in "$srcdir/fuzz/regressions/"*)
      grep -qxF "$t/$(basename "$f")" <<<"$known" && continue ;;
    esac
    cp "$f" "$dir/seeds/"
  done
  # result_file: libhdf5 asks for sizes it reads from the file (fuzz/known_failures); up to 1 TB
  # is allocated (untouched, so the 2 GB RSS limit still catches a real blow-up) or refused, and
  # fuzzing goes on instead of rediscovering that one finding.
  extra=()
  [ "$t" = result_file ] && extra=(-malloc_limit_mb=1048576)
  echo "=== $t: $seconds s from $(ls "$dir/seeds" | wc -l) seeds and $(ls "$dir/corpus" | wc -l) inputs of earlier runs"
  "$binary" "$dir/corpus" "$dir/seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$dir/findings/" -print_final_stats=1 ${seed:+-seed=$seed} "${keep_going[@]}" "${extra[@]}" > "$dir/log" 2>&1
  status=$?
  # The last progress line: runs, coverage, corpus (one form for each of libFuzzer's two modes).
  grep -E '^#[0-9]+:? .*cov: ' "$dir/log" | tail -1
  if [ "$status" != 0 ] || [ -n "$(ls -A "$dir/findings")" ]; then
    echo "FINDING: $t (exit $status); the end of $dir/log:"
    tail -40 "$dir/log"
    echo "the input: $(ls "$dir"/findings/* 2>/dev/null | tr '\n' ' ')"
    echo "(add it to fuzz/regressions/$t/ once understood; docs/FUZZING.md)"
    failed=1
  fi
done
exit $failed
