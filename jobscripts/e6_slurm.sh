#!/usr/bin/env bash
# E6 under Slurm: one rank per node on 1, 2, 4, 8 nodes (sbatch --nodes=9 leaves room for the
# parameter server's extra rank). Submit: sbatch jobscripts/e6_slurm.sh
#SBATCH --job-name=hpcnn-e6
#SBATCH --nodes=9
#SBATCH --ntasks-per-node=1
#SBATCH --time=02:00:00
set -euo pipefail
BIN=${HPCNN_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
OUT=${OUT:-results/e6}
common="--model ${MODEL:-resnet50} --dataset cifar10 --iters ${ITERS:-20} --warmup 3 --output $OUT"
for n in ${NODES:-1 2 4 8}; do
  srun -N "$n" -n "$n" "$BIN/hpcnn-scale" $common --batch 128 --exchange ring,mpi --baseline
  srun -N $((n + 1)) -n $((n + 1)) "$BIN/hpcnn-scale" $common --batch 128 --exchange ps-sync,ps-async --ps-servers 1 --baseline
done
srun -N 8 -n 8 "$BIN/hpcnn-scale" $common --batch 32,64,128 --exchange ring --baseline
"$BIN/hpcnn-summary" --format markdown --columns model,exchange,workers,batch,global_batch,img_per_s,linear_img_per_s,efficiency,comm_wait_s,staleness_mean "$OUT"
