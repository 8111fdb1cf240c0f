#!/usr/bin/env bash
#SBATCH --job-name=hpcnn-e9
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --time=01:00:00
# E9 (ref. [4] Figs 5, 7, 10; docs/EXPERIMENTS.md):
# time per operator (convolution, batch_norm, fully_connected,
# tanh/relu and their _backward, weights_update) of the E8 models at local batch 42. --fusion off
# keeps every layer its own operator, as the paper's profiles do (with fusion a ReLU is timed
# inside the op before it: batch_norm_relu, add_relu, ...). LeNet-5 uses tanh, as the paper.
# The profile is one extra pass after the timed one (per-op synchronization does not touch the
# images/s figures). Quick local check: MODELS=lenet5 ITERS=5 ./jobscripts/e9_operator_profile.sh
set -euo pipefail
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/e9}
for model in $(echo "${MODELS:-lenet5,alexnet,resnet18,resnet50}" | tr , ' '); do
  act=relu
  [ "$model" = lenet5 ] && act=tanh
  run "$HPCNN_BIN/hpcnn-train" --model "$model" --act "$act" --backend "${BACKEND:-dnnl}" \
      --dataset "${DATASETS:-cifar10}" --batch 42 --threads "$THREADS" --iters "${ITERS:-20}" --warmup 3 \
      --fusion off --profile ops --output "$OUT"
done
"$HPCNN_BIN/hpcnn-summary" --table ops "$OUT"
