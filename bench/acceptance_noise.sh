#!/usr/bin/env bash
# How often an acceptance set fails on an unchanged system, and how often it catches a slowdown
# (docs/ACCEPTANCE.md, "False alarms and detection"). Blesses a reference of BLESS_RUNS runs on
# this machine, then runs NIGHTS nights of each kind, the kinds interleaved night by night so that
# a drift of the machine reaches them all alike. The slowdowns come from outside the processes, as
# nodes really get slow (bench/slow_node.sh, which says how each works):
#   unchanged   the same build, nothing injected
#   quotaP      a CPU share of P percent taken away in short slices (a CFS quota of (100-P)% of the
#               CPUs, 20 ms periods: a cgroup limit, a co-scheduled container)
#   slicesP     the same share taken by stopping the night's processes (SIGSTOP) P% of every 20 ms
#   hogP        a competing process per CPU with a duty cycle (a stray daemon, a co-scheduled job)
#   membwP      a neighbour streaming through memory with a duty cycle (memory bandwidth taken)
#   slowP       SUITE alone stopped P% of every 20 ms (bench/slow_bin.sh: slow_node.sh slices on
#               that executable only), as a slower code path or a library without its fast kernel
# and by placement:
#   onecore     the whole night pinned to one core (taskset -c 0)
# P is any percentage from 1 to 90 (quota25, hog10, slow50, ...). The multi-rank steps of a set share
# this machine's memory, not a network link: a loaded or shaped link is measured in the test
# cluster (tests/cluster, docs/CLUSTER.md), not here.
# Prints, per kind, the nights that failed (acceptance.sh exit 1), the failing verdicts per night,
# the nights that would fail under cron (jobscripts/acceptance_cron.sh: a REGRESSION of the same
# point two nights of that kind running, or any other failure), the nights with a REGRESSION, those
# whose failures include SUITE's points, and those whose verdicts named the stalls. With REJUDGE_ARGS (hpcnn-summary options), the same
# nights judged again with those settings instead of ACCEPT_SUMMARY_ARGS. Then the
# same for the ReFrame tests' performance references on the same nights' figures: references made
# from the blessed runs with bounds from their noise (reframe/references_from_runs.py), and the
# fixed-band references shipped in reframe/references.json for RFM_SYSTEM (default local:default).
# Last, the run-to-run spread of every point over the unchanged nights (hpcnn-summary --stability).
# Run again with the same OUT on the same machine, it goes on where it stopped: the reference blessed
# there is kept, and the nights that finished are not run again (on another CPU model or CPU count
# it refuses: that reference does not hold there).
#
#   bench/acceptance_noise.sh [SET]          SET: smoke (default) or nightly
# Environment: NIGHTS (default 20), KINDS (default "unchanged quota10 quota25 hog10 hog25 membw10
# membw25"), SUITE (default hpcnn-train), BLESS_RUNS (default 10), OUT (default a new folder under
# /tmp, kept), REJUDGE_ARGS, REBLESS_NIGHTS (below), ACCEPT_*, BLESS_MAX_STALLS and HPCNN_BIN as for
# jobscripts/acceptance.sh.
set -uo pipefail
SET=${1:-smoke}
NIGHTS=${NIGHTS:-20}
KINDS=${KINDS:-unchanged quota10 quota25 hog10 hog25 membw10 membw25}
SUITE=${SUITE:-hpcnn-train}
export BLESS_RUNS=${BLESS_RUNS:-10}
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../jobscripts/acceptance.sh
export HPCNN_BIN=${HPCNN_BIN:-$here/..}
OUT=${OUT:-$(mktemp -d /tmp/hpcnn-acceptance-noise.XXXXXX)}
mkdir -p "$OUT" || exit 1
export REFERENCE_DIR=$OUT/reference
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v taskset >/dev/null || { echo "${0##*/}: needs taskset (util-linux)" >&2; exit 1; }
# Every external kind must be possible here before anything runs (slow_node.sh exits 3 otherwise).
for kind in $KINDS; do
  if [[ "$kind" =~ ^(quota|slices|hog|membw)([0-9]+)$ ]]; then
    SLOW_NODE_QUIET=1 "$here/slow_node.sh" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" true ||
      { echo "${0##*/}: kind $kind cannot be set up on this machine (above)" >&2; exit 1; }
  fi
