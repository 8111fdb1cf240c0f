#!/usr/bin/env bash
# hpcnn-allreduce's timing protocol, so that its figures can be set beside OSU's:
#  1. the table is headed by the protocol (data type, placement, barrier, warm-up, averaging) and
#     every point stores it (placement, datatype, iter_sync, warmup, iters);
#  2. --placement in,out: both forms equal the exact sum element by element (wrong = 0), mpi and
#     ring, sizes from one float to 1 MiB plus an odd count;
#  3. out of place, a damaged result element and a damaged send buffer are both wrong elements
#     (exit 1, status failed), however fast;
#  4. bad --placement values are usage errors, and so is out of place in device memory (refused
#     by an earlier check where the build or the MPI has no device memory, as here).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The build's MPI launcher (script_lib.sh); on one machine every rank gets its environment.
ar() { timeout 120 $MPIRUN -np 2 ./hpcnn-allreduce "$@"; }

ar --exchange mpi,ring --placement in,out --sizes 4,4K,1M,4100 --iters 5 --warmup 2 --output "$out/ok" > "$out/ok.txt"
status=$?
cat "$out/ok.txt"
[ "$status" = 0 ] || { echo "FAIL: hpcnn-allreduce exited $status"; fail=1; }
head -1 "$out/ok.txt" | grep -q '^# protocol: float32 sum (MPI_FLOAT, MPI_SUM); placement in = MPI_IN_PLACE.*out = send and receive buffers.*MPI_Barrier before each call, untimed; warm-up' ||
  { echo "FAIL: the table is not headed by the protocol"; fail=1; }
grep -q '^exchange  *exchange_memory  *placement ' "$out/ok.txt" || { echo "FAIL: no placement column in the table"; fail=1; }
csv=$(./hpcnn-summary --format csv --columns exchange,placement,datatype,iter_sync,warmup,iters,size_bytes,wrong,status "$out/ok")
echo "$csv"
[ "$(grep -c ',float32-sum,barrier,2,5,.*,0,ok$' <<<"$csv")" = 16 ] ||
  { echo "FAIL: want 16 points with float32-sum, barrier, 2 warm-up, 5 timed, no wrong element"; fail=1; }
for scheme in mpi ring; do
  for placement in in out; do
    [ "$(grep -c "^$scheme,$placement," <<<"$csv")" = 4 ] || { echo "FAIL: want 4 sizes of $scheme $placement"; fail=1; }
  done
done
# The default table of hpcnn-summary names the placement too.
./hpcnn-summary "$out/ok" | grep -Eq '^mpi +2 +.* host +out +ok$' || { echo "FAIL: hpcnn-summary's allreduce table has no placement"; fail=1; }

for fault in HPCNN_TEST_CORRUPT_ELEMENT HPCNN_TEST_CORRUPT_SEND; do
  export "$fault=7"
  ar --exchange mpi,ring --placement out --sizes 4K --iters 3 --warmup 1 --output "$out/$fault" --quiet 2> "$out/$fault.err"
  status=$?
  unset "$fault"
  wrong=$(./hpcnn-summary --format csv --columns exchange,wrong,status "$out/$fault" | tail -n +2)
  echo "$fault: exit $status; $(echo $wrong)"
  [ "$status" = 1 ] && [ "$(grep -c ',1,failed$' <<<"$wrong")" = 2 ] ||
    { echo "FAIL: $fault out of place: want exit 1 and 1 wrong element per scheme"; cat "$out/$fault.err"; fail=1; }
done

error_lines='^hpcnn-'
expect_error 2 "--placement" -- ./hpcnn-allreduce --placement sideways
expect_error 2 "--memory device" -- ./hpcnn-allreduce --exchange mpi --placement out --memory device
exit $fail
