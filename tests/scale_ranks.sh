#!/usr/bin/env bash
# hpcnn at 64 real ranks on this machine (oversubscribed, mpi_yield_when_idle): what a site runs at
# hundreds of ranks must not grow worse than O(P) at rank 0 or O(1) per rank. At 64 ranks:
#  - hpcnn-scale (LeNet-5, batch 2): ring, rhd and mpi, and ps-sync, ps-async with 4 servers; exit
#    0, a result file under 2 MB, a bounded terminal (the live table: a line per point), nothing
#    left in the output folder but the result file (the journal goes when the run completes), no
#    rank above 96 MiB of peak resident memory;
#  - hpcnn-allreduce: every element checked at 64 ranks;
#  - --preflight: one row for the host's 64 ranks, not one per rank;
#  - a rank stopped in the exchange (HPCNN_TEST_FAULT) under --timeout 5: the watchdog ends the job
#    with ONE line of bounded length naming the rank, within a bound;
#  - SIGUSR1 to the job between points: exit 75, then --resume completes the run.
# The figures at 2-256 ranks are bench/scale_ranks.py's (docs/PERFORMANCE.md).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1
P=64
MPI="$MPIRUN -np $P"
cleanup() {
  local p
  for p in $(pgrep -f -- "--output $out/" 2>/dev/null); do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT
files_in() { find "$1" -type f | wc -l; }
bytes_of() { du -cb "$1"/*.h5 2>/dev/null | tail -n 1 | cut -f1; }

# hpcnn-scale, allreduce schemes and parameter servers
SECONDS=0
timeout 300 $MPI ./hpcnn-scale --model lenet5 --batch 2 --iters 5 --warmup 1 --exchange ring,rhd,mpi \
  --output "$out/scale" > "$out/scale.log" 2>&1
status=$?
lines=$(wc -l < "$out/scale.log")
echo "hpcnn-scale ring,rhd,mpi at $P ranks: exit $status in $SECONDS s, $lines lines, $(files_in "$out/scale") files, $(bytes_of "$out/scale") B"
[ "$status" = 0 ] || { echo "FAIL: exit $status"; tail -5 "$out/scale.log"; fail=1; }
[ "$lines" -le 12 ] || { echo "FAIL: $lines lines printed for 3 points"; head -20 "$out/scale.log"; fail=1; }
[ "$(files_in "$out/scale")" = 1 ] || { echo "FAIL: files left: $(find "$out/scale" -type f)"; fail=1; }
[ "$(bytes_of "$out/scale")" -lt 2000000 ] || { echo "FAIL: result file of $(bytes_of "$out/scale") B"; fail=1; }
# A rank's fixed memory: 256 ranks must fit a 24 GiB node with room to spare (a GPU library linked
# rather than loaded when used once cost every rank about 100 MiB more than this bound).
peak=$(./hpcnn-summary --format csv --columns peak_rss_mib "$out/scale" | tail -n 1)
echo "largest peak resident memory of a rank: $peak MiB"
if ldd ./hpcnn-scale | grep -q -e libasan -e libtsan; then
  echo "(a sanitizer build: its shadow memory is in that figure, which is not judged)"
else
  awk -v p="$peak" 'BEGIN { exit !(p > 0 && p < 96) }' || { echo "FAIL: a rank peaked at '$peak' MiB, want under 96"; fail=1; }
fi
run timeout 300 $MPI ./hpcnn-scale --model lenet5 --batch 2 --iters 5 --warmup 1 --exchange ps-sync,ps-async \
  --ps-servers 4 --output "$out/ps" --quiet
[ "$(./hpcnn-summary --format csv --columns workers,status "$out/ps" | grep -c '^60,ok$')" = 2 ] ||
  { echo "FAIL: want 2 parameter-server points of 60 workers, ok"; fail=1; }

# hpcnn-allreduce: element by element
run timeout 300 $MPI ./hpcnn-allreduce --exchange ring,rhd,mpi --sizes 4K,256K --iters 3 --warmup 1 --output "$out/ar" --quiet
[ "$(./hpcnn-summary --format csv --columns ranks,wrong,status "$out/ar" | grep -c "^$P,0,ok$")" = 6 ] ||
  { echo "FAIL: want 6 allreduce points of $P ranks without a wrong element"; fail=1; }

# --preflight: a row per host
timeout 300 $MPI ./hpcnn-scale --preflight > "$out/pre.log" 2>&1
status=$?
cat "$out/pre.log"
[ "$status" = 0 ] && [ "$(wc -l < "$out/pre.log")" -le 4 ] && grep -q "^0-$((P - 1)) " "$out/pre.log" ||
  { echo "FAIL: preflight at $P ranks: exit $status, $(wc -l < "$out/pre.log") lines, want one row for ranks 0-$((P - 1))"; fail=1; }

# the watchdog: rank 17 stopped in step 3's exchange
SECONDS=0
HPCNN_TEST_FAULT=stop,exchange,3,17 timeout 300 $MPI ./hpcnn-scale --model lenet5 --batch 2 --iters 50 --warmup 1 \
  --exchange ring --timeout 5 --output "$out/hang" --quiet > "$out/hang.out" 2> "$out/hang.err"
status=$?
elapsed=$SECONDS
line=$(grep 'watchdog:' "$out/hang.err")
echo "watchdog at $P ranks: exit $status after $elapsed s: ${line:0:300}..."
[ "$status" = 1 ] && [ "$elapsed" -le 120 ] || { echo "FAIL: the stopped rank: exit $status after $elapsed s, want 1 within 120 s"; fail=1; }
[ "$(grep -c 'watchdog:' "$out/hang.err")" = 1 ] && grep -q 'rank 17 (no answer' <<<"$line" ||
  { echo "FAIL: want one watchdog line naming rank 17"; cat "$out/hang.err"; fail=1; }
[ "${#line}" -le 2000 ] || { echo "FAIL: the watchdog line is ${#line} characters long"; fail=1; }
[ -z "$(find "$out/hang" -maxdepth 1 -name '*.h5')" ] || { echo "FAIL: a result file after the watchdog"; fail=1; }

# a stop signal between points, then --resume
# (SIGUSR1, as Slurm's --signal sends it: mpirun forwards it to every rank; a SIGTERM would make
# mpirun end the job itself.)
$MPI ./hpcnn-scale --model lenet5 --batch 2,3,4 --iters 200 --warmup 1 --exchange ring --run-id stop \
  --output "$out/stop" --quiet > "$out/stop.log" 2>&1 &
job=$!
for _ in $(seq 600); do
  [ -n "$(find "$out/stop" -name 'point-*.h5' 2>/dev/null)" ] && break
  sleep 0.1
done
kill -USR1 "$job"
timeout 120 tail --pid="$job" -f /dev/null || kill -KILL "$job"
wait "$job"
status=$?
[ "$status" = 75 ] || { echo "FAIL: SIGUSR1 between points: exit $status, want 75"; tail -3 "$out/stop.log"; fail=1; }
run timeout 300 $MPI ./hpcnn-scale --model lenet5 --batch 2,3,4 --iters 200 --warmup 1 --exchange ring --run-id stop \
  --resume --output "$out/stop" --quiet
[ "$(./hpcnn-summary --format csv --columns status "$out/stop" | grep -c '^ok$')" = 3 ] ||
  { echo "FAIL: the resumed run does not hold its 3 points"; fail=1; }
exit $fail
