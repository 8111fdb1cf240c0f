#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e4
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --time=00:30:00
# E4 (ref. [1] §4.2, Fig 1; docs/EXPERIMENTS.md):
# the time of every iteration, warm-up included (the first iterations
# are slower). Every suite stores warmup_time_s and iter_time_s per rank; this run keeps 128 timed
# iterations after 10 warm-up ones and prints the spread.
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e4}
run "$HPCNN_BIN/hpcnn-train" --model "${MODEL:-resnet18}" --backend dnnl --batch 64 \
    --threads "$THREADS" --iters "${ITERS:-128}" --warmup 10 --output "$OUT"
"$HPCNN_BIN/hpcnn-summary" --columns model,batch,iters,warmup,iter_median_s,iter_p5_s,iter_p95_s,iter_min_s,iter_max_s "$OUT"
echo "per-iteration times: h5dump -d /points/000000/warmup_time_s -d /points/000000/iter_time_s $OUT/*.h5"