done
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)"
if [ -e "$OUT/machine" ] && [ "$(cat "$OUT/machine")" != "$machine" ]; then
  echo "${0##*/}: $OUT was begun on '$(cat "$OUT/machine")', this machine is '$machine': its reference does not hold here (give a new OUT)" >&2
  exit 1
fi
echo "$machine" > "$OUT/machine"
echo "# acceptance noise: set $SET, $NIGHTS nights of each of: $KINDS; reference of $BLESS_RUNS runs; results in $OUT"
echo "# machine: $machine"

start=$(date +%s)
if [ -e "$OUT/blessed" ]; then
  echo "# going on in $OUT: its reference and finished nights are kept"
elif ! env BLESS=1 OUT="$OUT/bless" "$script" "$SET" noise > "$OUT/bless.log" 2>&1; then
  echo "${0##*/}: blessing failed ($OUT/bless.log):" >&2
  tail -20 "$OUT/bless.log" >&2
  exit 1
else
  touch "$OUT/blessed"
fi
grep -E '^(unstable|stability):' "$OUT/bless.log"
echo "# blessed in $(($(date +%s) - start)) s"
# ReFrame references with bounds from the blessed runs' noise (the smoke size's points).
rfm_measured=$OUT/reframe-references.json
if [ "$SET" = smoke ]; then
  python3 "$here/../reframe/references_from_runs.py" --system noise:default --size smoke \
    --hpcnn-summary "$HPCNN_BIN/hpcnn-summary" --out "$rfm_measured" "$OUT"/bless/run-* > "$OUT/reframe-references.log" 2>&1 ||
    { echo "# ReFrame references from the runs failed:"; cat "$OUT/reframe-references.log"; rfm_measured=""; }
else
  rfm_measured=""
fi

# night KIND N: one night of that kind into $OUT/KIND/N; its exit status and verdicts are kept.
night() {
  local kind=$1 n=$2 dir=$OUT/$1/$2
  local prefix=() env=()
  if [[ "$kind" =~ ^(quota|slices|hog|membw)([0-9]+)$ ]]; then
    prefix=(env SLOW_NODE_QUIET=1 "$here/slow_node.sh" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}")
  elif [[ "$kind" =~ ^slow([0-9]+)$ ]]; then
    "$here/slow_bin.sh" "$OUT/$kind-bin" "$SUITE" slices "${BASH_REMATCH[1]}" || exit 2
    env=(HPCNN_BIN="$OUT/$kind-bin")
  else
    case "$kind" in
      unchanged) ;;
      onecore) prefix=(taskset -c 0) ;;
      *) echo "${0##*/}: unknown kind '$kind'" >&2; exit 2 ;;
    esac
  fi
  [ -e "$dir.status" ] && return   # finished before an interruption
  mkdir -p "$OUT/$kind"
  rm -rf "$dir"
  env "${env[@]}" OUT="$dir" "${prefix[@]}" "$script" "$SET" noise > "$dir.log" 2>&1
  echo $? > "$dir.status"
}

start=$(date +%s)
for n in $(seq "$NIGHTS"); do
  for kind in $KINDS; do night "$kind" "$n"; done
done
elapsed=$(($(date +%s) - start))

