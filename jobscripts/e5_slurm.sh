#!/usr/bin/env bash
# E5 under Slurm: 1, 2, 4, 8 devices on one node (one rank per device). sbatch jobscripts/e5_slurm.sh
# GPUs: BACKEND=cuda EXCHANGE=nccl PRECISION=bf16 sbatch --gpus-per-node=8 jobscripts/e5_slurm.sh
# Smaller: RANKS="1 2" MODEL=lenet5 GLOBAL=64 ITERS=5. mpirun instead of srun: HPCNN_LAUNCH=mpirun.
#SBATCH --job-name=hpcnn-e5
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --time=01:00:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e5}
RANKS=${RANKS:-1 2 4 8}
# Every rank's host, GPU, NCCL and CUDA-aware MPI, before timing.
preflight 1 "$(largest $RANKS)" --backend "${BACKEND:-dnnl}" ${EXCHANGE:+--exchange "$EXCHANGE"}
for n in $RANKS; do
  run_on 1 "$n" "$HPCNN_BIN/hpcnn-scale" --model "${MODEL:-resnet50}" --dataset cifar10 --backend "${BACKEND:-dnnl}" \
    --precision "${PRECISION:-fp32}" --exchange "${EXCHANGE:-ring}" --scaling strong --batch "${GLOBAL:-1024}" --iters "${ITERS:-20}" --warmup 3 --baseline --output "$OUT"
done
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,global_batch,img_per_s,linear_img_per_s,efficiency,overlap "$OUT"
