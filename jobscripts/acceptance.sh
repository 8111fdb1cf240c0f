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
#   sbatch --nodes=8 jobscripts/acceptance.sh nightly mycluster   a whole allocation (below)
#
# On several nodes (a Slurm allocation of N > 1 nodes, or a HOSTFILE of N > 1 hosts with mpirun) the
# night measures every node and every link: the one-node steps (training, inference, SGEMM, noise)
# run on every node at once, one rank per node (in waves of ACCEPT_NODE_WAVE nodes where hosts share
# cores); the link test (hpcnn-allreduce --links) measures every pair of nodes in N-1 rounds, the
# nodes' places in the schedule drawn anew each round of the set (--randomize, the seed from the
# date and the round), so a pair's best figure is taken beside different pairs; the
# allreduce and hpcnn-scale steps run across all N nodes, one rank per node. Besides the verdict
# against the reference, hpcnn-summary --population judges the night against itself (each node
# against the median node, each pair against the median pair) into population.txt: a node or link
# it names fails the night, with or without a reference; a node it would name on a one-node point
# first runs that step once more, and a link it names between two nodes is measured again on those
# two alone (second_look.txt), the figure the best of its rounds. A node that does not answer, at the start
# of the night or after a step over it failed (down, its daemon or network gone), is named in one
# line (and in nodes_lost.txt) and left out of the rest of the night; the steps it broke run again
# on the nodes left, whose results are judged as usual, and the night fails. Under Slurm the job
# runs with --no-kill, so that a node's failure does not end it.
#
# Environment (all optional):
#   OUT            the run's folder (default results/acceptance/<SYSTEM>/<SET>/<UTC date-time>)
#   REFERENCE_DIR  the reference root (default: results/reference of this checkout)
#   ACCEPT_ITERS, ACCEPT_WARMUP   timed and warm-up iterations of every point (per-set defaults)
#   ACCEPT_MIN_TIME  seconds every point is timed for at least in each round (--min-time; per-set defaults)
#   ACCEPT_ROUNDS  times the set is run, one round after the other (default 5): a point's figure is
#                  the best of its rounds, so that interference that comes and goes is not a change
#   ACCEPT_RANKS   ranks of the hpcnn-allreduce and hpcnn-scale steps on one node (default 2)
#   ACCEPT_NODE_WAVE  nodes measured at once by the one-node steps (default: all): a test cluster
#                  whose hosts share cores sets cores / THREADS
#   ACCEPT_LINK_SIZES  message sizes of the link test (default 8,4M: latency and a gradient bucket)
#   ACCEPT_LINK_ROUNDS rounds of the link test (default 0: all N-1; a sample of K rounds, spread
#                  evenly, sees every node but only the pairs of its rounds, other pairs each night)
#   ACCEPT_POPULATION_THRESHOLD  a node or pair below (1 - this) of the median is named (default 10%)
#   ACCEPT_PROBE_TIMEOUT  seconds a node has to run a one-rank step before it counts as lost (default 60)
#   ACCEPT_DATA    real-data set of the short training run (default fashion-mnist; none: skipped)
#   ACCEPT_DATA_LIMIT  training and test images of that run (per-set defaults)
#   ACCEPT_SUMMARY_ARGS  more hpcnn-summary options, e.g. "--tolerance-floor 10%"
#   ACCEPT_MIN_RUNS  runs the reference must hold of every point (default 3)
#   BLESS_RUNS     runs blessed together (default 10, at least ACCEPT_MIN_RUNS)
#   THREADS, HPCNN_BIN, HPCNN_LAUNCH, HOSTFILE: as for every job script (jobscripts/common.sh)
#SBATCH --job-name=hpcnn-acceptance
#SBATCH --nodes=1
#SBATCH --no-kill
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

# The nodes of the night: the allocation's, or HOSTFILE's hosts (one line per host, "host [slots=N]"
# or Hydra's "host:N"), else this machine alone.
nodes=()
if [ -n "${SLURM_JOB_ID:-}" ]; then
  mapfile -t nodes < <(scontrol show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null)
elif [ -n "${HOSTFILE:-}" ]; then
  [ -r "$HOSTFILE" ] || { echo "${0##*/}: HOSTFILE '$HOSTFILE' cannot be read" >&2; exit 2; }
  mapfile -t nodes < <(sed -e 's/#.*//' -e 's/[: ].*//' "$HOSTFILE" | grep -v '^$')
  dup=$(printf '%s\n' "${nodes[@]}" | sort | uniq -d | head -n 1)
  [ -z "$dup" ] || { echo "${0##*/}: HOSTFILE '$HOSTFILE' names host '$dup' twice: one line per node" >&2; exit 2; }
