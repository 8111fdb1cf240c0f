#!/usr/bin/env bash
# E8 under Slurm: 3 worker nodes (+1 server node for the parameter server), see e8_mpirun.sh.
# Submit: sbatch jobscripts/e8_slurm.sh   smaller: MODELS=lenet5 DATASETS=cifar10 EPOCHS=1
# (settings: e8_steps.sh; ITERS=5: E8 on synthetic batches)
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
preflight $((${WORKERS:-3} + 1)) $((${WORKERS:-3} + 1))
source "$jobscripts/e8_steps.sh"
