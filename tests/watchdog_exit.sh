#!/usr/bin/env bash
# How a stuck job ends under this build's MPI (Open MPI's mpirun here; MPICH's hydra mpiexec in the
# mpich_build test, which runs this script against an MPICH build):
#  - hpcnn asks MPI for MPI_THREAD_FUNNELED and records what it was granted
#    (/provenance/libraries/MPI_thread_level): funneled or more;
#  - a rank stopped (SIGSTOP) in the gradient exchange, --timeout 2, at 3 ranks: the watchdog
#    thread prints ONE line naming the stopped rank and ends its process without calling MPI; the
#    launcher then ends the job within 30 s, no rank left running (the stopped one included), no
#    result file. The job's exit status is the launcher's: Open MPI's mpirun returns the rank's 1;
#    MPICH's hydra returns the rank's 1 or 9, the SIGKILL it sends the other ranks once one has
#    exited non-zero, whichever it sees first (both happen here, run to run).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
cleanup() {
  local p
  for p in $(pgrep -f -- "--output $out/" 2>/dev/null); do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT
echo "launcher: $MPIRUN ($mpi_kind)"

# The thread level granted.
run timeout 120 $MPIRUN -np 2 ./hpcnn-allreduce --exchange mpi --sizes 4K --iters 2 --warmup 1 --quiet --output "$out/level"
level=$(h5dump -a /provenance/libraries/MPI_thread_level "$out"/level/*.h5 2>/dev/null | sed -n 's/^ *(0): "\(.*\)"/\1/p')
case "$level" in
  funneled|serialized|multiple) echo "ok:   MPI thread level granted: $level" ;;
  *) echo "FAIL: MPI thread level '${level:-none}' recorded, want funneled or more"; fail=1 ;;
esac

# A stopped rank: the watchdog ends the job.
SECONDS=0
HPCNN_TEST_FAULT=stop,exchange,4,1 timeout 120 $MPIRUN -np 3 ./hpcnn-scale --model lenet5 --batch 4 --iters 100 \
  --warmup 1 --exchange ring --timeout 2 --output "$out/hang" --quiet > "$out/hang.out" 2> "$out/hang.err"
status=$?
elapsed=$SECONDS
sleep 1  # the launcher's last kills
left=$(pgrep -f -- "--output $out/hang" | wc -l)
line=$(grep 'watchdog:' "$out/hang.err")
echo "exit $status after $elapsed s, $left process(es) left: $line"
want=1
[ "$mpi_kind" = hydra ] && want="1 or 9"
[[ " ${want/or /} " == *" $status "* ]] && [ "$elapsed" -le 30 ] ||
  { echo "FAIL: exit $status after $elapsed s, want $want ($mpi_kind) within 30 s"; cat "$out/hang.err"; fail=1; }
[ "$(grep -c 'watchdog:' "$out/hang.err")" = 1 ] && grep -q 'rank 1 (no answer' <<<"$line" ||
  { echo "FAIL: want one watchdog line naming rank 1"; cat "$out/hang.err"; fail=1; }
[ "$left" = 0 ] || { echo "FAIL: $left process(es) of the job still running"; pgrep -af -- "--output $out/hang"; fail=1; }
[ -z "$(find "$out/hang" -maxdepth 1 -name '*.h5' 2>/dev/null)" ] || { echo "FAIL: a result file after the watchdog"; fail=1; }
exit $fail
