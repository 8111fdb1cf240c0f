#!/usr/bin/env bash
# Preemption and failures on a virtual Slurm cluster of 4 hosts (tests/cluster/cluster_up.sh),
# with the repository's allreduce_sweep.sh, unchanged:
#  - preemption, with srun and with mpirun steps: USR1 to the batch script (scancel --batch
#    --signal=USR1, as --signal=B:USR1@T sends it) while the sweep runs: the step stops after its current point with exit 75, the job
#    requeues itself, Slurm restarts it (Restarts=1) and it resumes; the final result file holds
#    every point exactly once, equal in settings and status to an uninterrupted run's, provenance
#    restarts 1, and no journal or temporary file is left;
#  - a killed rank (SIGKILL to the rank on n2): the job fails within 30 s, its output names the
#    host and task, the job script names the failed step, and no result file is written;
#  - a host that dies (its slurmd and every process on it killed) during a sweep on 3 hosts:
#    within 40 s Slurm cancels the job "due to node failure" and requeues it (--requeue); the
#    restarted job runs on the 3 hosts left, resumes, and its file holds every point once, equal
#    to an uninterrupted run's, with no rank on the dead host.
#  - a node that dies during an acceptance night (acceptance.sh, --no-kill): named in one line,
#    the night goes on over the nodes left, which are measured and judged, and fails; the same
#    without Slurm, acceptance.sh's mpirun given a HOSTFILE of the 4 hosts and reaching them
#    through tests/cluster/cluster_rsh.sh (what ssh is on a cluster), the node's link taken down;
#  - preemption within a training point: E8 on real data (jobscripts/e8_slurm.sh, a checkpoint per
#    epoch) gets USR1 once a checkpoint exists: the point stops at the next step with a checkpoint
#    of it, the job requeues itself, and the restarted job continues that point from the
#    checkpoint (resumed_steps > 0) instead of starting it over; both points end ok with every epoch.
source "$(dirname "$0")/cluster_test_lib.sh"
cluster_start 4
source "$src/tests/cluster/cluster_lib.sh"
cluster_names "$cluster"
js=$src/jobscripts
sweep=(NODES=3 "SIZES=64K,256K,1M,2M,4M,8M" EXCHANGE=mpi,ring ITERS=50 WARMUP=2)

ref=$(submit "$work/ref" "${sweep[@]}" OUT="$work/ref/out" --nodes=3 "$js/allreduce_sweep.sh")
settings() { "$build/hpcnn-summary" --format csv --columns exchange,size_bytes,ranks,iters,warmup,seed,status "$1" | sort; }

