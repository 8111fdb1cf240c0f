#!/usr/bin/env bash
# Nightly acceptance from cron on machines without Slurm (mpirun; docs/ACCEPTANCE.md, "Nightly
# set-up"): runs jobscripts/acceptance.sh SET SYSTEM into a dated folder of the system's history,
# then hpcnn-summary --trend over every night of that history (each night against the TREND_RUNS
# nights before it; a step that lasts, a slow drift).
#
# One noisy night does not fail; a change that lasts does. The night fails (exit 1) when
#   - tonight has a failure that is not a speed verdict (STATUS: a failed, wrong, diverged point;
#     MISSING: a step that failed, a point missing on either side), or the reference is missing;
#   - a point is a REGRESSION tonight and was one the night before too (a step, judged against the
#     reference), or the trend fails (the last 2 runs beyond their band, 3 runs below every run
#     before them, or a drift);
#   - on several nodes: a node or link the population names (population.txt: against the median
#     node or pair of the night) was named the night before too;
# a REGRESSION or a node or link named tonight alone is reported ("flagged: fails if it lasts") and
# passes.
#
#   jobscripts/acceptance_cron.sh SET [SYSTEM]
#   crontab -e:
#     0 2 * * *  /opt/hpcnn/share/hpcnn/jobscripts/acceptance_cron.sh nightly mybox >> /var/log/hpcnn-acceptance.log 2>&1
#   Slurm (the same night under sbatch or scrontab, every node of the allocation measured):
#     sbatch --nodes=8 jobscripts/acceptance_cron.sh nightly mycluster
#
# Writes, per night, HISTORY/<SYSTEM>/<SET>/<UTC date-time>/: the result files, verdict.txt,
# junit.xml and report.html (against the reference), trend.txt, trend-junit.xml, trend.html and,
# with gnuplot, trend.svg, on several nodes population.txt, population-junit.xml and
# population.html (every node and link against the night's median), and night.txt (tonight's
# verdicts and the trend's, and the night's outcome); and HISTORY/<SYSTEM>/<SET>/index.html, every night's outcome and pages, newest first.
# A night still running when the next starts makes the next one exit 1 at once (a lock), so runs
# never overlap and disturb each other's timings.
#
# The reference a night is judged against: the system's blessed one (results/reference) until the
# history holds REFERENCE_NIGHTS clean nights (passed, nothing flagged, no node lost) measured
# after that blessing; from then on the last REFERENCE_NIGHTS of them, each a run of its own,
# blessed into HISTORY/<SYSTEM>/<SET>/.reference-nights/ (jobscripts/bless.sh, with its checks: a
# night it refuses, say for its stalls, is left out and an older one taken). Runs blessed back to
# back hold one session's noise and level; nights hold what nights really do (docs/ACCEPTANCE.md,
# "Runs from separate nights"). night.txt's first line after the exit statuses names the reference.
# A slow drift then moves the reference with it: the trend over the nights is what catches it.
# Environment (all optional):
#   HISTORY     the history's root (default results/acceptance, relative to the current folder)
#   TREND_RUNS  N of --trend N (default 15; with fewer runs the trend judges what there is)
#   REFERENCE_NIGHTS  clean nights that become the reference (default 10; 0: always the blessed
#               reference; else at least ACCEPT_MIN_RUNS); BLESS_MAX_STALLS is bless.sh's limit
#               on a night's stalls there
#   REFERENCE_DIR, HOSTFILE, HPCNN_LAUNCH (e.g. "mpirun --hostfile hosts"), ACCEPT_RANKS,
#   ACCEPT_SUMMARY_ARGS and everything else acceptance.sh and jobscripts/common.sh read.
# Exit: 0 the night passed, 1 it failed (above), 2 bad usage or an unusable reference.
#SBATCH --job-name=hpcnn-acceptance
set -uo pipefail
usage() { echo "usage: ${0##*/} smoke|nightly|full [SYSTEM]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
SET=$1
case "$SET" in smoke|nightly|full) ;; *) echo "${0##*/}: unknown set '$SET' (smoke, nightly, full)" >&2; exit 2 ;; esac
SYSTEM=${2:-${HPCNN_SYSTEM:-$(hostname -s)}}
[[ "$SYSTEM" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "${0##*/}: bad system name '$SYSTEM' (letters, digits, . _ -)" >&2; exit 2; }
TREND_RUNS=${TREND_RUNS:-15}
[[ "$TREND_RUNS" =~ ^[0-9]+$ ]] && [ "$TREND_RUNS" -ge 3 ] || { echo "${0##*/}: TREND_RUNS '$TREND_RUNS' is not a count of 3 or more" >&2; exit 2; }
MIN_RUNS=${ACCEPT_MIN_RUNS:-3}
[[ "$MIN_RUNS" =~ ^[1-9][0-9]*$ ]] && [ "$MIN_RUNS" -ge 2 ] || { echo "${0##*/}: ACCEPT_MIN_RUNS '$MIN_RUNS' is not a count of 2 or more" >&2; exit 2; }
REFERENCE_NIGHTS=${REFERENCE_NIGHTS:-10}
[[ "$REFERENCE_NIGHTS" =~ ^(0|[1-9][0-9]*)$ ]] && { [ "$REFERENCE_NIGHTS" = 0 ] || [ "$REFERENCE_NIGHTS" -ge "$MIN_RUNS" ]; } ||
  { echo "${0##*/}: REFERENCE_NIGHTS '$REFERENCE_NIGHTS' is not 0 or a count of at least ACCEPT_MIN_RUNS ($MIN_RUNS)" >&2; exit 2; }
# sbatch runs a spooled copy of this script: common.sh is next to the script that was submitted.
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
jobscripts=$(cd "$jobscripts" && pwd)
source "$jobscripts/common.sh"
history=${HISTORY:-results/acceptance}/$SYSTEM/$SET
mkdir -p "$history" || { echo "${0##*/}: cannot create $history" >&2; exit 1; }
exec 9> "$history/.lock"
flock -n 9 || { echo "${0##*/}: the previous $SET run on $SYSTEM is still running ($history/.lock): not starting another" >&2; exit 1; }

night=$history/$(date -u +%Y%m%dT%H%M%SZ)
while [ -e "$night" ]; do sleep 1; night=$history/$(date -u +%Y%m%dT%H%M%SZ); done  # one night a second
previous=$(find "$history" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort | tail -n 1)
echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) acceptance $SET on $SYSTEM into $night"

