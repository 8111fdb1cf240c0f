#!/usr/bin/env bash
# hpcnn-scale and hpcnn-allreduce end to end: result files that result_checker and
# hpcnn-summary read, with the scaling and allreduce columns; the allreduce check failing on a
# damaged element (exit 1, wrong > 0); bad input (exit 2, one line); and a rank that dies mid-run
# ending the whole job with an error within 60 s instead of hanging; the bf16 gradient exchange
# moving half the bytes.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
MPI="timeout 120 $MPIRUN"
small="--model lenet5 --backend reference --batch 4 --iters 4 --warmup 1 --quiet"

# Allreduce exchange, weak and strong scaling, with the in-job 1-rank baseline.
run $MPI -np 2 ./hpcnn-scale $small --exchange ring,rhd,mpi --scaling weak,strong --bucket-mb 0.01 --baseline --output "$out/ar"
run ./tests/result_checker "$out"/ar/*.h5
csv=$(./hpcnn-summary --format csv --columns exchange,scaling,ranks,workers,batch,global_batch,img_per_s,linear_img_per_s,efficiency,comm_wait_s,comm_s,overlap,bytes_sent "$out/ar")
echo "$csv"
[ "$(tail -n +2 <<<"$csv" | wc -l)" = 6 ] || { echo "FAIL: expected 6 rows"; fail=1; }
grep -q '^ring,weak,2,2,4,8,[0-9.]\+,[0-9.]\+,[0-9.]\+,[0-9.e-]\+,[0-9.e-]\+,[0-9.]\+,[1-9]' <<<"$csv" || { echo "FAIL: ring weak row incomplete"; fail=1; }
grep -q '^ring,strong,2,2,2,4,' <<<"$csv" || { echo "FAIL: strong scaling splits the batch"; fail=1; }
# The exposed communication is the critical-path worker's wait: never more than the largest wait,
# and overlap = (comm_s - comm_exposed_s) / comm_s clamped to [0, 1].
csv=$(./hpcnn-summary --format csv --columns exchange,comm_wait_s,comm_exposed_s,comm_s,overlap "$out/ar")
echo "$csv"
awk -F, 'NR > 1 { if ($3 == "" || $3 > $2 + 1e-12) bad = 1; want = ($4 - $3) / $4; if (want < 0) want = 0; if (want > 1) want = 1;
                  if (want - $5 > 1e-3 || $5 - want > 1e-3) bad = 1 } END { exit bad }' <<<"$csv" ||
  { echo "FAIL: comm_exposed_s > comm_wait_s, or overlap != (comm_s - comm_exposed_s) / comm_s"; fail=1; }

# --exchange-precision bf16: half the bytes of fp32 per rank, recorded as the point's
# exchange_precision (absent for fp32); the parameter servers refuse it before any work.
run $MPI -np 2 ./hpcnn-scale $small --exchange ring,mpi --exchange-precision fp32,bf16 --output "$out/bf16"
csv=$(./hpcnn-summary --format csv --columns exchange,exchange_precision,bytes_sent,status "$out/bf16")
echo "$csv"
for scheme in ring mpi; do
  b32=$(awk -F, -v s=$scheme '$1 == s && $2 == "" {print $3}' <<<"$csv")
  b16=$(awk -F, -v s=$scheme '$1 == s && $2 == "bf16" {print $3}' <<<"$csv")
  awk -v a="$b32" -v b="$b16" 'BEGIN {exit !(a > 0 && b > 0 && b / a > 0.49 && b / a < 0.51)}' ||
    { echo "FAIL: $scheme bf16 sent $b16 bytes against fp32's $b32 (want half)"; fail=1; }
done
expect_error 2 "--exchange-precision bf16: --exchange ps-sync sums fp32 only" -- ./hpcnn-scale --exchange ps-sync --exchange-precision bf16

# Parameter servers: 2 workers + 1 server, sync and async (staleness recorded).
run $MPI -np 3 ./hpcnn-scale $small --exchange ps-sync,ps-async --ps-servers 1 --output "$out/ps"
csv=$(./hpcnn-summary --format csv --columns exchange,ranks,workers,ps_servers,img_per_s,bytes_received,staleness_max "$out/ps")
echo "$csv"
grep -q '^ps-sync,3,2,1,[0-9.]\+,[1-9][0-9]*,$' <<<"$csv" || { echo "FAIL: ps-sync row"; fail=1; }
grep -q '^ps-async,3,2,1,[0-9.]\+,[1-9][0-9]*,[0-9]' <<<"$csv" || { echo "FAIL: ps-async row (staleness)"; fail=1; }

# hpcnn-allreduce: the CSV of its nccl-tests-like columns, every element right.
run $MPI -np 3 ./hpcnn-allreduce --exchange mpi,ring,rhd --sizes 0,4,1000,64K --iters 3 --warmup 1 --quiet --output "$out/allreduce"
csv=$(./hpcnn-summary --format csv --columns exchange,ranks,size_bytes,time_avg_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong "$out/allreduce")
echo "$csv"
head -1 <<<"$csv" | grep -qx 'exchange,ranks,size_bytes,time_avg_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong' || { echo "FAIL: allreduce CSV header"; fail=1; }
[ "$(tail -n +2 <<<"$csv" | grep -c ',0$')" = 12 ] || { echo "FAIL: expected 12 rows with wrong = 0"; fail=1; }

# A damaged element must be counted and fail the run.
HPCNN_TEST_CORRUPT_ELEMENT=5 $MPI -np 2 ./hpcnn-allreduce --exchange ring --sizes 1K --iters 2 --warmup 0 --quiet --output "$out/bad" 2>"$out/err"
status=$?
cat "$out/err"
[ "$status" = 1 ] || { echo "FAIL: a wrong element gave exit $status, want 1"; fail=1; }
grep -q 'wrong elements' "$out/err" || { echo "FAIL: no error line about wrong elements"; fail=1; }
[ "$(./hpcnn-summary --format csv --columns wrong "$out/bad" | tail -1)" = 1 ] || { echo "FAIL: wrong column is not 1"; fail=1; }

# Bad input: exit 2, one line naming the value, no result file. Under mpirun, mpirun adds its own
# notice: expect_error counts only the suite's lines.
error_lines='^hpcnn-'
expect_error 2 "'bogus'" -- ./hpcnn-scale --exchange bogus
expect_error 2 "'ps-sync'" -- ./hpcnn-allreduce --exchange ps-sync
expect_error 2 "'6'" -- ./hpcnn-allreduce --sizes 4,6
expect_error 2 "'1X'" -- ./hpcnn-allreduce --sizes 1X
expect_error 2 "GiB available" -- ./hpcnn-allreduce --sizes 1024G  # more than any node has: refused before any allocation
expect_error 2 "--ps-servers 1" -- ./hpcnn-scale $small --exchange ps-sync
expect_error 2 "--batch 5" -- $MPI -np 2 ./hpcnn-scale --model lenet5 --backend reference --iters 1 --warmup 0 --batch 5 --scaling strong

# Rank 1 dies at iteration 2 (test-only HPCNN_TEST_EXIT_AT): the job must end with an error, and
# within 60 s (the other ranks are inside an allreduce or a barrier waiting for it).
for scheme in ring ps-sync; do
  start=$(date +%s)
  HPCNN_TEST_EXIT_AT=1:2 timeout 60 $MPIRUN -np 3 ./hpcnn-scale $small --iters 50 \
    --exchange $scheme --output "$out/dies" > "$out/dies.log" 2>&1
  status=$? elapsed=$(( $(date +%s) - start ))
  tail -3 "$out/dies.log"
  if [ "$status" = 0 ] || [ "$status" = 124 ]; then echo "FAIL: $scheme: rank exit -> status $status after ${elapsed}s"; fail=1
  else echo "ok:   $scheme: rank 1 exited at iteration 2 -> job status $status after ${elapsed}s (limit 60 s)"; fi
  [ -z "$(ls "$out/dies" 2>/dev/null | grep '\.h5$')" ] || { echo "FAIL: a failed job left a result file"; fail=1; }
done
exit $fail
