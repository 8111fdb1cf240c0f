#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e10
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=02:00:00
# E10 (ref. [5] Tables X-XI; docs/EXPERIMENTS.md):
# the compute library under the same training job. lenet5 on MNIST
# shapes trained with each CPU library at its default thread count ("unset"), with CPU user /
# system / iowait / total % and memory average / maximum; then SGEMM GFLOP/s of each library for
# reference. Works under Slurm (sbatch, launched with srun) and without (mpirun -np 1); see
# common.sh for HPCNN_BIN, HPCNN_LAUNCH and OUT.
#   LIBS=openblas,eigen,dnnl ITERS=200 BATCH=64 MODEL=lenet5 jobscripts/e10_blas_libraries.sh
set -euo pipefail
# One unbound process that may use every core (see HPCNN_WHOLE_NODE in common.sh).
HPCNN_WHOLE_NODE=1
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e10}
LIBS=${LIBS:-$("$HPCNN_BIN/hpcnn-blas" --list | awk '/^backends:/{b=1;next} /^[^ ]/{b=0} b && $1!="reference"{print $1}' | paste -sd, -)}
run "$HPCNN_BIN/hpcnn-blas" --sweep model --model "${MODEL:-lenet5}" --dataset mnist --backend "$LIBS" \
    --threads default --batch "${BATCH:-64}" --iters "${ITERS:-200}" --warmup 10 --output "$OUT"
run "$HPCNN_BIN/hpcnn-blas" --sweep gemm --backend "$LIBS" --threads default --sizes 1024,2048 \
    --iters 20 --warmup 3 --output "$OUT"
# oneDNN's bf16 GEMM beside its SGEMM, where the CPU has a bf16 kernel (each against its own peak).
if [[ ",$LIBS," == *,dnnl,* ]] && [ "${CPU_PRECISIONS:-$(cpu_precisions)}" = fp32,bf16 ]; then
  run "$HPCNN_BIN/hpcnn-blas" --sweep gemm --backend dnnl --precision bf16 --threads default --sizes 1024,2048 \
      --iters 20 --warmup 3 --output "$OUT"
fi
"$HPCNN_BIN/hpcnn-summary" --table blas "$OUT"
