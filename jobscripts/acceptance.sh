#!/usr/bin/env bash
# Acceptance test of a system (docs/ACCEPTANCE.md): runs one named set of points into a dated
# folder, compares it with the system's reference results/reference/<SYSTEM>/<SET>/ (hpcnn-summary
# --compare: a verdict per point and metric, --junit) and exits 0 when every verdict passes, 1
# otherwise (a regression, a failed/wrong/diverged point, a point missing on either side, a step
# that failed, no reference), 2 on bad usage.
#
#   jobscripts/acceptance.sh SET [SYSTEM]      SET: smoke | nightly | full; SYSTEM: default
#                                              $HPCNN_SYSTEM, else the short host name
#   BLESS=1 jobscripts/acceptance.sh SET       after a run whose steps all succeeded and whose
#                                              points are clean (jobscripts/bless.sh), the run
#                                              becomes the reference (the old one is replaced)
#   sbatch --nodes=1 jobscripts/acceptance.sh nightly
#
# Environment (all optional):
#   OUT            the run's folder (default results/acceptance/<SYSTEM>/<SET>/<UTC date-time>)
#   REFERENCE_DIR  the reference root (default: results/reference of this checkout)
#   ACCEPT_ITERS, ACCEPT_WARMUP   timed and warm-up iterations of every point (per-set defaults)
#   ACCEPT_RANKS   ranks of the hpcnn-allreduce and hpcnn-scale steps (default 2)
#   ACCEPT_DATA    real-data set of the short training run (default fashion-mnist; none: skipped)
#   ACCEPT_DATA_LIMIT  training and test images of that run (per-set defaults)
#   ACCEPT_SUMMARY_ARGS  more hpcnn-summary options, e.g. "--tolerance-floor 10% --ignore-outliers"
#   THREADS, HPCNN_BIN, HPCNN_LAUNCH, HOSTFILE: as for every job script (jobscripts/common.sh)
#SBATCH --job-name=hpcnn-acceptance
#SBATCH --nodes=1
set -uo pipefail
usage() { echo "usage: ${0##*/} smoke|nightly|full [SYSTEM]   (BLESS=1 makes the run the reference)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
SET=$1
case "$SET" in smoke|nightly|full) ;; *) echo "${0##*/}: unknown set '$SET' (smoke, nightly, full)" >&2; exit 2 ;; esac
SYSTEM=${2:-${HPCNN_SYSTEM:-$(hostname -s)}}
[[ "$SYSTEM" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "${0##*/}: bad system name '$SYSTEM' (letters, digits, . _ -)" >&2; exit 2; }

jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
jobscripts=$(cd "$jobscripts" && pwd)
# One-process steps may use every core of the node: mpirun -np 1 would otherwise bind the rank and
# all its threads to one core (LeNet-5 training read 2,000 instead of 40,000 images/s here).
HPCNN_WHOLE_NODE=${HPCNN_WHOLE_NODE-1}
source "$jobscripts/common.sh"
REFERENCE_DIR=${REFERENCE_DIR:-$jobscripts/../results/reference}
reference=$REFERENCE_DIR/$SYSTEM/$SET
OUT=${OUT:-results/acceptance/$SYSTEM/$SET/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || { echo "${0##*/}: cannot create $OUT" >&2; exit 1; }
RANKS=${ACCEPT_RANKS:-2}
DATA=${ACCEPT_DATA:-fashion-mnist}

# The set's sizes: smoke takes a few minutes on one node, nightly tens of minutes, full hours.
case "$SET" in
  smoke)   iters=20;  warmup=3;  model=lenet5;   batch=32;  sizes=4K,1M;        gemm=256;      limit=1000 ;;
  nightly) iters=50;  warmup=5;  model=resnet18; batch=32;  sizes=4K,1M,16M;    gemm=256,1024; limit=10000 ;;
  full)    iters=100; warmup=10; model=resnet50; batch=64;  sizes=4K,64K,1M,16M,64M; gemm=256,1024,2048; limit=60000 ;;
