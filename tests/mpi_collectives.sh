#!/usr/bin/env bash
# tests/test_collectives under mpirun at 1, 2, 3 and 4 ranks (oversubscribed): allreduce schemes
# element by element, bit-identical weights, P x B == 1 x PB, ps-sync, ps-async. Each run is
# bounded by `timeout` so a deadlock fails the test instead of hanging CTest.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
for np in 1 2 3 4; do
  run timeout 180 $MPIRUN -np "$np" ./tests/test_collectives
done
exit $fail
