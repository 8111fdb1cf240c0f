#!/usr/bin/env bash
# E8 (ref. [4] §IV-V, Figs 3-9, Table V; docs/EXPERIMENTS.md) with mpirun:
# 3 workers + 1 parameter-server rank,
# local batch 42, 10 epochs of CIFAR-10/100 per model, cached and read from the files, sync and
# async; the steps and their settings (DATASETS, MODELS, EPOCHS, LOADING, ...) are in e8_steps.sh.
# Quick local check at 4 ranks on Fashion-MNIST:
#   DATASETS=fashion-mnist MODELS=lenet5 EPOCHS=1 TRAIN_LIMIT=6000 TEST_LIMIT=2000 ./jobscripts/e8_mpirun.sh
# E8 on synthetic batches (no data files): MODELS=lenet5 DATASETS=cifar10 ITERS=5 ./jobscripts/e8_mpirun.sh
# On hosts: HOSTFILE=hosts ./jobscripts/e8_mpirun.sh; in a Slurm allocation (sbatch --nodes=4
# jobscripts/e8_mpirun.sh) mpirun uses one node per rank of the allocation.
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
HPCNN_LAUNCH=${HPCNN_LAUNCH:-mpirun}
source "$jobscripts/common.sh"
source "$jobscripts/e8_steps.sh"