esac
iters=${ACCEPT_ITERS:-$iters}
warmup=${ACCEPT_WARMUP:-$warmup}
limit=${ACCEPT_DATA_LIMIT:-$limit}
common=(--iters "$iters" --warmup "$warmup" --output "$OUT" --quiet)
echo "acceptance set $SET on $SYSTEM: results in $OUT, reference $reference"

# Every step runs, also after one failed: the verdict names what is missing or wrong.
steps_failed=0
step_ok() { "$@" || { echo "${0##*/}: step failed: $*" >&2; steps_failed=$((steps_failed + 1)); }; }
# Allreduce: the job's schemes and sizes, the correctness check in every point (wrong = 0).
step_ok run_on 1 "$RANKS" "$HPCNN_BIN/hpcnn-allreduce" --exchange mpi,ring --sizes "$sizes" "${common[@]}"
# Training and inference throughput on synthetic data.
step_ok run "$HPCNN_BIN/hpcnn-train" --model "$model" --batch "$batch" --threads "$THREADS" "${common[@]}"
step_ok run "$HPCNN_BIN/hpcnn-infer" --model "$model" --batch "$batch" --threads "$THREADS" "${common[@]}"
# BLAS: SGEMM of the default libraries.
step_ok run "$HPCNN_BIN/hpcnn-blas" --sweep gemm --sizes "$gemm" --threads "$THREADS" "${common[@]}"
# Data-parallel training: ring allreduce over the ranks.
step_ok run_on 1 "$RANKS" "$HPCNN_BIN/hpcnn-scale" --model lenet5 --batch "$batch" --exchange ring "${common[@]}"
# A short real-data run: accuracy and throughput (skipped where the data set is not installed).
if [ "$DATA" != none ] && [ -e "/usr/share/datasets/$DATA" ]; then
  step_ok run "$HPCNN_BIN/hpcnn-train" --data "$DATA" --model lenet5 --image-size 32 --batch 32 --lr 0.02 --momentum 0.9 \
    --epochs 1 --train-limit "$limit" --test-limit "$limit" --threads "$THREADS" --output "$OUT" --quiet
else
  echo "(real-data run skipped: /usr/share/datasets/$DATA not installed)"
fi

if [ -n "${BLESS:-}" ] && [ "$BLESS" != 0 ]; then
  if [ "$steps_failed" -gt 0 ]; then
    echo "${0##*/}: BLESS: $steps_failed step(s) failed: the run is not made the reference" >&2
    exit 1
  fi
  # bless.sh refuses a run that is not clean (failed points, wrong elements, outlier iterations
  # unless the comparisons here ignore them).
  BLESS_ARGS=${ACCEPT_SUMMARY_ARGS:-} REFERENCE_DIR=$REFERENCE_DIR "$jobscripts/bless.sh" "$OUT" "$SYSTEM" "$SET"
  exit $?
fi

if ! ls "$reference"/*.h5 >/dev/null 2>&1; then
  echo "${0##*/}: no reference in $reference: run once with BLESS=1 on a system known to be good" >&2
  exit 1
fi
read -ra summary_args <<<"${ACCEPT_SUMMARY_ARGS:-}"
status=0
"$HPCNN_BIN/hpcnn-summary" --compare "$reference" --junit "$OUT/junit.xml" "${summary_args[@]}" "$OUT" > "$OUT/verdict.txt" || status=$?
cat "$OUT/verdict.txt"
if [ "$status" = 2 ]; then exit 2; fi
if [ "$status" != 0 ] || [ "$steps_failed" -gt 0 ]; then
  echo "acceptance $SET on $SYSTEM: FAILED ($steps_failed step(s) failed; verdicts: $OUT/verdict.txt, $OUT/junit.xml)"
  exit 1
fi
echo "acceptance $SET on $SYSTEM: passed ($OUT/verdict.txt, $OUT/junit.xml)"
