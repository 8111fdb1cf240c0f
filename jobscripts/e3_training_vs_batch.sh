#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=02:00:00
# E3 (paper 000 §4.5, Fig 4): training images/s against batch size on one device, ResNet-50 on
# CIFAR-10 and ImageNet shapes; on one GPU too, in each precision, with energy per image (NVML).
set -euo pipefail
source "$(dirname "$0")/common.sh"
OUT=${OUT:-results/e3}
run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend dnnl --dataset cifar10,imagenet \
    --batch "${BATCHES:-8,16,32,64,128}" --threads "$THREADS" --iters "${ITERS:-64}" --warmup 10 \
    --output "$OUT"
if have_gpu; then
  run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend cuda --precision "$PRECISIONS" --cudnn-benchmark \
      --dataset cifar10,imagenet --batch "${GPU_BATCHES:-16,32,64,128,256}" --iters "${ITERS:-64}" --warmup 10 \
      --output "$OUT"
fi
"$HPCNN_BIN/hpcnn-summary" --columns model,dataset,backend,precision,batch,img_per_s,iter_median_s,iter_p95_s,gflops,joules_per_image "$OUT"
