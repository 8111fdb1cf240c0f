#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e2
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=01:00:00
# E2 (paper 000 §4.3, Fig 2): peak memory against batch size, ResNet-50 training on CIFAR-10.
# Each batch size runs in its own process so the peak RSS belongs to that batch alone.
set -euo pipefail
source "$(dirname "$0")/common.sh"
OUT=${OUT:-results/e2}
for b in ${BATCHES:-16 32 64 128 256}; do
  run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend dnnl --dataset cifar10 --batch "$b" \
      --threads "$THREADS" --iters "${ITERS:-20}" --warmup 5 --output "$OUT"
done
"$HPCNN_BIN/hpcnn-summary" --columns model,dataset,batch,peak_rss_mib,img_per_s "$OUT"