# ---- tonight's reference: the blessed one, or the last REFERENCE_NIGHTS clean nights -------------
blessed_root=${REFERENCE_DIR:-$jobscripts/../results/reference}
blessed=$blessed_root/$SYSTEM/$SET
nights_root=$history/.reference-nights
# blessed_at: the blessing's UTC time in the nights' folder-name form (20261129T031500Z), from its
# BLESSED note (a checkout's file times say when it was checked out, not blessed); empty if none.
blessed_at() { sed -n '1s/^blessed \([0-9-]*\)T\([0-9:]*\)Z.*/\1T\2Z/p' "$blessed/BLESSED" 2>/dev/null | tr -d ':-'; }
# clean_nights: the nights since the blessing that passed with nothing flagged and no node lost,
# newest first, one per line.
clean_nights() {
  local since n
  since=$(blessed_at)
  while IFS= read -r n; do
    # Older than the blessing: done (a night named with the blessing's own second began after it).
    [[ "${n##*/}" < "$since" ]] && break
    [ -s "$n/night.txt" ] && ! grep -q '^\(failed\|flagged\)' "$n/night.txt" && [ ! -s "$n/nodes_lost.txt" ] &&
      printf '%s\n' "$n"
  done < <(find "$history" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort -r)
}
# shellcheck source=jobscripts/bless_newest.sh
source "$jobscripts/bless_newest.sh"
reference_line="reference: blessed, $blessed"
if [ "$REFERENCE_NIGHTS" != 0 ]; then
  mkdir -p "$nights_root" || { echo "${0##*/}: cannot create $nights_root" >&2; exit 1; }
  rm -f "$nights_root.log.refused"
  mapfile -t clean < <(clean_nights)
  window=$(BLESS_MIN_RUNS=$MIN_RUNS BLESS_ARGS=${ACCEPT_SUMMARY_ARGS:-} \
           bless_newest "$REFERENCE_NIGHTS" "$nights_root" "$SYSTEM" "$SET" "$nights_root.log" "${clean[@]}")
  case $? in
    0) export REFERENCE_DIR=$nights_root
       reference_line="reference: the last $REFERENCE_NIGHTS clean nights ($(sed 's|.*/||' <<<"$window" | sed -n '1p;$p' | paste -sd' ' | sed 's/ / to /')), $nights_root/$SYSTEM/$SET" ;;
    1) reference_line+=" ($window usable clean night(s) since its blessing; the last $REFERENCE_NIGHTS become the reference)" ;;
    *) reference_line+=" (the last $REFERENCE_NIGHTS clean nights could not be blessed: $(grep -m1 '^bless\.sh: ' "$nights_root.log" | sed 's/^bless\.sh: //'))" ;;
  esac
  [ ! -s "$nights_root.log.refused" ] ||
    reference_line+="; left out: $(bless_refused "$nights_root.log.refused" | sed 's|.*/||' | paste -sd' ') ($nights_root.log.refused)"
