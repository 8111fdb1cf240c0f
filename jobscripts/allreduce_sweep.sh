#!/usr/bin/env bash
# Allreduce over the network between nodes: hpcnn-allreduce's schemes and message sizes with one
# rank per node (PER_NODE more), on every node count of NODES (default: all the allocation's
# nodes), then the summary's allreduce table (time, algorithm and bus bandwidth per size).
#   sbatch --nodes=4 jobscripts/allreduce_sweep.sh
#   NODES="2 4" SIZES=1M,16M EXCHANGE=mpi,ring ITERS=20 sbatch --nodes=4 jobscripts/allreduce_sweep.sh
# mpirun inside the allocation instead of srun: HPCNN_LAUNCH=mpirun. Outside Slurm: NODES=4
# HOSTFILE=hosts HPCNN_LAUNCH=mpirun (or ranks on this machine). Preempted (USR1) the job requeues
# itself and resumes, skipping the completed points (common.sh).
#SBATCH --job-name=hpcnn-allreduce
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:30:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/allreduce}
NODES=${NODES:-${SLURM_JOB_NUM_NODES:-2}}
PER_NODE=${PER_NODE:-1}
for n in $NODES; do
  run_on "$n" $((n * PER_NODE)) "$HPCNN_BIN/hpcnn-allreduce" --sizes "${SIZES:-4,1K,64K,1M,4M,16M}" \
    --exchange "${EXCHANGE:-mpi,ring,rhd}" --iters "${ITERS:-50}" --warmup "${WARMUP:-5}" --output "$OUT"
done
"$HPCNN_BIN/hpcnn-summary" --table allreduce "$OUT"
