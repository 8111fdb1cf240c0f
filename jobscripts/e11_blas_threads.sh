#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e11
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=04:00:00
# E11 (ref. [5] Table XII; docs/EXPERIMENTS.md):
# the library's thread count. lenet5 trained with each CPU library at
# 1, 2, 4, ... up to the node's cores, and unset (the library's default), with CPU usage and
# memory per row; the same thread counts for the convolution/fc layers and for SGEMM. Works under
# Slurm (srun) and without (mpirun -np 1); see common.sh.
#   LIBS=openblas,eigen THREADS_MAX=48 ITERS=200 jobscripts/e11_blas_threads.sh
set -euo pipefail
# One unbound process that may use every core (see HPCNN_WHOLE_NODE in common.sh).
HPCNN_WHOLE_NODE=1
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e11}
LIBS=${LIBS:-$("$HPCNN_BIN/hpcnn-blas" --list | awk '/^backends:/{b=1;next} /^[^ ]/{b=0} b && $1!="reference"{print $1}' | paste -sd, -)}
max=${THREADS_MAX:-${SLURM_CPUS_ON_NODE:-$(nproc)}}
threads=""
for ((t = 1; t < max; t *= 2)); do threads="$threads$t,"; done
threads="${threads}${max},default"
echo "threads: $threads"
run "$HPCNN_BIN/hpcnn-blas" --sweep model --model "${MODEL:-lenet5}" --dataset mnist --backend "$LIBS" \
    --threads "$threads" --batch "${BATCH:-64}" --iters "${ITERS:-200}" --warmup 10 --output "$OUT"
run "$HPCNN_BIN/hpcnn-blas" --sweep layers --model "${MODEL:-lenet5}" --dataset mnist --backend "$LIBS" \
    --threads "$threads" --batch "${BATCH:-64}" --iters 20 --warmup 3 --output "$OUT"
run "$HPCNN_BIN/hpcnn-blas" --sweep gemm --backend "$LIBS" --threads "$threads" --sizes 1024 \
    --iters 20 --warmup 3 --output "$OUT"
# Table XII's layout: one row per library and thread count (model rows), then layers and SGEMM.
"$HPCNN_BIN/hpcnn-summary" --table blas "$OUT"
