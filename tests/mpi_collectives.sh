#!/usr/bin/env bash
# tests/test_collectives under mpirun at 1, 2, 3 and 4 ranks (oversubscribed): allreduce schemes
# element by element, bit-identical weights, P x B == 1 x PB, ps-sync, ps-async. Each run is
# bounded by `timeout` so a deadlock fails the test instead of hanging CTest.
set -u
cd "${HPCNN_BUILDDIR:?}"
fail=0
for np in 1 2 3 4; do
  echo "=== mpirun -np $np tests/test_collectives"
  timeout 180 mpirun -np "$np" --oversubscribe ./tests/test_collectives
  status=$?
  if [ "$status" != 0 ]; then
    echo "FAIL: -np $np exited $status$([ "$status" = 124 ] && echo ' (timed out after 180 s)')"
    fail=1
  fi
done
exit $fail
