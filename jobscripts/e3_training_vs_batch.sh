#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=02:00:00
# E3 (ref. [1] §4.5, Fig 4; docs/EXPERIMENTS.md):
# training images/s against batch size on one device, ResNet-50 on
# CIFAR-10 and ImageNet shapes, on the CPU in fp32 and, where it has a bf16 kernel, bf16
# (CPU_PRECISIONS overrides); on one GPU too, in each precision, with energy per image (NVML).
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e3}
run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend dnnl --dataset cifar10,imagenet \
    --batch "${BATCHES:-8,16,32,64,128}" --threads "$THREADS" --precision "${CPU_PRECISIONS:-$(cpu_precisions)}" \
    --iters "${ITERS:-64}" --warmup 10 \
    --output "$OUT"
if have_gpu; then
  run "$HPCNN_BIN/hpcnn-train" --model resnet50 --backend cuda --precision "$PRECISIONS" --cudnn-benchmark \
      --dataset cifar10,imagenet --batch "${GPU_BATCHES:-16,32,64,128,256}" --iters "${ITERS:-64}" --warmup 10 \
      --output "$OUT"
fi
"$HPCNN_BIN/hpcnn-summary" --columns model,dataset,backend,precision,batch,img_per_s,iter_median_s,iter_p95_s,gflops,joules_per_image "$OUT"
