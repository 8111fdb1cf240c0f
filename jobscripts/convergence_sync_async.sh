#!/usr/bin/env bash
# Sync vs async convergence (ref. [1], docs/EXPERIMENTS.md: "we did not explore the convergence and
# optimization aspects of the different update methods"): the same training with synchronous
# allreduce (ring) and with an asynchronous parameter server (ps-async, one server rank more) at
# 1, 2, 4 and 8 workers, test accuracy after every epoch, and the time to --target-accuracy
# (MLPerf's measure: training time, evaluations excluded, until the test accuracy first reaches it).
#   DATA (fashion-mnist)  MODEL (lenet5)  BATCH (32 per worker)  LR (0.05)  EPOCHS (10)
#   TARGET (85 %)  WORKERS ("1 2 4 8")  SHARDING_ASYNC (whole)  TRAIN_LIMIT / TEST_LIMIT
# Quick local check: WORKERS="1 2" EPOCHS=2 TRAIN_LIMIT=6000 TEST_LIMIT=2000 TARGET=60 ./jobscripts/convergence_sync_async.sh
# In Slurm: sbatch --nodes=9 jobscripts/convergence_sync_async.sh (one rank per node).
#SBATCH --job-name=hpcnn-convergence
#SBATCH --ntasks-per-node=1
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
source "$jobscripts/common.sh"
OUT=${OUT:-results/convergence}
common=(--data "${DATA:-fashion-mnist}" --cache --model "${MODEL:-lenet5}" --batch "${BATCH:-32}" --lr "${LR:-0.05}"
        --momentum 0 --epochs "${EPOCHS:-10}" --target-accuracy "${TARGET:-85}"
        ${TRAIN_LIMIT:+--train-limit "$TRAIN_LIMIT"} ${TEST_LIMIT:+--test-limit "$TEST_LIMIT"} --output "$OUT")
for w in ${WORKERS:-1 2 4 8}; do
  run_on "$w" "$w" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ring --sharding shard
  run_on $((w + 1)) $((w + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ps-async --ps-servers 1 \
    --sharding "${SHARDING_ASYNC:-whole}"
done
"$HPCNN_BIN/hpcnn-summary" --table convergence --format markdown "$OUT"
"$HPCNN_BIN/hpcnn-summary" --format markdown --columns exchange,workers,sharding,global_batch,steps_per_epoch,epochs,test_acc,target_accuracy,time_to_accuracy_s,epochs_to_accuracy,target_status,staleness_mean,staleness_max "$OUT"
if command -v gnuplot >/dev/null; then "$HPCNN_BIN/hpcnn-summary" --table convergence --plot "$OUT/convergence.png" "$OUT"; fi
