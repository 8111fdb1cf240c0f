#!/usr/bin/env bash
# The repository's job scripts, unchanged, through sbatch on a virtual cluster of 5 hosts
# (tests/cluster/cluster_up.sh), shrunk by environment variables only:
#  - E8 (3 workers + 1 server node) with srun + PMIx, results where the script says (results/e8
#    under the folder it was submitted from), and e8_mpirun.sh: mpirun inside the allocation;
#  - E6 on 1, 2 and 4 nodes, sync (ring, mpi, ps-sync) and async (ps-async), the server on a
#    node of its own, then the batch sizes at 4 nodes;
#  - E11 (BLAS thread sweep, one whole-node process);
#  - the allreduce sweep on 2 and 4 nodes (srun) and on 3 nodes (mpirun);
# each job completed, each step's result file (run id JOB-K) is there and passes result_checker,
# its ranks ran on as many distinct hosts as the step asked for, its provenance names the job, and
# the script's own summary table is in the job's output.
source "$(dirname "$0")/cluster_test_lib.sh"
cluster_start 5
js=$src/jobscripts

# All jobs at once: Slurm places them (the hosts share this machine's cores).
e8=$(submit "$work/e8" MODELS=lenet5 DATASETS=cifar10 ITERS=3 "$js/e8_slurm.sh")
e8m=$(submit "$work/e8m" MODELS=lenet5 DATASETS=cifar10 ITERS=3 OUT="$work/e8m/out" --nodes=4 "$js/e8_mpirun.sh")
e6=$(submit "$work/e6" NODES="1 2 4" MODEL=lenet5 BATCH=16 ITERS=3 --nodes=5 "$js/e6_slurm.sh")
# E11 with Eigen where this build has it, else its first CPU library (a sanitizer build has oneDNN only).
cpu_libs=$("$build/hpcnn-blas" --list | awk '/^backends:/{b=1;next} /^[^ ]/{b=0} b && $1!="reference" && $1!="cuda"{print $1}')
e11_lib=$(grep -x eigen <<<"$cpu_libs" || head -n 1 <<<"$cpu_libs")
e11=$(submit "$work/e11" LIBS="$e11_lib" MODEL=lenet5 ITERS=3 BATCH=16 THREADS_MAX=2 "$js/e11_blas_threads.sh")
ar=$(submit "$work/ar" NODES="2 4" SIZES=4,64K,1M EXCHANGE=mpi,ring,rhd ITERS=5 --nodes=4 "$js/allreduce_sweep.sh")
arm=$(submit "$work/arm" HPCNN_LAUNCH=mpirun SIZES=64K,1M EXCHANGE=mpi,ring ITERS=5 --nodes=3 "$js/allreduce_sweep.sh")
echo "jobs: e8 $e8, e8_mpirun $e8m, e6 $e6, e11 $e11, allreduce $ar, allreduce (mpirun) $arm"

# job_ok NAME ID DIR: the job completed with exit 0 (its output shown when not)
job_ok() {
  local name=$1 id=$2 dir=$3
  wait_job "$id" 240 || return 0
  if [ "$(job_state "$id")" = COMPLETED ] && [ "$(job_field "$id" ExitCode)" = 0:0 ]; then
    echo "ok:   $name (job $id) completed"
  else
    echo "FAIL: $name (job $id): $(job_state "$id"), exit $(job_field "$id" ExitCode); its output:"
    cat "$dir/slurm-$id.out"; fail=1
  fi
}
# step_ok NAME FILE ID RANKS [checker]: one step's result file; `checker`: it also passes
# result_checker, which recomputes hpcnn-scale's figures (it knows neither hpcnn-blas's nor
# hpcnn-allreduce's files, nor yet the parameter server's, whose server rank has no iteration
# times).
step_ok() {
  local name=$1 file=$2 id=$3 ranks=$4
  if [ ! -s "$file" ]; then echo "FAIL: $name: no $file (there: $(ls -A "$(dirname "$file")" 2>&1 | tr '\n' ' '))"; fail=1; return; fi
  [ "${5:-}" != checker ] || check "$name: $(basename "$file") passes result_checker" "$build/tests/result_checker" "$file"
  check "$name: $(basename "$file"): $ranks ranks on $ranks distinct hosts" distinct_hosts "$file" "$ranks"
  check "$name: $(basename "$file") names job $id" job_id_in "$file" "$id"
}