# preempt NAME LAUNCH: submit the sweep (srun or mpirun steps), USR1 to its batch script after
# its first completed point, and check the stop, the requeue, the resumed run and its file.
preempt() {
  local name=$1 launch=$2 dir=$work/$1 id out final
  id=$(submit "$dir" "${sweep[@]}" HPCNN_LAUNCH="$launch" OUT="$dir/out" --nodes=3 "$js/allreduce_sweep.sh")
  echo "job $id: the sweep launched by $launch, to be preempted"
  points_in_journal() { [ "$(find "$dir/out/.hpcnn-allreduce-$id-1.journal" -name '*.h5' 2>/dev/null | wc -l)" -ge 1 ]; }
  if wait_for 120 "a first point of job $id" points_in_journal; then
    scancel --batch --signal=USR1 "$id"
    echo "+ scancel --batch --signal=USR1 $id"
  else
    echo "FAIL: job $id completed no point in 120 s"; cat "$dir/slurm-$id.out"; fail=1
  fi
  wait_job "$id" 240
  wait_job "$ref" 240
  out=$dir/slurm-$id.out
  check "$name: job $id completed" [ "$(job_state "$id")" = COMPLETED ]
  check "$name: job $id was restarted once (Restarts=$(job_field "$id" Restarts))" [ "$(job_field "$id" Restarts)" = 1 ]
  check "$name: the step stopped after a point, before the end (exit 75)" in_output "$out" "interrupted by signal 10 after [0-9]+ of 12 points.*exit 75"
  check "$name: the job script requeued the job" in_output "$out" "stopped; requeueing job $id"
  check "$name: the restarted job said it resumes" in_output "$out" "job $id restarted \(1\)"
  check "$name: the first start kept its output (--open-mode=append)" in_output "$out" "^\+ .*$launch .*--run-id $id-1 --resume"
  final=$dir/out/hpcnn-allreduce-$id-1.h5
  if [ -s "$final" ] && [ -s "$work/ref/out/hpcnn-allreduce-$ref-1.h5" ]; then
    check "$name: the final file has 12 points, each once" [ "$(settings "$final" | grep -c ',ok$')" = 12 ]
    check "$name: its points equal the uninterrupted run's in settings and status" \
      diff <(settings "$final") <(settings "$work/ref/out/hpcnn-allreduce-$ref-1.h5")
    check "$name: its provenance counts 1 restart" [ "$(h5dump -a /provenance/restarts "$final" | sed -n 's/^ *(0): //p' | tr -d '"')" = 1 ]
    check "$name: its ranks ran on 3 hosts" distinct_hosts "$final" 3
  else
    echo "FAIL: $name: no final file $final or no reference file"; ls -A "$dir/out" "$work/ref/out"; fail=1
  fi
  check "$name: no journal or temporary file left" [ -z "$(find "$dir/out" -mindepth 1 -name '.*')" ]
}
preempt preempt-srun srun
preempt preempt-mpirun mpirun

# A rank killed: the job ends, saying which, and leaves no result file.
kill_out=$work/kill/out
victim_job=$(submit "$work/kill" NODES=3 SIZES=1M EXCHANGE=ring ITERS=100000 WARMUP=1 OUT="$kill_out" --nodes=3 "$js/allreduce_sweep.sh")
rank_on_n2() { ip netns pids "$(cl_netns 2)" | while read -r p; do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = hpcnn-allreduce ] && echo "$p"; done | head -n 1; }
has_rank_on_n2() { [ -n "$(rank_on_n2)" ]; }
if wait_for 120 "job $victim_job's rank on n2" has_rank_on_n2; then
  sleep 1   # into the timed loop
  victim=$(rank_on_n2)
  echo "+ kill -KILL $victim (the rank of job $victim_job on n2)"
  kill -KILL "$victim"
  killed_at=$SECONDS
  wait_job "$victim_job" 60
  took=$((SECONDS - killed_at))
  check "job $victim_job ended within 30 s of the kill (took $took s)" [ "$took" -le 30 ]
  check "job $victim_job failed ($(job_state "$victim_job"))" [ "$(job_state "$victim_job")" = FAILED ]
  check "its output names the killed task" in_output "$work/kill/slurm-$victim_job.out" "error: n2: task 1: Killed"
  check "the job script named the failed step" in_output "$work/kill/slurm-$victim_job.out" "(allreduce_sweep.sh|slurm_script): step exited [0-9]+: .*hpcnn-allreduce"
  # The ranks left were blocked in the allreduce with their dead peer and ended by SIGKILL, so
  # rank 0's hidden temporary file (.hpcnn-allreduce-ID.h5.tmp) may stay; a result file may not.
  check "no result file" [ -z "$(find "$kill_out" -name '[!.]*.h5' 2>/dev/null)" ]
else
  fail=1; scancel "$victim_job"
fi

# Preemption within a training point (hpcnn-scale --data checkpoints), 8 epochs of 8 steps.
mkdir -p "$work/c10" && "$build/tests/make_image_files" cifar10 "$work/c10" 1008 100 >/dev/null || { echo "FAIL: make_image_files"; fail=1; }
e8=$(submit "$work/e8" DATASETS="$work/c10" MODELS=resnet18 EPOCHS=8 LOADING=cached SCHEMES=allreduce OUT="$work/e8/out" \
  --nodes=4 "$js/e8_slurm.sh")
e8_checkpoint() { compgen -G "$work/e8/out/.hpcnn-scale-$e8-1.journal/ckpt-*.bin" >/dev/null; }
if wait_for 180 "a checkpoint of job $e8" e8_checkpoint; then
  scancel --batch --signal=USR1 "$e8"
  echo "+ scancel --batch --signal=USR1 $e8"
  wait_job "$e8" 300
  out=$work/e8/slurm-$e8.out
  check "e8: job $e8 completed after a restart ($(job_state "$e8"), Restarts=$(job_field "$e8" Restarts))" \
    [ "$(job_state "$e8")" = COMPLETED -a "$(job_field "$e8" Restarts)" = 1 ]
  check "e8: the step stopped within its point (exit 75)" in_output "$out" "interrupted by signal 10 after [0-9]+ of 2 points.*exit 75"
  final=$work/e8/out/hpcnn-scale-$e8-1.h5
  figures=$("$build/hpcnn-summary" --format csv --columns exchange,epochs_done,resumed_steps,status "$final" 2>&1)
  echo "$figures"
  check "e8: both points ok with 8 epochs" [ "$(grep -c ',8,[0-9]*,ok$' <<<"$figures")" = 2 ]
  check "e8: a point continued from its checkpoint" eval "grep -qE ',8,[1-9][0-9]*,ok$' <<<\"\$figures\""
  check "e8: no journal or temporary file left" [ -z "$(find "$work/e8/out" -mindepth 1 -name '.*')" ]
