#!/usr/bin/env bash
# The fuzz targets' corpus replay (fuzz/, docs/FUZZING.md), with the project's own compiler: every
# seed of fuzz/corpus/TARGET and every case ever found, fuzz/regressions/TARGET, through
# fuzz/replay_TARGET (the target's code with the sanitizers where the compiler has them). Fails
# when an input crashes, hangs (30 s), trips a sanitizer or throws an exception the reader does not
# document, or makes one allocation over 2 GB (where built with AddressSanitizer). The cases listed in fuzz/known_failures are replayed one by one and must still FAIL:
# one that passes fails this test until its line is removed, so the list stays exact.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
# As under libFuzzer (-malloc_limit_mb): one allocation over 2 GB is a finding, not a success.
# (allocator_may_return_null=0: the result_file target lets such requests fail for the fuzzer.)
export ASAN_OPTIONS=max_allocation_size_mb=2048:allocator_may_return_null=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
fuzz=$HPCNN_SRCDIR/fuzz
targets=(idx cifar result_file checkpoint options)
known=$(sed -e 's/#.*//' "$fuzz/known_failures" | awk 'NF { print $1 }')

# The list names only cases that exist, of known targets.
for case in $known; do
  [ -f "$fuzz/regressions/$case" ] || { echo "FAIL: fuzz/known_failures names $case, which is not in fuzz/regressions/"; fail=1; }
done

# The replay must be able to fail: a missing input is a failure.
if ./fuzz/replay_options "$out/missing" >/dev/null 2>&1; then
  echo "FAIL: fuzz/replay_options passed on a missing input"; fail=1
fi

for t in "${targets[@]}"; do
  inputs=() expected_failures=()
  # fuzz/generated/TARGET: seeds make check wrote into the build folder (the result files).
  for f in "$fuzz/corpus/$t"/* "fuzz/generated/$t"/* "$fuzz/regressions/$t"/*; do
    [ -f "$f" ] || continue
    case "$f" in "$fuzz/regressions/"*)
      if grep -qxF "$t/$(basename "$f")" <<<"$known"; then expected_failures+=("$f"); continue; fi ;;
    esac
    inputs+=("$f")
  done
  [ "$(find "$fuzz/corpus/$t" "fuzz/generated/$t" -type f ! -name .stamp 2>/dev/null | wc -l)" -gt 0 ] ||
    { echo "FAIL: fuzz/corpus/$t and fuzz/generated/$t have no seeds"; fail=1; }
  echo "=== $t: ${#inputs[@]} inputs, ${#expected_failures[@]} known failures"
  timeout 600 "./fuzz/replay_$t" --timeout 30 "${inputs[@]}" > "$out/$t.log" 2>&1
  status=$?
  tail -1 "$out/$t.log"
  if [ "$status" != 0 ]; then
    echo "FAIL: fuzz/replay_$t exited $status$([ $status = 124 ] && echo ' (timed out)'); the end of its output:"
    tail -30 "$out/$t.log"
    fail=1
  fi
  for f in "${expected_failures[@]}"; do
    if timeout 120 "./fuzz/replay_$t" --timeout 30 "$f" > "$out/known.log" 2>&1; then
      echo "FAIL: $t/$(basename "$f") passes now: remove its line from fuzz/known_failures"; fail=1
    else
      echo "ok:   $t/$(basename "$f") still fails, as fuzz/known_failures says: $(grep -m1 -E 'ERROR|HANG|FAIL|runtime error|Killed' "$out/known.log")"
    fi
  done
done
exit $fail