# table SUFFIX [FIRST]: the nights' table from their verdict files $OUT/KIND/N/verdictSUFFIX.txt,
# nights FIRST (default 1) to NIGHTS.
table() {
  local suffix=$1 first=${2:-1} kind n failed failures hit cron f file previous regressions regressed stalls
  local nights
  printf '%-10s %6s %7s %9s %16s %10s %12s %18s %14s\n' kind nights failed fraction "failures/night" "cron fails" \
    "REGRESSION" "nights SUITE hit" "stalls named"
  for kind in $KINDS; do
    failed=0 failures=0 hit=0 cron=0 previous="" regressed=0 stalls=0 nights=0
    for n in $(seq "$first" "$NIGHTS"); do
      file=$OUT/$kind/$n/verdict$suffix.txt
      # A round not judged against nights (too few clean nights before it) is not counted there.
      [ -z "$suffix" ] || [ -e "$file" ] || continue
      nights=$((nights + 1))
      f=$(grep -c '^failure:' "$file" 2>/dev/null)
      if [ -z "$suffix" ]; then [ "$(cat "$OUT/$kind/$n.status")" = 0 ] || failed=$((failed + 1))
      else [ "${f:-0}" = 0 ] || failed=$((failed + 1)); fi
      failures=$((failures + ${f:-0}))
      grep -q "^failure: REGRESSION: suite=$SUITE " "$file" 2>/dev/null && hit=$((hit + 1))
      grep -q "^failure: REGRESSION: " "$file" 2>/dev/null && regressed=$((regressed + 1))
      grep -q "^failure: REGRESSION: .*stalls took" "$file" 2>/dev/null && stalls=$((stalls + 1))
      # Under cron: any failure but a REGRESSION fails at once; a REGRESSION when last night had it too.
      regressions=$(sed -n 's/^failure: REGRESSION: \(.*\) reference .*/\1/p' "$file" 2>/dev/null | sort)
      if grep -q '^failure:' "$file" 2>/dev/null && grep -v '^failure: REGRESSION:' "$file" | grep -q '^failure:'; then
        cron=$((cron + 1))
      elif [ -n "$regressions" ] && [ -n "$(comm -12 <(echo "$previous") <(echo "$regressions"))" ]; then
        cron=$((cron + 1))
      fi
      previous=$regressions
    done
    [ "$nights" -gt 0 ] || continue
    printf '%-10s %6d %7d %9.2f %16.2f %10d %12d %18s %14d\n' "$kind" "$nights" "$failed" "$(echo "$failed / $nights" | bc -l)" \
      "$(echo "$failures / $nights" | bc -l)" "$cron" "$regressed" "$([ "$kind" = unchanged ] && echo - || echo "$hit")" "$stalls"
  done
}
echo; echo "# verdicts as acceptance.sh gave them (ACCEPT_SUMMARY_ARGS: ${ACCEPT_SUMMARY_ARGS:-none})"
table ""
echo "# $((NIGHTS * $(wc -w <<<"$KINDS"))) nights; the ones this invocation ran took $elapsed s"
if [ -n "${REJUDGE_ARGS:-}" ]; then
  read -ra rejudge <<<"$REJUDGE_ARGS"
  for kind in $KINDS; do
    for n in $(seq "$NIGHTS"); do
      "$HPCNN_BIN/hpcnn-summary" --compare "$REFERENCE_DIR/noise/$SET" "${rejudge[@]}" "$OUT/$kind/$n" \
        > "$OUT/$kind/$n/verdict-rejudged.txt" 2>&1
    done
  done
  echo; echo "# the same nights judged with: $REJUDGE_ARGS"
  table -rejudged
fi