else
  echo "FAIL: job $e8 wrote no checkpoint in 180 s"; cat "$work/e8/slurm-$e8.out"; fail=1; scancel "$e8"
fi

# A node dies during an acceptance night on 4 hosts (jobscripts/acceptance.sh under sbatch, with
# its --no-kill): n3's slurmd and everything on n3 killed once the night's first training wave has
# written its file. The night goes on without n3: one line names it, the steps it broke run again
# on the nodes left, the night's later one-node steps have a result on each of n1, n2 and n4 and
# its step across the nodes runs on those three; the night fails, naming n3.
lost=$(submit "$work/lost" ACCEPT_ROUNDS=1 ACCEPT_ITERS=5 ACCEPT_WARMUP=1 ACCEPT_MIN_TIME=0.1 ACCEPT_NODE_WAVE=2 THREADS=1 \
  ACCEPT_DATA=none ACCEPT_LINK_SIZES=64K ACCEPT_PROBE_TIMEOUT=30 OUT="$work/lost/out" REFERENCE_DIR="$work/no-reference" \
  --nodes=4 "$js/acceptance.sh" smoke lostnode)
first_train() { ls "$work"/lost/out/hpcnn-train-*.h5 >/dev/null 2>&1; }
# hosts_of NIGHT EXE: every host the files of EXE in the night's folder name, sorted, space-separated
hosts_of() { local f; for f in "$work/$1"/out/"$2"-*.h5; do hosts "$f"; done | sort -u | paste -sd' ' -; }
if wait_for 180 "the night's first training file" first_train; then
  echo "+ kill -KILL slurmd and every process of n3 (job $lost)"
  kill -KILL "$(cat "$CL_PIDS/slurmd-n3")" $(ip netns pids "$(cl_netns 3)")
  wait_job "$lost" 300
  out=$work/lost/slurm-$lost.out
  check "the night ran to its end and failed ($(job_state "$lost"))" [ "$(job_state "$lost")" = FAILED ]
  check "one line names n3" [ "$(grep -c 'node n3 does not answer' "$out")" = 1 ]
  check "nodes_lost.txt names n3 alone" [ "$(cut -d' ' -f1 "$work/lost/out/nodes_lost.txt" 2>/dev/null)" = n3 ]
  check "the outcome names n3" in_output "$out" "FAILED|nodes lost during the night: n3"
  # A step that ran on n3 and a live node can hold that node's CPUs until Slurm hears from n3 (a
  # later step would wait for them): the steps after the loss overlap.
  check "the steps after n3 was lost share the CPUs (srun --overlap)" in_output "$out" "srun .*--overlap .*hpcnn-"
  check "the noise probe ran on n1, n2 and n4" [ "$(hosts_of lost hpcnn-blas)" = "n1 n2 n4" ]
  scale=$(ls "$work"/lost/out/hpcnn-scale-*.h5 2>/dev/null | tail -n 1)
  check "the step across the nodes ran on n1, n2 and n4" [ "$( [ -n "$scale" ] && hosts "$scale" | sort | paste -sd' ')" = "n1 n2 n4" ]
  check "the population judged the nodes left" in_output "$work/lost/out/population.txt" "per-node point"
  [ "$fail" = 0 ] || tail -40 "$out"
else
  echo "FAIL: job $lost wrote no training file in 180 s"; fail=1; scancel "$lost"
fi
# n3 back (its slurmd again; Slurm returns it to service when it registers) for the test below.
cl_start_slurmd 3
n3_idle() { [ "$(sinfo -h -n n3 -o '%t')" = idle ]; }
wait_for 60 "n3 to come back" n3_idle || { echo "FAIL: n3 did not come back: $(sinfo -h -N -o '%N %t' | paste -sd' ')"; fail=1; }