fi
echo "$reference_line"

status=0
OUT=$night "$jobscripts/acceptance.sh" "$SET" "$SYSTEM" || status=$?
[ "$status" = 2 ] && exit 2

# The trend over every night kept in the history (tonight's included).
read -ra summary_args <<<"${ACCEPT_SUMMARY_ARGS:-}"
trend_args=(--trend "$TREND_RUNS" --junit "$night/trend-junit.xml" --html "$night/trend.html")
command -v gnuplot >/dev/null && trend_args+=(--plot "$night/trend.svg")
# The nights alone: the reference's runs, blessed back to back or from other nights, are a tight
# cluster at their own level, and in the trend they would narrow its band and tilt its drift test.
trend_dirs=("$history")
trend=0
"$HPCNN_BIN/hpcnn-summary" "${trend_args[@]}" "${summary_args[@]}" "${trend_dirs[@]}" > "$night/trend.txt" || trend=$?
cat "$night/trend.txt"
[ "$trend" = 2 ] && exit 2

# write_index: HISTORY/<SYSTEM>/<SET>/index.html, a page of every night (newest first): its outcome
# from its night.txt, and links to its verdict page and trend page. Written whole, then renamed.
write_index() {
  local tmp=$history/.index.html.tmp n name outcome cls
  {
    echo '<!DOCTYPE html>'
    echo '<html lang="en"><head><meta charset="utf-8">'
    echo "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    echo "<title>hpcnn acceptance: $SET on $SYSTEM</title>"
    echo '<style>body{font-family:sans-serif;margin:1.5em} table{border-collapse:collapse} th,td{border:1px solid #ccc;padding:0.2em 0.6em;text-align:left} tr.fail{background:#f9d3c0} tr.flagged{background:#fdf0b3}</style>'
    echo "</head><body><h1>hpcnn acceptance: $SET on $SYSTEM</h1>"
    echo '<table><thead><tr><th>night (UTC)</th><th>outcome</th><th>pages</th></tr></thead><tbody>'
    for n in $(find "$history" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort -r); do
      name=${n##*/}
      if [ ! -s "$n/night.txt" ]; then outcome="incomplete (no night.txt)" cls=fail
      elif grep -q '^failed' "$n/night.txt"; then outcome="FAILED: $(grep -c '^failed' "$n/night.txt") reason(s)" cls=fail
      elif grep -q '^flagged' "$n/night.txt"; then outcome="passed, flagged tonight only (a REGRESSION, a node or link named)" cls=flagged
      else outcome=passed cls=ok
      fi
      local population=""
      [ ! -s "$n/population.html" ] || population=" <a href=\"$name/population.html\">nodes and links</a>"
      echo "<tr class=\"$cls\"><td>$name</td><td>$outcome</td><td><a href=\"$name/report.html\">verdicts</a> <a href=\"$name/trend.html\">trend</a>$population <a href=\"$name/night.txt\">night.txt</a></td></tr>"
    done
    echo '</tbody></table></body></html>'
  } > "$tmp" && mv -f "$tmp" "$history/index.html" || echo "${0##*/}: could not write $history/index.html" >&2
}

# regressions FILE: "SETTINGS METRIC" of every REGRESSION verdict in a verdict.txt.
regressions() { [ -r "$1" ] && sed -n 's/^failure: REGRESSION: \(.*\) reference .*/\1/p' "$1"; }
# named FILE: every node ("n3") and link ("link n2-n5") a population.txt names, once each.
named() { [ -r "$1" ] && sed -n 's/^population: \(link [^:]*\|[^ :]*\): .*: REGRESSION$/\1/p' "$1" | sort -u; }
verdicts=$night/verdict.txt
other_failures=$(grep '^failure: ' "$verdicts" 2>/dev/null | grep -cv '^failure: REGRESSION: ')
tonight=$(regressions "$verdicts")
lasting=""
if [ -n "$tonight" ] && [ -n "$previous" ]; then lasting=$(grep -Fx -f <(regressions "$previous/verdict.txt") <<<"$tonight"); fi
flagged=$(grep -Fxv -f <(printf '%s\n' "$lasting") <<<"$tonight")
[ -n "$lasting" ] || flagged=$tonight
named_tonight=$(named "$night/population.txt")
named_lasting=""
if [ -n "$named_tonight" ] && [ -n "$previous" ]; then named_lasting=$(grep -Fx -f <(named "$previous/population.txt") <<<"$named_tonight"); fi
named_flagged=$(grep -Fxv -f <(printf '%s\n' "$named_lasting") <<<"$named_tonight")
[ -n "$named_lasting" ] || named_flagged=$named_tonight
failed=0
{
  echo "night $night: tonight exit $status, trend exit $trend"
  echo "$reference_line"
  [ "$other_failures" = 0 ] || { echo "failed: $other_failures failure(s) that are not speed verdicts (STATUS, MISSING): $verdicts"; failed=1; }
  if [ "$status" != 0 ] && [ ! -s "$verdicts" ]; then
    echo "failed: acceptance.sh exited $status with no verdict against a reference (none yet, or it could not be used)"; failed=1
  elif [ "$status" != 0 ] && [ -z "$tonight" ] && [ "$other_failures" = 0 ] && [ -z "$named_tonight" ]; then
    echo "failed: acceptance.sh exited $status (a step failed)"; failed=1
  fi
  steps=$(sed -n 's/^steps failed: //p' "$night/steps.txt" 2>/dev/null)
  [ "${steps:-0}" = 0 ] || [ "$failed" = 1 ] || { echo "failed: $steps step(s) failed (acceptance.sh's output)"; failed=1; }
  while IFS= read -r p; do [ -z "$p" ] || { echo "failed: REGRESSION two nights running: $p"; failed=1; }; done <<<"$lasting"
  while IFS= read -r p; do [ -z "$p" ] || echo "flagged (fails if it lasts): REGRESSION tonight only: $p"; done <<<"$flagged"
  while IFS= read -r p; do [ -z "$p" ] || { echo "failed: named by the population two nights running: $p (population.txt)"; failed=1; }; done <<<"$named_lasting"
  while IFS= read -r p; do [ -z "$p" ] || echo "flagged (fails if it lasts): named by the population tonight only: $p (population.txt)"; done <<<"$named_flagged"
  [ "$trend" = 0 ] || { echo "failed: the trend (trend.txt)"; failed=1; }
} > "$night/night.txt"
cat "$night/night.txt"
write_index
if [ "$failed" != 0 ]; then
  echo "== acceptance $SET on $SYSTEM: FAILED ($night/night.txt)"
  exit 1
fi
echo "== acceptance $SET on $SYSTEM: passed${flagged:+, with REGRESSION flagged tonight only}${named_flagged:+, with a node or link named tonight only}; trend clean ($night)"
