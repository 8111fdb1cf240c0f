#!/usr/bin/env bash
# E6 (ref. [1] §4.6.2, Figs 6-7; docs/EXPERIMENTS.md):
# multi-node scaling at 1, 2, 4, 8 ranks, synchronous (ring
# allreduce, ps-sync) against asynchronous (ps-async), ResNet-50 on CIFAR-10 shapes, batch 128 per
# worker, with the 1-rank baseline for the linear-scaling line; then the batch-size effect at the
# largest size. Plain mpirun on one machine or a host file: RANKS="1 2 4" HOSTFILE=hosts ./e6_mpirun.sh
# Quick local check: MODEL=lenet5 BATCH=16 ITERS=5 RANKS="1 2 4" ./jobscripts/e6_mpirun.sh
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
HPCNN_LAUNCH=${HPCNN_LAUNCH:-mpirun}
source "$jobscripts/common.sh"
OUT=${OUT:-results/e6}
MODEL=${MODEL:-resnet50}
BATCH=${BATCH:-128}
ITERS=${ITERS:-20}
RANKS=${RANKS:-1 2 4 8}
common=(--model "$MODEL" --dataset cifar10 --iters "$ITERS" --warmup 3 --output "$OUT")
# One rank per host (per node of a Slurm allocation; on one machine they share it).
for n in $RANKS; do
  run_on "$n" "$n" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --batch "$BATCH" --exchange ring --baseline
  # Parameter server: one more rank holds the weights, so the worker counts match the ring's.
  run_on $((n + 1)) $((n + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --batch "$BATCH" --exchange ps-sync,ps-async --ps-servers 1 --baseline
done
last=$(largest $RANKS)
run_on "$last" "$last" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --batch "32,64,$BATCH" --exchange ring --baseline
# Figs 6-7: images/s against workers with the linear line, sync vs async; batch effect.
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,batch,global_batch,img_per_s,linear_img_per_s,efficiency,comm_wait_s,staleness_mean "$OUT"
