#!/usr/bin/env bash
# E8 under Slurm: 3 worker nodes (+1 server node for the parameter server), see e8_mpirun.sh.
# Submit: sbatch jobscripts/e8_slurm.sh   smaller: MODELS=lenet5 DATASETS=cifar10 ITERS=5
# mpirun inside the allocation instead of srun: HPCNN_LAUNCH=mpirun. Preempted (USR1) the job
# requeues itself and resumes (common.sh).
#SBATCH --job-name=hpcnn-e8
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --time=04:00:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e8}
WORKERS=${WORKERS:-3}
common=(--model "${MODELS:-lenet5,alexnet,resnet18,resnet50}" --dataset "${DATASETS:-cifar10,cifar100}" --batch 42 --iters "${ITERS:-50}" --warmup 3 --output "$OUT")
preflight $((WORKERS + 1)) $((WORKERS + 1))
run_on "$WORKERS" "$WORKERS" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange mpi,ring --baseline
run_on $((WORKERS + 1)) $((WORKERS + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ps-sync,ps-async --ps-servers 1 --baseline
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,dataset,exchange,workers,load_s,forward_s,backward_s,comm_wait_s,update_s,iter_median_s,img_per_s,staleness_mean "$OUT"
