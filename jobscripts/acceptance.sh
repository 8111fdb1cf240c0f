#!/usr/bin/env bash
# Acceptance test of a system (docs/ACCEPTANCE.md): runs one named set of points into a dated
# folder, compares it with the system's reference results/reference/<SYSTEM>/<SET>/ (hpcnn-summary
# --compare: a verdict per point and metric, tested against the reference's run-to-run spread,
# --junit, and a page to open in a browser, report.html: --html) and exits 0 when every verdict passes, 1 otherwise (a regression, a failed/wrong/
# diverged point, a point missing on either side, a step that failed, no reference), 2 on bad usage
# or an unusable reference (fewer runs than ACCEPT_MIN_RUNS, runs of several builds or machines).
#
#   jobscripts/acceptance.sh SET [SYSTEM]      SET: smoke | nightly | full; SYSTEM: default
#                                              $HPCNN_SYSTEM, else the short host name
#   BLESS=1 jobscripts/acceptance.sh SET       runs the set BLESS_RUNS times; when every step of
#                                              every run succeeded and its points are clean, the
#                                              runs become the reference (jobscripts/bless.sh,
#                                              which also reports how steady each point is)
#   sbatch --nodes=1 jobscripts/acceptance.sh nightly
#
# Environment (all optional):
#   OUT            the run's folder (default results/acceptance/<SYSTEM>/<SET>/<UTC date-time>)
#   REFERENCE_DIR  the reference root (default: results/reference of this checkout)
#   ACCEPT_ITERS, ACCEPT_WARMUP   timed and warm-up iterations of every point (per-set defaults)
#   ACCEPT_MIN_TIME  seconds every point is timed for at least in each round (--min-time; per-set defaults)
#   ACCEPT_ROUNDS  times the set is run, one round after the other (default 5): a point's figure is
#                  the best of its rounds, so that interference that comes and goes is not a change
#   ACCEPT_RANKS   ranks of the hpcnn-allreduce and hpcnn-scale steps (default 2)
#   ACCEPT_DATA    real-data set of the short training run (default fashion-mnist; none: skipped)
#   ACCEPT_DATA_LIMIT  training and test images of that run (per-set defaults)
#   ACCEPT_SUMMARY_ARGS  more hpcnn-summary options, e.g. "--tolerance-floor 10%"
#   ACCEPT_MIN_RUNS  runs the reference must hold of every point (default 3)
#   BLESS_RUNS     runs blessed together (default 10, at least ACCEPT_MIN_RUNS)
#   THREADS, HPCNN_BIN, HPCNN_LAUNCH, HOSTFILE: as for every job script (jobscripts/common.sh)
#SBATCH --job-name=hpcnn-acceptance
#SBATCH --nodes=1
set -uo pipefail
usage() { echo "usage: ${0##*/} smoke|nightly|full [SYSTEM]   (BLESS=1 makes BLESS_RUNS runs the reference)" >&2; exit 2; }
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
RANKS=${ACCEPT_RANKS:-2}
DATA=${ACCEPT_DATA:-fashion-mnist}
MIN_RUNS=${ACCEPT_MIN_RUNS:-3}
BLESS_RUNS=${BLESS_RUNS:-10}
for count in MIN_RUNS BLESS_RUNS; do
  [[ "${!count}" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: $count '${!count}' is not a count" >&2; exit 2; }
done
[ "$BLESS_RUNS" -ge "$MIN_RUNS" ] && [ "$MIN_RUNS" -ge 2 ] ||
  { echo "${0##*/}: BLESS_RUNS $BLESS_RUNS, ACCEPT_MIN_RUNS $MIN_RUNS: a reference needs at least 2 runs, and as many as are asked for" >&2; exit 2; }
mkdir -p "$OUT" || { echo "${0##*/}: cannot create $OUT" >&2; exit 1; }

# The set's sizes: smoke takes about a minute on one node, nightly a few minutes, full hours.
# Every point runs --iters iterations and at least --min-time seconds of them, so that a point of
# a fraction of a millisecond is timed over enough calls to be compared night after night; and the
# set runs ACCEPT_ROUNDS times, its points interleaved, each point's figure the best of its rounds.
case "$SET" in
  smoke)   iters=20;  warmup=3;  min_time=0.6;  model=lenet5;   batch=32;  sizes=4K,1M;        gemm=256;      limit=1000 ;;
  nightly) iters=50;  warmup=5;  min_time=3;  model=resnet18; batch=32;  sizes=4K,1M,16M;    gemm=256,1024; limit=10000 ;;
  full)    iters=100; warmup=10; min_time=10; model=resnet50; batch=64;  sizes=4K,64K,1M,16M,64M; gemm=256,1024,2048; limit=60000 ;;
esac
iters=${ACCEPT_ITERS:-$iters}
warmup=${ACCEPT_WARMUP:-$warmup}
min_time=${ACCEPT_MIN_TIME:-$min_time}
limit=${ACCEPT_DATA_LIMIT:-$limit}
rounds=${ACCEPT_ROUNDS:-5}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: ACCEPT_ROUNDS '$rounds' is not a count" >&2; exit 2; }
read -ra summary_args <<<"${ACCEPT_SUMMARY_ARGS:-}"