job_ok E8 "$e8" "$work/e8"
step_ok E8 "$work/e8/results/e8/hpcnn-scale-$e8-1.h5" "$e8" 3 checker
step_ok E8 "$work/e8/results/e8/hpcnn-scale-$e8-2.h5" "$e8" 4
for scheme in mpi ring ps-sync ps-async; do
  check "E8: the summary table has lenet5 $scheme" in_output "$work/e8/slurm-$e8.out" "^\| lenet5 +\| cifar10 +\| $scheme +\| +3 \|"
done
check "E8: preflight ran on 4 hosts" in_output "$work/e8/slurm-$e8.out" "^preflight: ok"

job_ok "E8 (mpirun)" "$e8m" "$work/e8m"
step_ok "E8 (mpirun)" "$work/e8m/out/hpcnn-scale-$e8m-1.h5" "$e8m" 3 checker
step_ok "E8 (mpirun)" "$work/e8m/out/hpcnn-scale-$e8m-2.h5" "$e8m" 4
check "E8 (mpirun): launched by mpirun" in_output "$work/e8m/slurm-$e8m.out" "^\+ .*mpirun -np 4 --hostfile"
check "E8 (mpirun): the summary table has ps-async" in_output "$work/e8m/slurm-$e8m.out" "^\| lenet5 +\| cifar10 +\| ps-async +\| +3 \|"

job_ok E6 "$e6" "$work/e6"
k=0
for n in 1 2 4; do
  step_ok "E6 ring,mpi on $n" "$work/e6/results/e6/hpcnn-scale-$e6-$((k + 1)).h5" "$e6" "$n" checker
  step_ok "E6 ps on $n+1" "$work/e6/results/e6/hpcnn-scale-$e6-$((k + 2)).h5" "$e6" $((n + 1))
  k=$((k + 2))
done
step_ok "E6 batch sizes on 4" "$work/e6/results/e6/hpcnn-scale-$e6-7.h5" "$e6" 4 checker
for w in 1 2 4; do
  for scheme in ring ps-sync ps-async; do
    check "E6: the summary table has $scheme with $w workers" in_output "$work/e6/slurm-$e6.out" "^\| lenet5 +\| $scheme +\| +$w \|"
  done
done
check "E6: the batch-size step ran batch 32 on 4 workers" in_output "$work/e6/slurm-$e6.out" "^\| lenet5 +\| ring +\| +4 \| +32 \|"

job_ok E11 "$e11" "$work/e11"
for k in 1 2 3; do step_ok "E11 step $k" "$work/e11/results/e11/hpcnn-blas-$e11-$k.h5" "$e11" 1; done
check "E11: the blas table has the gemm rows" in_output "$work/e11/slurm-$e11.out" "^gemm +$e11_lib +2 +1024x1024x1024"

job_ok allreduce "$ar" "$work/ar"
step_ok "allreduce on 2" "$work/ar/results/allreduce/hpcnn-allreduce-$ar-1.h5" "$ar" 2
step_ok "allreduce on 4" "$work/ar/results/allreduce/hpcnn-allreduce-$ar-2.h5" "$ar" 4
rows=$(grep -cE '^(mpi|ring|rhd) +[24] +[0-9]+ ' "$work/ar/slurm-$ar.out")
check "allreduce: the summary's table has all 18 points (found $rows rows)" [ "$rows" = 18 ]
check "allreduce: the table's header" in_output "$work/ar/slurm-$ar.out" "^exchange +ranks +size_bytes +time_avg_us"

job_ok "allreduce (mpirun)" "$arm" "$work/arm"
step_ok "allreduce (mpirun) on 3" "$work/arm/results/allreduce/hpcnn-allreduce-$arm-1.h5" "$arm" 3
check "allreduce (mpirun): launched by mpirun" in_output "$work/arm/slurm-$arm.out" "^\+ .*mpirun -np 3 --hostfile"
exit $fail
