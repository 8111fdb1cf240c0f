#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e12
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=48:00:00
# E12 (ref. [5] Tables II-V, XIII-XXI, Figs 2-5; docs/EXPERIMENTS.md):
# hyper-parameters against accuracy and
# training/testing time, starting from the four frameworks' default MNIST settings (--preset, see
# `hpcnn-train --preset list`); NaN accuracy where training diverges.
# Slurm: sbatch jobscripts/e12_hyperparameters.sh; elsewhere: NP=1 jobscripts/e12_hyperparameters.sh
#   DATA    MNIST folder or name (default: the presets' mnist; DATA=fashion-mnist uses Debian's package)
#   PART    defaults | batch | combined | lr | all (default all)
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e12}
PART=${PART:-all}
data=(); [ -n "${DATA:-}" ] && data=(--data "$DATA")
train() { run "$HPCNN_BIN/hpcnn-train" "${data[@]}" --backend dnnl --threads "$THREADS" "$@"; }
want() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }

# Table VI: every framework's default settings.
if want defaults; then
  for p in tensorflow-mnist caffe-mnist torch-mnist theano-mnist; do train --preset "$p" --output "$OUT/defaults"; done
fi
# Tables XV-XVIII: batch size x10 steps at the default epochs.
if want batch; then
  train --preset tensorflow-mnist --batch 50,500,5000,50000 --output "$OUT/batch"
  train --preset caffe-mnist --batch 64,640,6400,60000 --output "$OUT/batch"
  train --preset torch-mnist --batch 10,100,1000,10000 --output "$OUT/batch"
  train --preset theano-mnist --batch 50,500,5000 --output "$OUT/batch"
fi
# Tables XIX-XX: batch size and iterations together (iterations -> epochs at 55,000/60,000 images).
if want combined; then
  train --preset tensorflow-mnist --batch 500 --epochs 18,182 --output "$OUT/combined"
  train --preset tensorflow-mnist --batch 5000 --epochs 18,1818 --output "$OUT/combined"
  train --preset caffe-mnist --batch 640 --epochs 11,107 --output "$OUT/combined"
  train --preset caffe-mnist --batch 6400 --epochs 11,1067 --output "$OUT/combined"
fi
# Table XXI: learning rate with batch size and epochs; too large a rate diverges (NaN).
if want lr; then
  train --preset tensorflow-mnist --batch 50,5000 --lr 0.0001,0.001,0.01 --epochs 18,55 --output "$OUT/lr"
  train --preset caffe-mnist --batch 64,6400 --lr 0.01,0.1,0.5 --epochs 9,11 --output "$OUT/lr"
  train --preset torch-mnist --batch 10,100 --lr 0.05,0.4,0.45 --epochs 12,120 --output "$OUT/lr"
  train --preset theano-mnist --batch 500,5000 --lr 0.01,0.1,0.25 --epochs 200,800 --output "$OUT/lr"
fi
# The paper's tables: one row per point (final epoch), NaN accuracy for diverged points.
"$HPCNN_BIN/hpcnn-summary" --format markdown \
    --columns preset,dataset,batch,epochs,lr,optimizer,epoch_s,train_time_s,test_s,test_acc,status "$OUT"
