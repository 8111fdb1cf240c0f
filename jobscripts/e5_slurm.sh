#!/usr/bin/env bash
# E5 under Slurm: 1, 2, 4, 8 devices on one node (one rank per device). sbatch jobscripts/e5_slurm.sh
# GPUs: BACKEND=cuda EXCHANGE=nccl PRECISION=bf16 sbatch --gpus-per-node=8 jobscripts/e5_slurm.sh
#SBATCH --job-name=hpcnn-e5
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --time=01:00:00
set -euo pipefail
BIN=${HPCNN_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
OUT=${OUT:-results/e5}
if [ "${BACKEND:-dnnl}" = cuda ]; then  # every rank's GPU, NCCL and CUDA-aware MPI, before timing
  srun "$BIN/hpcnn-scale" --preflight --backend cuda --exchange "${EXCHANGE:-nccl}"
fi
for n in ${RANKS:-1 2 4 8}; do
  srun -n "$n" "$BIN/hpcnn-scale" --model "${MODEL:-resnet50}" --dataset cifar10 --backend "${BACKEND:-dnnl}" \
    --precision "${PRECISION:-fp32}" --exchange "${EXCHANGE:-ring}" --scaling strong --batch "${GLOBAL:-1024}" --iters "${ITERS:-20}" --warmup 3 --baseline --output "$OUT"
done
"$BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,global_batch,img_per_s,linear_img_per_s,efficiency,overlap "$OUT"