# A host dies: n2's slurmd and everything on n2 killed while the sweep runs there.
nf=$(submit "$work/nf" "${sweep[@]}" OUT="$work/nf/out" --nodes=3 "$js/allreduce_sweep.sh")
nf_journal=$work/nf/out/.hpcnn-allreduce-$nf-1.journal
nf_point() { [ "$(find "$nf_journal" -name '*.h5' 2>/dev/null | wc -l)" -ge 1 ]; }
on_n2() { scontrol show hostnames "$(job_field "$nf" NodeList)" | grep -qx n2; }
if wait_for 120 "a first point of job $nf" nf_point && on_n2; then
  echo "+ kill -KILL slurmd and every process of n2 (job $nf)"
  kill -KILL "$(cat "$CL_PIDS/slurmd-n2")" $(ip netns pids "$(cl_netns 2)")
  died_at=$SECONDS
  left_n2() { ! on_n2 || [ "$(job_state "$nf")" != RUNNING ]; }
  wait_for 40 "job $nf to leave the dead host" left_n2 && echo "ok:   job $nf left n2 after $((SECONDS - died_at)) s" || fail=1
  wait_job "$nf" 120
  out=$work/nf/slurm-$nf.out
  check "job $nf completed after a restart ($(job_state "$nf"), Restarts=$(job_field "$nf" Restarts))" \
    [ "$(job_state "$nf")" = COMPLETED -a "$(job_field "$nf" Restarts)" = 1 ]
  check "its output says the node failed" in_output "$out" "CANCELLED AT .* DUE TO NODE FAILURE"
  check "the restarted job resumed" in_output "$out" "job $nf restarted \(1\)"
  final=$work/nf/out/hpcnn-allreduce-$nf-1.h5
  if [ -s "$final" ]; then
    check "its file's points equal the uninterrupted run's" \
      diff <(settings "$final") <(settings "$work/ref/out/hpcnn-allreduce-$ref-1.h5")
    check "its ranks ran on 3 hosts, none of them n2" distinct_hosts "$final" 3
    check "no rank on n2" eval "! hosts '$final' | grep -qx n2"
  else
    echo "FAIL: no final file $final"; ls -A "$work/nf/out"; fail=1
  fi
else
  echo "FAIL: job $nf completed no point on n2 in 120 s"; fail=1; scancel "$nf"
fi

# A node dies during a night without Slurm: acceptance.sh with a HOSTFILE of the 4 hosts, its mpirun
# reaching them through cluster_rsh.sh; once the night's first training wave has written its file,
# n3's link goes down and everything on n3 is killed. One line names n3, the night goes on over
# n1, n2 and n4 (n2's slurmd is gone since the test above; mpirun does not need it) and fails.
printf 'n%d slots=1\n' 1 2 3 4 > "$work/hosts"
mkdir -p "$work/mpirun-lost"
( env -u SLURM_JOB_ID CLUSTER_DIR="$cluster" OMPI_MCA_plm_rsh_agent="$src/tests/cluster/cluster_rsh.sh" HPCNN_BIN="$build" \
    HOSTFILE="$work/hosts" ACCEPT_ROUNDS=1 ACCEPT_ITERS=5 ACCEPT_WARMUP=1 ACCEPT_MIN_TIME=0.1 ACCEPT_NODE_WAVE=2 THREADS=1 \
    ACCEPT_DATA=none ACCEPT_LINK_SIZES=64K ACCEPT_PROBE_TIMEOUT=30 OUT="$work/mpirun-lost/out" REFERENCE_DIR="$work/no-reference" \
    timeout 600 "$js/acceptance.sh" smoke lostnode > "$work/mpirun-lost/log" 2>&1
  echo $? > "$work/mpirun-lost/status" ) &
night=$!
night_train() { ls "$work"/mpirun-lost/out/hpcnn-train-*.h5 >/dev/null 2>&1; }
if wait_for 180 "the mpirun night's first training file" night_train; then
  echo "+ ip -n $(cl_netns 3) link set $(cl_node_veth 3) down; kill -KILL every process of n3"
  ip -n "$(cl_netns 3)" link set "$(cl_node_veth 3)" down
  kill -KILL $(ip netns pids "$(cl_netns 3)") 2>/dev/null
  wait "$night"
  out=$work/mpirun-lost/log
  check "the mpirun night ran to its end and failed (exit $(cat "$work/mpirun-lost/status"))" \
    [ "$(cat "$work/mpirun-lost/status")" = 1 ]
  check "mpirun night: one line names n3" [ "$(grep -c 'node n3 does not answer' "$out")" = 1 ]
  check "mpirun night: nodes_lost.txt names n3 alone" [ "$(cut -d' ' -f1 "$work/mpirun-lost/out/nodes_lost.txt" 2>/dev/null)" = n3 ]
  check "mpirun night: the outcome names n3" in_output "$out" "nodes lost during the night: n3"
  check "mpirun night: the noise probe ran on n1, n2 and n4" [ "$(hosts_of mpirun-lost hpcnn-blas)" = "n1 n2 n4" ]
  scale=$(ls "$work"/mpirun-lost/out/hpcnn-scale-*.h5 2>/dev/null | tail -n 1)
  check "mpirun night: the step across the nodes ran on n1, n2 and n4" [ "$( [ -n "$scale" ] && hosts "$scale" | sort | paste -sd' ')" = "n1 n2 n4" ]
  check "mpirun night: the population judged the nodes left" in_output "$work/mpirun-lost/out/population.txt" "per-node point"
  [ "$fail" = 0 ] || tail -40 "$out"
else
  echo "FAIL: the mpirun night wrote no training file in 180 s"; fail=1; tail -20 "$work/mpirun-lost/log"; kill "$night"
fi
exit $fail
