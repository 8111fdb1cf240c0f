#!/usr/bin/env bash
# E6 under Slurm: one rank per node on 1, 2, 4, 8 nodes, ring/mpi allreduce against the parameter
# server (sync and async, one more node for the server rank), then the batch-size effect at the
# largest size. sbatch --nodes=9 leaves room for the server. Submit: sbatch jobscripts/e6_slurm.sh
# Smaller: NODES="1 2" MODEL=lenet5 ITERS=5 sbatch --nodes=3 jobscripts/e6_slurm.sh
# mpirun inside the allocation instead of srun: HPCNN_LAUNCH=mpirun. Preempted (USR1) the job
# requeues itself and resumes (common.sh).
#SBATCH --job-name=hpcnn-e6
#SBATCH --nodes=9
#SBATCH --ntasks-per-node=1
#SBATCH --time=02:00:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e6}
NODES=${NODES:-1 2 4 8}
BATCH=${BATCH:-128}
common=(--model "${MODEL:-resnet50}" --dataset cifar10 --iters "${ITERS:-20}" --warmup 3 --output "$OUT")
most=$(largest $NODES)
preflight $((most + 1)) $((most + 1))
for n in $NODES; do
  run_on "$n" "$n" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --batch "$BATCH" --exchange ring,mpi --baseline
  run_on $((n + 1)) $((n + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --batch "$BATCH" --exchange ps-sync,ps-async --ps-servers 1 --baseline
done
run_on "$most" "$most" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --batch "32,64,$BATCH" --exchange ring --baseline
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,batch,global_batch,img_per_s,linear_img_per_s,efficiency,comm_wait_s,staleness_mean "$OUT"
