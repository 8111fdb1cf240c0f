#!/usr/bin/env bash
# The ReFrame test library (reframe/) through Slurm on a virtual cluster of 2 hosts
# (tests/cluster/cluster_up.sh), with the example site configuration reframe/config/slurm.py (its
# partition renamed to the cluster's) and so ReFrame's `squeue` scheduler: there is no slurmdbd.
# The smoke tests of hpcnn-train, hpcnn-allreduce (one rank per host, srun) and hpcnn-scale pass,
# each as a batch job whose script ReFrame wrote; the allreduce's ranks ran on 2 distinct hosts.
source "$(dirname "$0")/cluster_test_lib.sh"
source "$src/tests/reframe_lib.sh"
reframe_venv
cluster_start 2
export TMPDIR=$work PYTHONDONTWRITEBYTECODE=1  # ReFrame's log files; no __pycache__ in the sources
sed "s/--partition=compute/--partition=hosts/" "$src/reframe/config/slurm.py" > "$work/slurm.py"
(cd "$work" && timeout 400 "$reframe" -C "$work/slurm.py" -c "$src/reframe/checks" -R -t smoke -T acceptance \
  -n '^(HpcnnTrain|HpcnnAllreduce|HpcnnScale)' -x ring -S hpcnn_bin="$build" -S num_tasks_per_node=1 \
  --keep-stage-files --prefix "$work/rfm" -r) > "$work/rfm.log" 2>&1
status=$?
grep -E '^P: |PASSED|FAILED|Reason' "$work/rfm.log"
check "ReFrame on Slurm exited 0" test "$status" = 0
check "3 test cases, no failure" in_output "$work/rfm.log" 'Ran 3/3 test case\(s\).*\(0 failure'
# ReFrame's debug logs (TMPDIR): the jobs were set up for 'squeue' and polled with it, never sacct.
cat "$work"/rfm-*.log > "$work/debug.log"
check "ReFrame set the jobs up for its squeue scheduler" in_output "$work/debug.log" "scheduler: 'squeue'"
check "and polled them with squeue" in_output "$work/debug.log" "\\[CMD\\] 'squeue "
if grep -q "\[CMD\] 'sacct" "$work/debug.log"; then echo "FAIL: ReFrame called sacct"; fail=1; else echo "ok:   and never sacct"; fi
stage=$work/rfm/stage/cluster/compute/hpcnn
allreduce=$(ls "$stage"/HpcnnAllreduce_*/hpcnn-allreduce-*.h5 2>/dev/null | head -1)
if [ -n "$allreduce" ]; then
  check "the allreduce ran on 2 distinct hosts" distinct_hosts "$allreduce" 2
  check "its job script was a batch script launching srun" grep -q '^srun ' "$(dirname "$allreduce")/rfm_job.sh"
  check "its job script asked Slurm for the partition" grep -q -- '--partition=hosts' "$(dirname "$allreduce")/rfm_job.sh"
else
  echo "FAIL: no allreduce result file under $stage"; ls -R "$work/rfm" | head -40; fail=1
fi
[ "$fail" = 0 ] || cat "$work/rfm.log"
exit $fail
