#!/usr/bin/env bash
# E5 (ref. [1] §4.6.1, Fig 5; docs/EXPERIMENTS.md):
# synchronous scaling over 1, 2, 4, 8 ranks (one device each),
# ResNet-50, CIFAR-10 shapes, global batch 1024 (strong scaling). On GPUs (one rank per GPU, the
# rank's GPU chosen by its local rank): BACKEND=cuda EXCHANGE=nccl,ring,mpi PRECISION=bf16; first a
# --preflight that checks every rank's GPU, NCCL and CUDA-aware MPI. Default: CPU ranks, ring.
# Quick local check: MODEL=lenet5 GLOBAL=64 ITERS=5 RANKS="1 2 4" ./jobscripts/e5_mpirun.sh
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
HPCNN_LAUNCH=${HPCNN_LAUNCH:-mpirun}
source "$jobscripts/common.sh"
OUT=${OUT:-results/e5}
RANKS=${RANKS:-1 2 4 8}
if [ "${BACKEND:-dnnl}" = cuda ]; then
  preflight 1 "$(largest $RANKS)" --backend cuda --exchange "${EXCHANGE:-nccl}"
fi
for n in $RANKS; do
  run_on 1 "$n" "$HPCNN_BIN/hpcnn-scale" --model "${MODEL:-resnet50}" \
    --dataset cifar10 --backend "${BACKEND:-dnnl}" --precision "${PRECISION:-fp32}" --exchange "${EXCHANGE:-ring}" --scaling strong --batch "${GLOBAL:-1024}" \
    --iters "${ITERS:-20}" --warmup 3 --baseline --output "$OUT"
done
# Fig 5: images/s and efficiency against ranks, with the linear line.
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,global_batch,img_per_s,linear_img_per_s,efficiency,overlap "$OUT"
