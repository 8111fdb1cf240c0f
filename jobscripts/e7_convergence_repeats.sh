#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e7
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=24:00:00
# E7 (ref. [1] §4.7, Fig 8; docs/EXPERIMENTS.md):
# convergence on real data -- train and test accuracy per epoch and
# the epoch time, ResNet on CIFAR-10, SGD lr 0.1, batch 128, 5 repeats with different seeds.
# Slurm: sbatch jobscripts/e7_convergence_repeats.sh; elsewhere: NP=1 jobscripts/e7_convergence_repeats.sh
#   DATA    CIFAR-10 binary folder or name (default cifar10: $HPCNN_DATA/cifar10, /usr/share/datasets/cifar10)
#   EPOCHS  epochs per repeat (default 30); MODEL (default resnet18-cifar); REPEAT (default 5)
# Batch-norm models are evaluated in inference mode with their running statistics (test_eval =
# inference, as PyTorch's model.eval()); see docs/RESULTS.md.
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e7}
run "$HPCNN_BIN/hpcnn-train" --data "${DATA:-cifar10}" --model "${MODEL:-resnet18-cifar}" --backend dnnl \
    --batch 128 --optimizer sgd --lr 0.1 --momentum 0.9 --weight-decay 0.0005 --lr-schedule cosine \
    --epochs "${EPOCHS:-30}" --repeat "${REPEAT:-5}" --augment --cache --threads "$THREADS" --output "$OUT"
# One row per epoch and repeat (the figure's data), then the curves: mean over the repeats with
# the min-max band, train and test accuracy against the epoch.
"$HPCNN_BIN/hpcnn-summary" --table accuracy --format csv "$OUT" > "$OUT/e7_accuracy.csv"
awk -F, 'NR > 1 { e = $9; n[e]++; tr[e] += $11; te[e] += $13;
                  if (!(e in lo) || $13 < lo[e]) lo[e] = $13; if (!(e in hi) || $13 > hi[e]) hi[e] = $13 }
         END { for (e in n) printf "%d %.4f %.4f %.4f %.4f\n", e, tr[e] / n[e], te[e] / n[e], lo[e], hi[e] }' \
    "$OUT/e7_accuracy.csv" | sort -n > "$OUT/e7_curves.dat"
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 900,600 noenhanced
set output "$OUT/e7_accuracy.png"
set xlabel "epoch"; set ylabel "accuracy [%]"; set key bottom right; set grid
plot "$OUT/e7_curves.dat" using 1:4:5 with filledcurves lc rgb "#c0d0ff" title "test (min-max over repeats)", \
     "" using 1:3 with linespoints lw 2 title "test (mean)", "" using 1:2 with linespoints lw 2 title "train (mean)"
GP
  echo "plot: $OUT/e7_accuracy.png"
fi
# Every repeat's curves, plotted by hpcnn-summary itself (gnuplot), next to the band plot above.
"$HPCNN_BIN/hpcnn-summary" --table accuracy --plot "$OUT/e7_accuracy_runs.png" "$OUT" || true
"$HPCNN_BIN/hpcnn-summary" --table accuracy "$OUT"
