#!/usr/bin/env bash
# E6 (paper 000 §4.6.2, Figs 6-7): multi-node scaling at 1, 2, 4, 8 ranks, synchronous (ring
# allreduce, ps-sync) against asynchronous (ps-async), ResNet-50 on CIFAR-10 shapes, batch 128 per
# worker, with the 1-rank baseline for the linear-scaling line; then the batch-size effect at the
# largest size. Plain mpirun on one machine or a host file: RANKS="1 2 4" HOSTFILE=hosts ./e6_mpirun.sh
# Quick local check: MODEL=lenet5 BATCH=16 ITERS=5 RANKS="1 2 4" ./jobscripts/e6_mpirun.sh
set -euo pipefail
BIN=${HPCNN_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
OUT=${OUT:-results/e6}
MODEL=${MODEL:-resnet50}
BATCH=${BATCH:-128}
ITERS=${ITERS:-20}
RANKS=${RANKS:-1 2 4 8}
HOSTS=${HOSTFILE:+--hostfile $HOSTFILE}
common="--model $MODEL --dataset cifar10 --iters $ITERS --warmup 3 --output $OUT"
for n in $RANKS; do
  mpirun -np "$n" --oversubscribe $HOSTS "$BIN/hpcnn-scale" $common --batch "$BATCH" --exchange ring --baseline
  # Parameter server: one more rank holds the weights, so the worker counts match the ring's.
  mpirun -np $((n + 1)) --oversubscribe $HOSTS "$BIN/hpcnn-scale" $common --batch "$BATCH" --exchange ps-sync,ps-async --ps-servers 1 --baseline
done
last=${RANKS##* }
mpirun -np "$last" --oversubscribe $HOSTS "$BIN/hpcnn-scale" $common --batch 32,64,$BATCH --exchange ring --baseline
# Figs 6-7: images/s against workers with the linear line, sync vs async; batch effect.
"$BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,batch,global_batch,img_per_s,linear_img_per_s,efficiency,comm_wait_s,staleness_mean "$OUT"
