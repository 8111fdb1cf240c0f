#!/usr/bin/env bash
# E8 (paper 003 §IV-V, Figs 3-9, Table V): allreduce vs parameter server sync vs async on CPUs,
# 3 workers with local batch 42, time split into load, forward, backward, communication; mean
# communication time. Models: LeNet-5, AlexNet (64x64), ResNet-18, ResNet-50 on CIFAR-10 and -100.
# Allreduce runs on the 3 workers; the parameter server adds one server rank (4 ranks).
# ITERS ~ 10 epochs of 50000/(3 x 42) = 397 iterations per epoch -> ITERS=3970 for the paper's
# length; the default measures 50 iterations per point.
# Quick local check: MODELS=lenet5 DATASETS=cifar10 ITERS=5 ./jobscripts/e8_mpirun.sh
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
OUT=${OUT:-results/e8}
WORKERS=${WORKERS:-3}
common=(--model "${MODELS:-lenet5,alexnet,resnet18,resnet50}" --dataset "${DATASETS:-cifar10,cifar100}" --batch 42 --iters "${ITERS:-50}" --warmup 3 --output "$OUT")
run_on "$WORKERS" "$WORKERS" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange mpi,ring --baseline
run_on $((WORKERS + 1)) $((WORKERS + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ps-sync,ps-async --ps-servers 1 --baseline
# Figs 3-9 / Table V: per scheme and model the phases and the mean communication time.
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,dataset,exchange,workers,load_s,forward_s,backward_s,comm_wait_s,update_s,iter_median_s,img_per_s,staleness_mean "$OUT"
