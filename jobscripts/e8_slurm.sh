#!/usr/bin/env bash
# E8 under Slurm: 3 worker nodes (+1 server node for the parameter server). sbatch jobscripts/e8_slurm.sh
#SBATCH --job-name=hpcnn-e8
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --time=04:00:00
set -euo pipefail
BIN=${HPCNN_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
OUT=${OUT:-results/e8}
common="--model ${MODELS:-lenet5,alexnet,resnet18,resnet50} --dataset ${DATASETS:-cifar10,cifar100} --batch 42 --iters ${ITERS:-50} --warmup 3 --output $OUT"
srun -N 3 -n 3 "$BIN/hpcnn-scale" $common --exchange mpi,ring --baseline
srun -N 4 -n 4 "$BIN/hpcnn-scale" $common --exchange ps-sync,ps-async --ps-servers 1 --baseline
"$BIN/hpcnn-summary" --format markdown --columns model,dataset,exchange,workers,load_s,forward_s,backward_s,comm_wait_s,update_s,iter_median_s,img_per_s,staleness_mean "$OUT"
