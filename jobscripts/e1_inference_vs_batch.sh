#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e1
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=01:00:00
# E1 (ref. [1] §4.4, Fig 3; docs/EXPERIMENTS.md):
# inference images/s against batch size for ResNet-50 on CIFAR-10
# (3x32x32) and ImageNet (3x224x224) shapes, CPU on one thread and on all threads, in fp32, int8
# (calibrated on 4 synthetic batches) and, where the CPU has a bf16 kernel, bf16 (CPU_PRECISIONS
# overrides).
# Run: sbatch jobscripts/e1_inference_vs_batch.sh   or   bash jobscripts/e1_inference_vs_batch.sh
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e1}
BATCHES=${BATCHES:-1,2,4,8,16,32,64,128}
run "$HPCNN_BIN/hpcnn-infer" --model resnet50 --backend dnnl --dataset cifar10,imagenet \
    --batch "$BATCHES" --threads "1,$THREADS" --precision "${CPU_PRECISIONS:-$(cpu_infer_precisions)}" \
    --iters "${ITERS:-64}" --warmup 10 --output "$OUT"
if have_gpu; then
  run "$HPCNN_BIN/hpcnn-infer" --model resnet50 --backend cuda --precision "$PRECISIONS" --cudnn-benchmark \
      --dataset cifar10,imagenet --batch "${GPU_BATCHES:-1,2,4,8,16,32,64,128,256}" --iters "${ITERS:-64}" \
      --warmup 10 --output "$OUT"
fi
"$HPCNN_BIN/hpcnn-summary" --columns model,dataset,backend,precision,threads,batch,img_per_s,iter_median_s,iter_p95_s "$OUT"
