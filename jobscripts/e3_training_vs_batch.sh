#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=02:00:00
# E3 (paper 000 §4.5, Fig 4): training images/s against batch size on one device, ResNet-50 on
# CIFAR-10 and ImageNet shapes.
set -euo pipefail
source "$(dirname "$0")/common.sh"
OUT=${OUT:-results/e3}
run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend dnnl --dataset cifar10,imagenet \
    --batch "${BATCHES:-8,16,32,64,128}" --threads "$THREADS" --iters "${ITERS:-64}" --warmup 10 \
    --output "$OUT"
"$HPCNN_BIN/hpcnn-summary" --columns model,dataset,batch,img_per_s,iter_median_s,iter_p95_s,gflops "$OUT"
