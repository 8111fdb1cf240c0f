#!/usr/bin/env bash
# A full disk and an unwritable output directory. On a 256 KiB tmpfs filled to leave
# 0..96 KiB, hpcnn-train either succeeds (exit 0, one result file) or stops with exit 1 and one
# line naming the file it could not write ("No space left on device"); either way no hidden
# temporary is left (no .h5.tmp, no .run.txt.tmp, no 0-byte file) and no result file is partial.
# Both failure places are reached: the run's journal and the result file. A read-only file system
# and a path below a file are one line and exit 1 too. Needs root and mount(8) for the tmpfs
# (exit 77, skipped, otherwise); the path below a file is checked everywhere.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"

train=(./hpcnn-train --model lenet5 --backend reference --batch 2 --iters 3 --warmup 1 --quiet)

# The path below a regular file: no mount needed.
err=$("${train[@]}" --output /dev/null/results 2>&1 >/dev/null); st=$?
if [ "$st" = 1 ] && [ "$(printf '%s\n' "$err" | grep -c '^hpcnn-')" = 1 ] && [[ "$err" == *"/dev/null/results"* ]]; then
  echo "ok:   --output /dev/null/results -> $st: $err"
else
  echo "FAIL: --output /dev/null/results -> exit $st (want 1 and one line naming it): $err"; fail=1
fi

mnt="$out/mnt"
mkdir -p "$mnt"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null; then
  echo "skipped: cannot mount a small tmpfs here (needs root and mount permission); the full-disk cases did not run"
  [ "$fail" = 0 ] && exit 77
  exit "$fail"
fi
# Unmounted on every exit path, before script_lib's removal of $out.
trap 'umount "$mnt" 2>/dev/null; rm -rf "$out"' EXIT

# Files a failed or finished run must not leave: hidden temporaries and empty files.
leftovers() { find "$1" -type f \( -name '*.tmp' -o -size 0 \); }

journal_failures=0 result_failures=0 successes=0
for free_kib in 0 4 8 16 24 32 40 48 56 64 72 80 96; do
  rm -rf "${mnt:?}"/*
  # tmpfs counts whole pages: the filler leaves free_kib KiB.
  dd if=/dev/zero of="$mnt/filler" bs=1k count=$((256 - free_kib)) status=none 2>/dev/null
  err=$("${train[@]}" --output "$mnt/out" 2>&1 >/dev/null); st=$?
  files=$(find "$mnt/out" -type f 2>/dev/null)
  left=$(leftovers "$mnt/out" 2>/dev/null)
  [ -z "$left" ] || { echo "FAIL: $free_kib KiB free: left $left"; fail=1; }
  if [ "$st" = 0 ]; then
    successes=$((successes + 1))
    n=$(find "$mnt/out" -name '*.h5' -type f | wc -l)
    [ "$n" = 1 ] || { echo "FAIL: $free_kib KiB free: exit 0 with $n result files: $files"; fail=1; }
    run ./hpcnn-summary --format csv --columns model,status "$mnt/out" > /dev/null
    continue
  fi
  lines=$(printf '%s\n' "$err" | grep -c '^hpcnn-')
  if [ "$st" != 1 ] || [ "$lines" != 1 ] || [[ "$err" != *"No space left on device"* ]]; then
    echo "FAIL: $free_kib KiB free: exit $st (want 1 and one line with 'No space left on device'): $err"; fail=1
    continue
  fi
  echo "ok:   $free_kib KiB free -> $st: $err"
  # No result file: a visible .h5 outside the hidden journal would be a partial result.
  visible=$(find "$mnt/out" -name '*.h5' -not -path '*/.*' -type f)
  [ -z "$visible" ] || { echo "FAIL: $free_kib KiB free: a result file after a failure: $visible"; fail=1; }
  if [[ "$err" == *".journal/"* ]]; then journal_failures=$((journal_failures + 1)); else result_failures=$((result_failures + 1)); fi
done
echo "full disk: $journal_failures failures writing the journal, $result_failures writing the result file, $successes runs that fit"
[ "$journal_failures" -ge 1 ] && [ "$result_failures" -ge 1 ] && [ "$successes" -ge 1 ] ||
  { echo "FAIL: the sizes did not reach every case (journal, result file, success)"; fail=1; }

# A read-only file system: one line naming the directory, exit 1, nothing written.
rm -rf "${mnt:?}"/*
mkdir -p "$mnt/ro"
if mount -o remount,ro "$mnt"; then
  err=$("${train[@]}" --output "$mnt/ro" 2>&1 >/dev/null); st=$?
  if [ "$st" = 1 ] && [ "$(printf '%s\n' "$err" | grep -c '^hpcnn-')" = 1 ] && [[ "$err" == *"$mnt/ro"* ]]; then
    echo "ok:   read-only --output -> $st: $err"
  else
    echo "FAIL: read-only --output -> exit $st (want 1 and one line naming $mnt/ro): $err"; fail=1
  fi
  [ -z "$(ls -A "$mnt/ro")" ] || { echo "FAIL: files in the read-only directory: $(ls -A "$mnt/ro")"; fail=1; }
else
  echo "FAIL: cannot remount the tmpfs read-only"; fail=1
fi
exit $fail