fi
[ ${#nodes[@]} -ge 1 ] || nodes=("$(hostname -s)")
NODES=${#nodes[@]}
WAVE=${ACCEPT_NODE_WAVE:-$NODES}
LINK_SIZES=${ACCEPT_LINK_SIZES:-8,4M}
LINK_ROUNDS=${ACCEPT_LINK_ROUNDS:-0}
POPULATION_THRESHOLD=${ACCEPT_POPULATION_THRESHOLD:-10%}
[[ "$WAVE" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: ACCEPT_NODE_WAVE '$WAVE' is not a count" >&2; exit 2; }
[[ "$LINK_ROUNDS" =~ ^[0-9]+$ ]] || { echo "${0##*/}: ACCEPT_LINK_ROUNDS '$LINK_ROUNDS' is not a count" >&2; exit 2; }
PROBE_TIMEOUT=${ACCEPT_PROBE_TIMEOUT:-60}
[[ "$PROBE_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: ACCEPT_PROBE_TIMEOUT '$PROBE_TIMEOUT' is not a number of seconds" >&2; exit 2; }
[ "$NODES" -gt 1 ] || echo "(one node: the cross-node steps, the link test and the population verdict are skipped)"

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
# The points' common options and the run's session stay set for second_look.
run_set() {
  local dir=$1 round kind
  common=(--iters "$iters" --warmup "$warmup" --min-time "$min_time" --output "$dir" --quiet)
  steps_failed=0
  mkdir -p "$dir" || { echo "${0##*/}: cannot create $dir" >&2; exit 1; }
  export HPCNN_SESSION
  HPCNN_SESSION="$SYSTEM/$SET/$(basename "$(cd "$dir" && pwd)")-$(date -u +%Y%m%dT%H%M%SZ)-$$"
  session=$HPCNN_SESSION
  [ "$NODES" = 1 ] || leave_out_silent "before the night" "${nodes[@]}" || true
  for round in $(seq "$rounds"); do
    if [ "$NODES" -gt 1 ]; then
      # Every pair of nodes in N-1 rounds, then the allreduce across all nodes, one rank per node.
      step_ok across_nodes "$HPCNN_BIN/hpcnn-allreduce" --links --sizes "$LINK_SIZES" --rounds "$LINK_ROUNDS" \
        --randomize --seed "$(date -u +%Y%m%d)$round" "${common[@]}"
      step_ok across_nodes "$HPCNN_BIN/hpcnn-allreduce" --exchange mpi,ring --sizes "$sizes" "${common[@]}"
    else
      # Allreduce: the job's schemes and sizes, the correctness check in every point (wrong = 0).
      step_ok run_on 1 "$RANKS" "$HPCNN_BIN/hpcnn-allreduce" --exchange mpi,ring --sizes "$sizes" "${common[@]}"
    fi
    for kind in "${one_node_kinds[@]}"; do one_node_cmd "$kind" && on_every_node "${cmd[@]}"; done
    # Data-parallel training: ring allreduce over the ranks (over the nodes, one rank per node).
    if [ "$NODES" -gt 1 ]; then
      step_ok across_nodes "$HPCNN_BIN/hpcnn-scale" --model lenet5 --batch "$batch" --exchange ring "${common[@]}"
    else
      step_ok run_on 1 "$RANKS" "$HPCNN_BIN/hpcnn-scale" --model lenet5 --batch "$batch" --exchange ring "${common[@]}"
    fi
  done
  # A short real-data run: accuracy and throughput (skipped where the data set is not installed).
  if [ "$DATA" != none ] && [ -e "/usr/share/datasets/$DATA" ]; then
    step_ok run "$HPCNN_BIN/hpcnn-train" --data "$DATA" --model lenet5 --image-size 32 --batch 32 --lr 0.02 --momentum 0.9 \
      --epochs 1 --train-limit "$limit" --test-limit "$limit" --threads "$THREADS" --output "$dir" --quiet
  else
    echo "(real-data run skipped: /usr/share/datasets/$DATA not installed)"
  fi
  unset HPCNN_SESSION
  echo "steps failed: $steps_failed" > "$dir/steps.txt"
}
# The one-node steps, in the order a round runs them: training and inference throughput on
# synthetic data, SGEMM of the default libraries, and the node's operating-system noise (a fixed
# work quantum timed on every thread, FWQ). one_node_cmd KIND sets `cmd` to the step's command.
one_node_kinds=(train infer gemm noise)
one_node_cmd() {
  case $1 in
    train) cmd=("$HPCNN_BIN/hpcnn-train" --model "$model" --batch "$batch") ;;
    infer) cmd=("$HPCNN_BIN/hpcnn-infer" --model "$model" --batch "$batch") ;;
    gemm) cmd=("$HPCNN_BIN/hpcnn-blas" --sweep gemm --sizes "$gemm") ;;
    noise) cmd=("$HPCNN_BIN/hpcnn-blas" --sweep noise) ;;
    *) return 1 ;;
  esac
  cmd+=(--threads "$THREADS" "${common[@]}")
}
# The kind of one-node step a point of the population's lines comes from ("hpcnn-blas gemm ...").
step_kind() {
  case "$1 $2" in
    "hpcnn-train "*) echo train ;;
    "hpcnn-infer "*) echo infer ;;
    "hpcnn-blas gemm") echo gemm ;;
    "hpcnn-blas noise") echo noise ;;
  esac
}
# second_look [REFERENCE]: every node that the population verdict would name on a one-node point
# (below the threshold against tonight's median node or its reference) runs that step once more,
# in a wave of as many nodes as the night's waves (its other nodes the first ones not named), into
# the night's folder and session, and its figure is the best of its rounds, as every point's is.
# A figure that disturbed rounds held below the threshold is taken back; a slow node is slow
# again (docs/ACCEPTANCE.md, "A whole cluster", has how often each happens on the test cluster).
# The waves are listed in second_look.txt.
second_look() {
  [ "$NODES" -gt 1 ] || return 0
  local against=() text kind n size first named others wave_nodes
  [ -z "${1:-}" ] || against=(--compare "$1")
  text=$("$HPCNN_BIN/hpcnn-summary" --population --population-threshold "$POPULATION_THRESHOLD" "${against[@]}" "$OUT" 2>/dev/null)
  size=$((WAVE < NODES ? WAVE : NODES))
  export HPCNN_SESSION=$session
  for kind in "${one_node_kinds[@]}"; do
    # The nodes this kind's points name, in the order of the lines.
    named=()
    while read -r n suite sweep; do
      [ "$(step_kind "$suite" "$sweep")" = "$kind" ] && is_live "$n" && [[ " ${named[*]} " != *" $n "* ]] && named+=("$n")
    done < <(awk '$1 == "population:" && $2 != "link" && $3 ~ /^hpcnn-/ && $NF ~ /REGRESSION$/ { sub(/:$/, "", $2); print $2, $3, $4 }' <<<"$text")
    [ ${#named[@]} -gt 0 ] || continue
    others=()
    for n in "${nodes[@]}"; do [[ " ${named[*]} " == *" $n "* ]] || others+=("$n"); done
    one_node_cmd "$kind"
    for ((first = 0; first < ${#named[@]}; first += size)); do
      wave_nodes=("${named[@]:first:size}")
      wave_nodes+=("${others[@]:0:size - ${#wave_nodes[@]}}")
      echo "second look: $kind on ${wave_nodes[*]} (named: ${named[*]:first:size})" | tee -a "$OUT/second_look.txt"
      step_ok on_wave "${wave_nodes[@]}" -- "${cmd[@]}"
    done
  done
  second_look_pairs "$text" --population-threshold "$POPULATION_THRESHOLD" "${against[@]}"
  unset HPCNN_SESSION
}
# second_look_pairs TEXT [ARGS]: every link between two nodes that TEXT (the population verdict)
# names is measured again on its two nodes alone, at the night's link sizes; the pair's figure is
# the best of its rounds (hpcnn-summary folds the two-node test into the night's). A pair slowed by
# the pairs measured beside it is taken back; a bad cable is slow again. A pair taken back narrows
# the pairs' spread, which can put another pair beyond it: the verdict (hpcnn-summary
# --population ARGS) is asked again and each newly named pair looked at, up to three times. The
# links of a node named for all its links are not measured again: that node is named.
second_look_pairs() {
  local text=$1 pair a b n wave pass looked=" "
  shift
  for pass in 1 2 3; do
    local measured=0
    while read -r pair; do
      [[ "$looked" == *" $pair "* ]] && continue
      looked+="$pair "
      a="" b=""
      # Host names may hold '-': the pair is the split whose two halves are both the night's nodes.
      for n in "${nodes[@]}"; do
        [[ "$pair" == "$n-"* ]] && is_live "${pair#"$n-"}" && { a=$n; b=${pair#"$n-"}; break; }
      done
      [ -n "$a" ] || continue
      wave=("$a" "$b")
      echo "second look: links on $a $b" | tee -a "$OUT/second_look.txt"
      step_ok wave_step "$HPCNN_BIN/hpcnn-allreduce" --links --sizes "$LINK_SIZES" "${common[@]}"
      measured=$((measured + 1))
    done < <(awk '$1 == "population:" && $2 == "link" && $NF ~ /REGRESSION$/ { sub(/:$/, "", $3); print $3 }' <<<"$text" | sort -u)
    [ "$measured" -gt 0 ] && [ "$pass" -lt 3 ] || break
    text=$("$HPCNN_BIN/hpcnn-summary" --population "$@" "$OUT" 2>/dev/null)
  done
}
step_ok() { "$@" || { echo "${0##*/}: step failed: $*" >&2; steps_failed=$((steps_failed + 1)); }; }
# on_every_node CMD...: a one-node step on every node at once, one rank per node whose threads may
# use the whole node (hpcnn-summary --population reads each rank's own iterations), in waves of
# ACCEPT_NODE_WAVE nodes; on one node, the step as it is.
on_every_node() {
  if [ "$NODES" = 1 ]; then step_ok run "$@"; return; fi
  local first all=("${nodes[@]}")
  for ((first = 0; first < ${#all[@]}; first += WAVE)); do step_ok on_wave "${all[@]:first:WAVE}" -- "$@"; done
}
# on_wave NODE... -- CMD...: the one-node step on those nodes at once, one rank per node; when it
# fails, the nodes that do not answer are left out and it runs again on the others.
on_wave() {
  local wave=() left=() n
  while [ "$1" != -- ]; do wave+=("$1"); shift; done
  shift
  wave_step "$@" && return 0
  leave_out_silent "after a step on ${wave[*]}" "${wave[@]}" || return 1
  for n in "${wave[@]}"; do is_live "$n" && left+=("$n"); done
  wave=("${left[@]}")
  [ ${#wave[@]} -gt 0 ] || return 0
  wave_step "$@"
}
wave_step() { STEP_NODELIST=$(IFS=,; echo "${wave[*]}") STEP_WHOLE_NODE=1 run_on "${#wave[@]}" "${#wave[@]}" "$@"; }
# across_nodes CMD...: a step across all the night's nodes, one rank per node; when it fails, the
# nodes that do not answer are left out and it runs again across the others (with one node left,
# not at all).
across_nodes() {
  across_step "$@" && return 0
  leave_out_silent "after a step across the nodes" "${nodes[@]}" || return 1
  [ "$NODES" -gt 1 ] || { echo "(one node left: the step across the nodes is skipped)"; return 0; }
  across_step "$@"
}
across_step() {
  if [ -s "$OUT/nodes_lost.txt" ]; then STEP_NODELIST=$(IFS=,; echo "${nodes[*]}") run_on "$NODES" "$NODES" "$@"
  else run_on "$NODES" "$NODES" "$@"; fi
}
is_live() { local n; for n in "${nodes[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }
# answers NODE: a one-rank step on NODE alone ends within PROBE_TIMEOUT seconds.
answers() {
  local cmd hostfile="" kind status=0
  if [ -n "${SLURM_JOB_ID:-}" ]; then
    cmd=(srun -N 1 -n 1 -w "$1" true)
  else
    cmd=("${launch_words[@]}")
    [ ${#cmd[@]} -gt 0 ] || cmd=("${HPCNN_MPIRUN:-mpirun}")
    kind=$(mpi_launcher_kind "${cmd[0]}")
    hostfile=$(mktemp "${TMPDIR:-/tmp}/hpcnn-probe.XXXXXX")
    mpi_hostfile_line "$kind" "$1" 1 > "$hostfile"
    cmd+=(-np 1)
    mapfile -t -O ${#cmd[@]} cmd < <(mpi_hostfile_opts "$kind" "$hostfile")
    cmd+=(true)
  fi
  timeout --kill-after=5 "$PROBE_TIMEOUT" "${cmd[@]}" > /dev/null 2>&1 || status=$?
  [ -z "$hostfile" ] || rm -f "$hostfile"
  return "$status"
}
# leave_out_silent WHEN NODE...: probes the nodes, 32 at a time; each that does not answer is named
# in one line and in $OUT/nodes_lost.txt, and left out of `nodes` for the rest of the night. 0 when
# one was.
leave_out_silent() {
  local when=$1 silent n k=0 left=()
  shift
  silent=$(mktemp -d "${TMPDIR:-/tmp}/hpcnn-silent.XXXXXX")
  for n in "$@"; do
    (answers "$n" || touch "$silent/$n") &
    k=$((k + 1))
    [ $((k % 32)) != 0 ] || wait
  done
  wait
  for n in "$@"; do
    [ -e "$silent/$n" ] || continue
    echo "${0##*/}: node $n does not answer ($when: no one-rank step within ${PROBE_TIMEOUT} s): left out of the rest of the night; the other nodes are judged" >&2
    echo "$n $when" >> "$OUT/nodes_lost.txt"
    # A step that ran on the lost node may hold its CPUs on the live ones until Slurm hears from
    # it: the night's later steps share them (common.sh, run_on).
    export STEP_OVERLAP=1
  done
  for n in "${nodes[@]}"; do [ -e "$silent/$n" ] || left+=("$n"); done
  rm -rf "$silent"
  [ ${#left[@]} != "$NODES" ] || return 1
  nodes=("${left[@]}")
  NODES=${#nodes[@]}
  return 0
}
# The nodes lost so far, comma-separated (empty: none).
lost_nodes() { [ -s "$OUT/nodes_lost.txt" ] && cut -d' ' -f1 "$OUT/nodes_lost.txt" | sort -u | paste -sd, -; }
# judge_population [REFERENCE]: the night against itself (nodes against the median node, pairs
# against the median pair) and against the reference's nodes and pairs, into $OUT/population.txt,
# population-junit.xml and population.html (the node map and link matrices); 1 when a node or link
# is named.
judge_population() {
  [ "$NODES" -gt 1 ] || return 0
  local status=0 against=()
  [ -z "${1:-}" ] || against=(--compare "$1")
  "$HPCNN_BIN/hpcnn-summary" --population --population-threshold "$POPULATION_THRESHOLD" "${against[@]}" \
    --junit "$OUT/population-junit.xml" --html "$OUT/population.html" "$OUT" > "$OUT/population.txt" || status=$?
  cat "$OUT/population.txt"
  return "$status"
}

if [ -n "${BLESS:-}" ] && [ "$BLESS" != 0 ]; then
  # Several runs: the reference's run-to-run spread is what tells a change from noise.
  echo "acceptance set $SET on $SYSTEM: $BLESS_RUNS runs into $OUT/run-K, to be blessed into $reference"
  runs=()
  for k in $(seq "$BLESS_RUNS"); do
    run_set "$OUT/run-$k"
    if [ "$steps_failed" -gt 0 ] || [ -n "$(lost_nodes)" ]; then
      echo "${0##*/}: BLESS: run $k: $steps_failed step(s) failed, nodes lost: $(lost_nodes || echo none): nothing is blessed" >&2
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
  second_look
  judge_population  # a first night on a new cluster still names the node or link that is off
  [ -z "$(lost_nodes)" ] || echo "acceptance $SET on $SYSTEM: nodes lost during the night: $(lost_nodes) ($OUT/nodes_lost.txt)"
  exit 1
fi
# Before the night's work: a reference with too few runs, or of several builds or machines, or
# whose runs hold different points, cannot judge it (one line, exit 2).
if ! check=$("$HPCNN_BIN/hpcnn-summary" --stability --min-runs "$MIN_RUNS" "$reference" 2>&1 >/dev/null); then
  echo "${0##*/}: ${check#hpcnn-summary: error: }" >&2
  exit 2
fi
run_set "$OUT"
second_look "$reference"
status=0
"$HPCNN_BIN/hpcnn-summary" --compare "$reference" --min-runs "$MIN_RUNS" --junit "$OUT/junit.xml" \
  --html "$OUT/report.html" "${summary_args[@]}" "$OUT" > "$OUT/verdict.txt" || status=$?
cat "$OUT/verdict.txt"
if [ "$status" = 2 ]; then echo "${0##*/}: the reference $reference cannot be used (above): bless it again" >&2; exit 2; fi
population=0
judge_population "$reference" || population=$?
if [ "$status" != 0 ] || [ "$steps_failed" -gt 0 ] || [ "$population" != 0 ] || [ -n "$(lost_nodes)" ]; then
  named=""
  [ "$population" = 0 ] || named=", nodes or links named: $OUT/population.txt"
  [ -z "$(lost_nodes)" ] || named="$named, nodes lost: $(lost_nodes) ($OUT/nodes_lost.txt)"
  echo "acceptance $SET on $SYSTEM: FAILED ($steps_failed step(s) failed; verdicts: $OUT/verdict.txt, $OUT/junit.xml, $OUT/report.html$named)"
  exit 1
fi
echo "acceptance $SET on $SYSTEM: passed ($OUT/verdict.txt, $OUT/junit.xml, $OUT/report.html)"