# run_set DIR: every step of the set into DIR, ACCEPT_ROUNDS times over, also after one failed (the
# verdict names what is missing or wrong). The files of the run share a session (HPCNN_SESSION),
# which makes them one run for hpcnn-summary. Leaves the number of failed steps in steps_failed.
run_set() {
  local dir=$1 round
  local common=(--iters "$iters" --warmup "$warmup" --min-time "$min_time" --output "$dir" --quiet)
  steps_failed=0
  mkdir -p "$dir" || { echo "${0##*/}: cannot create $dir" >&2; exit 1; }
  export HPCNN_SESSION
  HPCNN_SESSION="$SYSTEM/$SET/$(basename "$(cd "$dir" && pwd)")-$(date -u +%Y%m%dT%H%M%SZ)-$$"
  for round in $(seq "$rounds"); do
    # Allreduce: the job's schemes and sizes, the correctness check in every point (wrong = 0).
    step_ok run_on 1 "$RANKS" "$HPCNN_BIN/hpcnn-allreduce" --exchange mpi,ring --sizes "$sizes" "${common[@]}"
    # Training and inference throughput on synthetic data.
    step_ok run "$HPCNN_BIN/hpcnn-train" --model "$model" --batch "$batch" --threads "$THREADS" "${common[@]}"
    step_ok run "$HPCNN_BIN/hpcnn-infer" --model "$model" --batch "$batch" --threads "$THREADS" "${common[@]}"
    # BLAS: SGEMM of the default libraries.
    step_ok run "$HPCNN_BIN/hpcnn-blas" --sweep gemm --sizes "$gemm" --threads "$THREADS" "${common[@]}"
    # The node's operating-system noise: a fixed work quantum timed on every thread (FWQ).
    step_ok run "$HPCNN_BIN/hpcnn-blas" --sweep noise --threads "$THREADS" "${common[@]}"
    # Data-parallel training: ring allreduce over the ranks.
    step_ok run_on 1 "$RANKS" "$HPCNN_BIN/hpcnn-scale" --model lenet5 --batch "$batch" --exchange ring "${common[@]}"
  done
  # A short real-data run: accuracy and throughput (skipped where the data set is not installed).
  if [ "$DATA" != none ] && [ -e "/usr/share/datasets/$DATA" ]; then
    step_ok run "$HPCNN_BIN/hpcnn-train" --data "$DATA" --model lenet5 --image-size 32 --batch 32 --lr 0.02 --momentum 0.9 \
      --epochs 1 --train-limit "$limit" --test-limit "$limit" --threads "$THREADS" --output "$dir" --quiet
  else
    echo "(real-data run skipped: /usr/share/datasets/$DATA not installed)"
  fi
  unset HPCNN_SESSION
}
step_ok() { "$@" || { echo "${0##*/}: step failed: $*" >&2; steps_failed=$((steps_failed + 1)); }; }

if [ -n "${BLESS:-}" ] && [ "$BLESS" != 0 ]; then
  # Several runs: the reference's run-to-run spread is what tells a change from noise.
  echo "acceptance set $SET on $SYSTEM: $BLESS_RUNS runs into $OUT/run-K, to be blessed into $reference"
  runs=()
  for k in $(seq "$BLESS_RUNS"); do
    run_set "$OUT/run-$k"
    if [ "$steps_failed" -gt 0 ]; then
      echo "${0##*/}: BLESS: $steps_failed step(s) of run $k failed: nothing is blessed" >&2
      exit 1
    fi
    runs+=("$OUT/run-$k")
  done
  # bless.sh refuses runs that are not clean (failed points, wrong elements, stalls beyond
  # BLESS_MAX_STALLS) or not one reference (builds, machines, points).
  BLESS_ARGS=${ACCEPT_SUMMARY_ARGS:-} BLESS_MIN_RUNS=$MIN_RUNS REFERENCE_DIR=$REFERENCE_DIR \
    "$jobscripts/bless.sh" "${runs[@]}" "$SYSTEM" "$SET"
  exit $?
fi

echo "acceptance set $SET on $SYSTEM: results in $OUT, reference $reference"
if [ -z "$(find "$reference" -name '*.h5' -print -quit 2>/dev/null)" ]; then
  echo "${0##*/}: no reference in $reference: run once with BLESS=1 on a system known to be good" >&2
  run_set "$OUT"  # still measured: a first night can be blessed by hand (jobscripts/bless.sh)
  exit 1
fi
# Before the night's work: a reference with too few runs, or of several builds or machines, or
# whose runs hold different points, cannot judge it (one line, exit 2).
if ! check=$("$HPCNN_BIN/hpcnn-summary" --stability --min-runs "$MIN_RUNS" "$reference" 2>&1 >/dev/null); then
  echo "${0##*/}: ${check#hpcnn-summary: error: }" >&2
  exit 2
fi
run_set "$OUT"
status=0
"$HPCNN_BIN/hpcnn-summary" --compare "$reference" --min-runs "$MIN_RUNS" --junit "$OUT/junit.xml" \
  --html "$OUT/report.html" "${summary_args[@]}" "$OUT" > "$OUT/verdict.txt" || status=$?
cat "$OUT/verdict.txt"
if [ "$status" = 2 ]; then echo "${0##*/}: the reference $reference cannot be used (above): bless it again" >&2; exit 2; fi
if [ "$status" != 0 ] || [ "$steps_failed" -gt 0 ]; then
  echo "acceptance $SET on $SYSTEM: FAILED ($steps_failed step(s) failed; verdicts: $OUT/verdict.txt, $OUT/junit.xml, $OUT/report.html)"
  exit 1
fi
echo "acceptance $SET on $SYSTEM: passed ($OUT/verdict.txt, $OUT/junit.xml, $OUT/report.html)"
