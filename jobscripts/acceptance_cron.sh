#!/usr/bin/env bash
# Nightly acceptance from cron on machines without Slurm (mpirun; docs/ACCEPTANCE.md, "Nightly
# set-up"): runs jobscripts/acceptance.sh SET SYSTEM into a dated folder of the system's history,
# then hpcnn-summary --trend over every night of that history (each night against the
# TREND_RUNS nights before it; a step that lasts, a slow drift), and exits 0 only when tonight's
# verdicts and the trend both pass.
#
#   jobscripts/acceptance_cron.sh SET [SYSTEM]
#   crontab -e:
#     0 2 * * *  /opt/hpcnn/share/hpcnn/jobscripts/acceptance_cron.sh nightly mybox >> /var/log/hpcnn-acceptance.log 2>&1
#
# Writes, per night, HISTORY/<SYSTEM>/<SET>/<UTC date-time>/: the result files, verdict.txt and
# junit.xml (against the reference), trend.txt, trend-junit.xml and, with gnuplot, trend.svg.
# A night still running when the next starts makes the next one exit 1 at once (a lock), so runs
# never overlap and disturb each other's timings.
# Environment (all optional):
#   HISTORY     the history's root (default results/acceptance, relative to the current folder)
#   TREND_RUNS  N of --trend N (default 15; with fewer nights the trend judges what there is)
#   HOSTFILE, HPCNN_LAUNCH (e.g. "mpirun --hostfile hosts"), ACCEPT_RANKS, ACCEPT_SUMMARY_ARGS
#   and everything else acceptance.sh and jobscripts/common.sh read.
# Exit: 0 tonight passed and the trend is clean, 1 otherwise, 2 bad usage.
set -uo pipefail
usage() { echo "usage: ${0##*/} smoke|nightly|full [SYSTEM]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
SET=$1
case "$SET" in smoke|nightly|full) ;; *) echo "${0##*/}: unknown set '$SET' (smoke, nightly, full)" >&2; exit 2 ;; esac
SYSTEM=${2:-${HPCNN_SYSTEM:-$(hostname -s)}}
[[ "$SYSTEM" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "${0##*/}: bad system name '$SYSTEM' (letters, digits, . _ -)" >&2; exit 2; }
TREND_RUNS=${TREND_RUNS:-15}
[[ "$TREND_RUNS" =~ ^[0-9]+$ ]] && [ "$TREND_RUNS" -ge 3 ] || { echo "${0##*/}: TREND_RUNS '$TREND_RUNS' is not a count of 3 or more" >&2; exit 2; }
jobscripts=$(cd "$(dirname "$0")" && pwd)
source "$jobscripts/common.sh"
history=${HISTORY:-results/acceptance}/$SYSTEM/$SET
mkdir -p "$history" || { echo "${0##*/}: cannot create $history" >&2; exit 1; }
exec 9> "$history/.lock"
flock -n 9 || { echo "${0##*/}: the previous $SET run on $SYSTEM is still running ($history/.lock): not starting another" >&2; exit 1; }

night=$history/$(date -u +%Y%m%dT%H%M%SZ)
echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) acceptance $SET on $SYSTEM into $night"
status=0
OUT=$night "$jobscripts/acceptance.sh" "$SET" "$SYSTEM" || status=$?
[ "$status" = 2 ] && exit 2

# The trend over every night kept in the history (tonight's included).
read -ra summary_args <<<"${ACCEPT_SUMMARY_ARGS:-}"
trend_args=(--trend "$TREND_RUNS" --junit "$night/trend-junit.xml")
command -v gnuplot >/dev/null && trend_args+=(--plot "$night/trend.svg")
trend=0
"$HPCNN_BIN/hpcnn-summary" "${trend_args[@]}" "${summary_args[@]}" "$history" > "$night/trend.txt" || trend=$?
cat "$night/trend.txt"
[ "$trend" = 2 ] && exit 2
if [ "$status" != 0 ] || [ "$trend" != 0 ]; then
  echo "== acceptance $SET on $SYSTEM: FAILED (tonight: exit $status, trend: exit $trend; $night)"
  exit 1
fi
echo "== acceptance $SET on $SYSTEM: passed, trend clean ($night)"