# With REBLESS_NIGHTS=K: nights K+1..NIGHTS of every kind judged again as acceptance_cron.sh judges
# them by default (REFERENCE_NIGHTS=K): each round's nights against a reference blessed from the
# last K clean unchanged nights before it (each night a run of its own, the other kinds' nights
# between them: docs/ACCEPTANCE.md, "Runs from separate nights"). A clean night is an unchanged
# night with no failing verdict against its own reference (the back-to-back one until K clean
# nights exist); a night bless.sh refuses (its stalls, say) is left out and an older one taken, as
# cron does.
if [ -n "${REBLESS_NIGHTS:-}" ]; then
  [[ "$REBLESS_NIGHTS" =~ ^[0-9]+$ ]] && [ "$REBLESS_NIGHTS" -ge 3 ] && [ "$REBLESS_NIGHTS" -lt "$NIGHTS" ] ||
    { echo "${0##*/}: REBLESS_NIGHTS '$REBLESS_NIGHTS' is not a count from 3 to NIGHTS - 1" >&2; exit 2; }
  read -ra summary_args <<<"${ACCEPT_SUMMARY_ARGS:-}"
  # passed_blessed N: unchanged night N passed against the blessed runs (acceptance.sh's exit 0).
  passed_blessed() { [ "$(cat "$OUT/unchanged/$1.status" 2>/dev/null)" = 0 ]; }
  clean=()
  for n in $(seq "$REBLESS_NIGHTS"); do
    passed_blessed "$n" && clean+=("$OUT/unchanged/$n")
  done
  judged_from="" nights_ref=$OUT/reference-nights
  # shellcheck source=jobscripts/bless_newest.sh
  source "$here/../jobscripts/bless_newest.sh"
  mkdir -p "$nights_ref" || exit 1
  for n in $(seq $((REBLESS_NIGHTS + 1)) "$NIGHTS"); do
    for kind in $KINDS; do rm -f "$OUT/$kind/$n/verdict-nights.txt"; done
    mapfile -t newest_first < <(printf '%s\n' "${clean[@]}" | tac)
    BLESS_MIN_RUNS=$REBLESS_NIGHTS bless_newest "$REBLESS_NIGHTS" "$nights_ref" noise "$SET" "$nights_ref.log" \
      "${newest_first[@]}" > /dev/null
    case $? in
      1) # Too few clean nights yet: this round stays judged against the blessed runs, as cron's would.
         passed_blessed "$n" && clean+=("$OUT/unchanged/$n")
         continue ;;
      2) echo "# the nights before night $n could not be blessed ($nights_ref.log):"; tail -3 "$nights_ref.log"; break ;;
    esac
    # A night bless.sh refused is no clean night for the rounds after it either.
    [ ! -s "$nights_ref.log.refused" ] || mapfile -t clean < <(printf '%s\n' "${clean[@]}" | grep -Fxv -f <(bless_refused "$nights_ref.log.refused"))
    judged_from=${judged_from:-$n}
    for kind in $KINDS; do
      "$HPCNN_BIN/hpcnn-summary" --compare "$nights_ref/noise/$SET" "${summary_args[@]}" "$OUT/$kind/$n" \
        > "$OUT/$kind/$n/verdict-nights.txt" 2>&1
      judged=$?
      [ "$kind" != unchanged ] || [ "$judged" != 0 ] || [ "$(cat "$OUT/unchanged/$n.status")" = 2 ] ||
        clean+=("$OUT/unchanged/$n")
    done
  done
  if [ -n "$judged_from" ]; then
    echo; echo "# nights $judged_from-$NIGHTS judged against the last $REBLESS_NIGHTS clean unchanged nights before each"
    table -nights "$judged_from"
    grep -E '^(unstable|stability):' "$nights_ref.log"
  fi
fi

# The ReFrame tests' references on the same nights: measured bounds, and the shipped fixed ones.
rfm_table() {  # rfm_table LABEL REFERENCES SYSTEM
  local label=$1 refs=$2 system=$3
  printf '\n# ReFrame references: %s\n%-10s %6s %7s %9s\n' "$label" kind nights failed fraction
  for kind in $KINDS; do
    local failed=0
    for n in $(seq "$NIGHTS"); do
      python3 "$here/reframe_bounds.py" --references "$refs" --system "$system" "$OUT/$kind/$n" > "$OUT/$kind/$n.rfm" 2>&1
      grep -q '^0 violated' "$OUT/$kind/$n.rfm" || failed=$((failed + 1))
    done
    printf '%-10s %6d %7d %9.2f\n' "$kind" "$NIGHTS" "$failed" "$(echo "$failed / $NIGHTS" | bc -l)"
  done
}
if [ "$SET" = smoke ]; then
  [ -z "$rfm_measured" ] || rfm_table "bounds from the blessed runs' noise ($rfm_measured)" "$rfm_measured" noise:default
  RFM_SYSTEM=${RFM_SYSTEM:-local:default}
  rfm_table "shipped reframe/references.json, $RFM_SYSTEM" "$here/../reframe/references.json" "$RFM_SYSTEM"
fi
# Which points failed on unchanged nights, and how often.
if [[ " $KINDS " == *" unchanged "* ]]; then
  echo; echo "# failing verdicts on unchanged nights:"
  cat "$OUT"/unchanged/*/verdict.txt 2>/dev/null | sed -n 's/^failure: \([A-Z-]*\): \(.*\) reference .*/\1 \2/p' | sort | uniq -c | sort -rn
  echo; echo "# run-to-run spread over the unchanged nights:"
  "$HPCNN_BIN/hpcnn-summary" --stability "$OUT"/unchanged/*/ | grep -v '^unstable:'
fi
