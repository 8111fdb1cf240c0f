#!/usr/bin/env bash
# hpcnn-summary's reporting end to end: hpcnn-train with --repeat and --profile ops, alone and on
# 2 ranks, writes files whose every figure result_checker recomputes from the raw arrays
# (statistics, phase medians, phases adding up to each iteration within 2%, repeat spread and 95%
# interval, memory, profile); every hpcnn-summary table comes out of them; a point that fails is
# recorded as failed while the sweep goes on (exit 1); damaged files next to a good one: one line
# each, the good one summarized, exit 1; no progress line when stderr is not a terminal; a night's
# folder of several kinds (an allreduce point of 20,000 calls stored as a histogram) shown one table
# per kind, without empty columns or rows of other kinds, under --compare too.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"

run ./hpcnn-train --model lenet5 --backend reference --batch 4,8 --iters 6 --warmup 2 --repeat 3 --profile ops --output "$out/one" --quiet
run $MPIRUN -np 2 ./hpcnn-train --model lenet5 --backend reference --batch 4 --iters 5 --warmup 1 --repeat 2 --profile ops --output "$out/two" --quiet
run ./hpcnn-infer --model lenet5 --backend reference --batch 4 --iters 5 --warmup 1 --profile ops --output "$out/one" --quiet
for f in "$out"/one/*.h5 "$out"/two/*.h5; do run ./tests/result_checker "$f"; done

# Every table has rows; the ops table names the operator kinds as ref. [4] does (docs/EXPERIMENTS.md).
for t in throughput breakdown memory cpu; do
  n=$(./hpcnn-summary --table "$t" --format csv "$out/one" | tail -n +2 | wc -l)
  [ "$n" = 3 ] || { echo "FAIL: --table $t: $n rows, want 3"; fail=1; }
done
ops=$(./hpcnn-summary --table ops --format csv --where mode=train --where batch=8 "$out/one")
echo "$ops"
for k in convolution convolution_backward fully_connected fully_connected_backward relu_backward pooling weights_update; do
  grep -q ",$k," <<<"$ops" || { echo "FAIL: ops table lacks $k"; fail=1; }
done
by=$(./hpcnn-summary --format csv --columns batch --by batch --where mode=train "$out/one" | tr '\n' ' ')
[ "$by" = "batch 4 8 " ] || { echo "FAIL: --by batch gave: $by"; fail=1; }
# The breakdown plot comes out of the files (when gnuplot is installed).
if command -v gnuplot >/dev/null; then
  run ./hpcnn-summary --table breakdown --plot "$out/breakdown.svg" "$out/one" > /dev/null
  grep -q '<svg' "$out/breakdown.svg" || { echo "FAIL: no SVG written"; fail=1; }
fi
# Without gnuplot on PATH, --plot says so in one line (exit 1) and writes no plot.
err=$(PATH=/nonexistent "$PWD/hpcnn-summary" --table breakdown --plot "$out/none.svg" "$out/one" 2>&1 >/dev/null); st=$?
[ "$st" = 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q 'needs gnuplot' <<<"$err" && [ ! -e "$out/none.svg" ] ||
  { echo "FAIL: --plot without gnuplot: want one line naming gnuplot, exit 1, no file (got $st: $err)"; fail=1; }
# An unchanged run compared with itself passes.
run ./hpcnn-summary --compare "$out/one" --tolerance 5% "$out/one" > /dev/null

# A failing point (lenet5 needs 12x12 images) is recorded, the sweep goes on, exit status 1.
err=$(./hpcnn-train --model lenet5,alexnet --backend reference --image-size 8 --batch 2 --iters 1 --warmup 0 --output "$out/failed" 2>&1 >/dev/null); st=$?
[ "$st" = 1 ] || { echo "FAIL: failing points exit $st, want 1"; fail=1; }
[ "$(grep -c 'failed' <<<"$err")" = 2 ] || { echo "FAIL: want one stderr line per failed point: $err"; fail=1; }
csv=$(./hpcnn-summary --format csv --columns model,status "$out/failed")
[ "$csv" = $'model,status\nlenet5,failed\nalexnet,failed' ] || { echo "FAIL: failed points in file: $csv"; fail=1; }
# Damaged files through the hpcnn-summary executable (the reader alone is tested by test_results
# and test_result_damage, under AddressSanitizer with --enable-asan): a truncated, a corrupted, a
# foreign HDF5, a non-HDF5 file and one with a damaged checksum header next to a good one. Each bad file is one stderr line naming it
# with its reason, the good file's rows are still printed, exit status 1; no crash.
mkdir -p "$out/damaged"
src=$(ls "$out"/two/*.h5 | head -1)
cp "$src" "$out/damaged/good.h5"
size=$(stat -c %s "$src")
head -c $((size / 2)) "$src" > "$out/damaged/truncated.h5"
cp "$src" "$out/damaged/corrupted.h5"
printf '\x55\xaa\x55\xaa' | dd of="$out/damaged/corrupted.h5" bs=1 seek=$((size / 2)) conv=notrunc status=none
h5mkgrp "$out/damaged/foreign.h5" /data || { echo "FAIL: h5mkgrp could not make a foreign HDF5 file"; fail=1; }
echo "not an HDF5 file" > "$out/damaged/text.h5"
# One changed byte in the checksum header ("hpcnn-result" -> "hpcnn-resulT") must not turn the
# check off: the file is rejected before HDF5 sees it.
cp "$src" "$out/damaged/header.h5"
printf 'T' | dd of="$out/damaged/header.h5" bs=1 seek=11 conv=notrunc status=none
err=$(./hpcnn-summary --format csv --columns model,ranks,status "$out/damaged" 2>&1 >"$out/damaged.csv"); st=$?
echo "$err"
[ "$st" = 1 ] || { echo "FAIL: damaged files: exit $st, want 1"; fail=1; }
[ "$(printf '%s' "$err" | grep -c '')" = 5 ] || { echo "FAIL: damaged files: want 5 stderr lines"; fail=1; }
for want in "truncated.h5: truncated file" "corrupted.h5: corrupted file" "foreign.h5: not an hpcnn result file" \
            "text.h5: not an hpcnn result file" "header.h5: not an hpcnn result file, or its header is damaged"; do
  grep -qF "hpcnn-summary: error: $out/damaged/$want" <<<"$err" || { echo "FAIL: no error line '$want'"; fail=1; }
done
[ "$(cat "$out/damaged.csv")" = $'model,ranks,status\nlenet5,2,ok' ] ||
  { echo "FAIL: the good file was not summarized next to the damaged ones: $(cat "$out/damaged.csv")"; fail=1; }
# Progress goes to a terminal only: with stderr redirected, nothing but errors.
err=$(./hpcnn-train --model lenet5 --backend reference --batch 2 --iters 3 --warmup 0 --output "$out/quiet" 2>&1 >/dev/null)
[ -z "$err" ] || { echo "FAIL: stderr not empty without a terminal: $err"; fail=1; }

# A night's folder as acceptance.sh leaves it: an allreduce point of more iterations than a file
# keeps stores its times as a histogram (a small file); every table, and --compare, shows each kind
# of result in its own table, without rows of other kinds and without columns no row has a value in.
run $MPIRUN -np 2 ./hpcnn-allreduce --exchange ring --sizes 8 --iters 20000 --warmup 10 --quiet --output "$out/night"
run ./hpcnn-blas --sweep gemm --sizes 64 --threads 1 --iters 20 --warmup 2 --quiet --output "$out/night"
run ./hpcnn-train --model lenet5 --backend reference --batch 4 --iters 3 --warmup 1 --quiet --output "$out/night"
allreduce=$(ls "$out"/night/hpcnn-allreduce-*.h5)
h5ls -r "$allreduce" | grep -q 'iter_time_s_count *Dataset {2, ' || { echo "FAIL: no histogram of 20,000 iterations:"; h5ls -r "$allreduce"; fail=1; }
[ "$(stat -c %s "$allreduce")" -lt 150000 ] || { echo "FAIL: 20,000 iterations take $(stat -c %s "$allreduce") bytes"; fail=1; }
./hpcnn-summary --compare "$out/night" "$out/night" > "$out/night.txt" || { echo "FAIL: the night against itself"; fail=1; }
# One verdict per point: the allreduce, the training, and SGEMM of each library of this build.
points=$((2 + $(./hpcnn-summary --table blas --format csv "$out/night" | tail -n +2 | wc -l)))
/usr/bin/python3 - "$out/night.txt" "$points" <<'EOF' || fail=1
import re, sys
text = open(sys.argv[1]).read()
points = int(sys.argv[2])
tables = dict(re.findall(r"^# (\w[\w-]*): .*?\n(.*?)(?=\n# |\Z)", text, re.S | re.M))
bad = []
if "hpcnn-allreduce" in tables.get("throughput", "") or "gemm" in tables.get("throughput", ""):
    bad.append("the throughput table lists allreduce or SGEMM rows")
if "cpu_user_pct" in tables.get("blas", "cpu_user_pct"):
    bad.append("the blas table has its empty CPU columns (or is missing)")
if "ring" not in tables.get("allreduce", ""):
    bad.append("no allreduce table")
if not re.search(r"compare: %d verdicts, 0 failures" % points, text):
    bad.append("not %d passing verdicts, one per point" % points)
print("\n".join("FAIL: night: " + b for b in bad) or "ok:   night: one table per kind, no empty column, %d verdicts" % points)
sys.exit(1 if bad else 0)
EOF
n=$(./hpcnn-summary --table allreduce --format markdown "$out/night" | grep -c '^| ring')
[ "$n" = 1 ] || { echo "FAIL: --table allreduce over the night: $n ring rows, want 1 and no rows of other kinds"; fail=1; }
exit $fail
