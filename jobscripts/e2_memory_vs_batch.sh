#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e2
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=01:00:00
# E2 (ref. [1] §4.3, Fig 2; docs/EXPERIMENTS.md):
# peak memory against batch size, ResNet-50 training on CIFAR-10.
# Each batch size runs in its own process so the peak RSS belongs to that batch alone. On a GPU the
# figure is the peak device memory of hpcnn's allocator (gpu_peak_mib) and the GPU's use at the end
# (gpu_used_mib, cudaMemGetInfo), per precision.
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e2}
for b in ${BATCHES:-16 32 64 128 256}; do
  run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend dnnl --dataset cifar10 --batch "$b" \
      --threads "$THREADS" --iters "${ITERS:-20}" --warmup 5 --output "$OUT"
done
if have_gpu; then
  for b in ${GPU_BATCHES:-16 32 64 128 256 512}; do
    run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend cuda --precision "$PRECISIONS" --dataset cifar10 \
        --batch "$b" --iters "${ITERS:-20}" --warmup 5 --output "$OUT"
  done
fi
"$HPCNN_BIN/hpcnn-summary" --columns model,dataset,backend,precision,batch,peak_rss_mib,gpu_peak_mib,gpu_used_mib,img_per_s "$OUT"
