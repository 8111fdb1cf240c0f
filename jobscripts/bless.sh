#!/usr/bin/env bash
# Makes runs of an acceptance set the reference of a system (docs/ACCEPTANCE.md, "References and
# blessing"): the result files of each RUN_DIR become results/reference/<SYSTEM>/<SET>/run-K/,
# with a BLESSED note (when, where, from which runs, hpcnn version, git commit), STABILITY.txt and
# its page stability.html (how steady each point is over the runs). jobscripts/acceptance.sh calls
# it with BLESS=1.
#
#   jobscripts/bless.sh RUN_DIR [RUN_DIR...] SYSTEM SET
#
# Several runs make the reference: their run-to-run spread is what tells a change from noise in
# every later comparison. The runs are blessed only when
#   - there are at least BLESS_MIN_RUNS of them (default 3; exit 2 otherwise);
#   - they are one reference: one build, one machine, every point in every run (exit 2 otherwise);
#   - each is a clean measurement: it is compared with itself (hpcnn-summary --compare), and any
#     STATUS verdict refuses it: a failed, diverged or skipped point, wrong elements, a failed phase
#     check (exit 1); so does a point whose stalls (a paused or descheduled rank, a throttled CPU:
#     stall_share) took more than BLESS_MAX_STALLS percent of its timed time (default 10): its
#     delivered figure would lower the reference. On a shared, noisy machine BLESS_MAX_STALLS=100
#     accepts them, and the reference's spread then holds them.
# The stability report (hpcnn-summary --stability) names the points whose runs spread so much that
# a comparison cannot judge them (UNSTABLE) and the iterations that would steady them; they are
# blessed all the same, and the report says so.
# The new reference is copied whole into a new folder beside the old one, then swapped in: a reader
# never sees half a reference, and a refused blessing leaves the old one as it was.
# Exit: 0 blessed, 1 refused or failed, 2 bad usage or runs that are not one reference.
# Environment: REFERENCE_DIR (default results/reference of this checkout), BLESS_ARGS (more
# hpcnn-summary options for the check; acceptance.sh passes its ACCEPT_SUMMARY_ARGS),
# BLESS_MIN_RUNS, BLESS_MAX_STALLS, HPCNN_BIN.
set -uo pipefail
usage() { echo "usage: ${0##*/} RUN_DIR [RUN_DIR...] SYSTEM SET" >&2; exit 2; }
[ $# -ge 3 ] || usage
system=${*: -2:1} set_name=${*: -1:1}
run_dirs=("${@:1:$#-2}")
for name in "$system" "$set_name"; do
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "${0##*/}: bad name '$name' (letters, digits, . _ -)" >&2; exit 2; }
done
min_runs=${BLESS_MIN_RUNS:-3}
[[ "$min_runs" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: BLESS_MIN_RUNS '$min_runs' is not a count" >&2; exit 2; }
max_stalls=${BLESS_MAX_STALLS:-10}
max_stalls=${max_stalls%\%}
[[ "$max_stalls" =~ ^([0-9]|[1-9][0-9]|100)$ ]] ||
  { echo "${0##*/}: BLESS_MAX_STALLS '${BLESS_MAX_STALLS}' is not a percentage 0-100" >&2; exit 2; }
for dir in "${run_dirs[@]}"; do
  [ -d "$dir" ] || { echo "${0##*/}: no run folder '$dir'" >&2; exit 2; }
done
if [ "${#run_dirs[@]}" -lt "$min_runs" ]; then
  echo "${0##*/}: ${#run_dirs[@]} run(s) given, $min_runs asked for (BLESS_MIN_RUNS): a reference's spread needs several runs" >&2
  exit 2
fi
source "$(dirname "$0")/common.sh"
jobscripts=$(cd "$(dirname "$0")" && pwd)
REFERENCE_DIR=${REFERENCE_DIR:-$jobscripts/../results/reference}
reference=$REFERENCE_DIR/$system/$set_name
shopt -s nullglob

# Each run a clean measurement? The run against itself: every ratio is 1, so only STATUS verdicts fail.
read -ra bless_args <<<"${BLESS_ARGS:-}"
for dir in "${run_dirs[@]}"; do
  files=("$dir"/*.h5)
  [ ${#files[@]} -gt 0 ] || { echo "${0##*/}: $dir is not blessed: it holds no result files (*.h5)" >&2; exit 1; }
  check=$("$HPCNN_BIN/hpcnn-summary" --compare "$dir" "${bless_args[@]}" "$dir" 2>&1)
  status=$?
  # A test's run (a fault injected: HPCNN_TEST_*) is no measurement of the system.
  if [ "$status" = 2 ] && [[ "$check" == *"measured with a fault injected"* ]]; then
    echo "${0##*/}: $dir is not blessed: ${check#hpcnn-summary: error: }" >&2
    exit 1
  fi
  if [ "$status" = 2 ]; then echo "${0##*/}: bad BLESS_ARGS: $check" >&2; exit 2; fi
  if [ "$status" != 0 ]; then
    echo "${0##*/}: $dir is not blessed: it is not a clean measurement" >&2
    grep '^failure:' <<<"$check" >&2 || echo "$check" >&2
    echo "${0##*/}: run it again" >&2
    exit 1
  fi
  # Stalls: a point's stall_share (first column) over BLESS_MAX_STALLS in every one of its rounds
  # (the rounds of a point share its reproducer; the run's figure is its best round, so one clean
  # round is enough), named by the reproducer.
  stalled=$("$HPCNN_BIN/hpcnn-summary" --format csv --columns stall_share,reproducer "$dir" 2>/dev/null |
            awk -F, -v max="$max_stalls" 'NR > 1 && $1 != "" {
                 point = substr($0, length($1) + 2)
                 if (!(point in least) || $1 + 0 < least[point]) least[point] = $1 + 0 }
               END { for (point in least) if (100 * least[point] > max)
                       printf "stalls took %.0f%% of the timed time: %s\n", 100 * least[point], point }')
  if [ -n "$stalled" ]; then
    echo "${0##*/}: $dir is not blessed: stalls took more than $max_stalls% of a point's time (BLESS_MAX_STALLS)" >&2
    echo "$stalled" >&2
    echo "${0##*/}: run it again on a quiet system, or accept them with BLESS_MAX_STALLS=100" >&2
    exit 1
  fi
done

# One reference? One build, one machine, the same points in every run; and how steady each point is.
page_dir=$(mktemp -d) || exit 1
trap 'rm -rf "$page_dir"' EXIT
stability=$("$HPCNN_BIN/hpcnn-summary" --stability --min-runs "$min_runs" --html "$page_dir/stability.html" \
  "${run_dirs[@]}" 2>&1)
status=$?
stability=$(grep -v '^hpcnn-summary: page written' <<<"$stability")
if [ "$status" != 0 ]; then
  echo "${0##*/}: not blessed: ${stability#hpcnn-summary: error: }" >&2
  exit 2
fi
echo "$stability"

mkdir -p "$REFERENCE_DIR/$system" || exit 1
fresh=$(mktemp -d "$REFERENCE_DIR/$system/.$set_name.new.XXXXXX") || exit 1
chmod "$(umask -S)" "$fresh"  # mktemp -d makes it private; a reference is read by everyone the umask allows
k=0
for dir in "${run_dirs[@]}"; do
  k=$((k + 1))
  mkdir "$fresh/run-$k" && cp "$dir"/*.h5 "$fresh/run-$k"/ ||
    { rm -rf "$fresh"; echo "${0##*/}: copy into $fresh failed" >&2; exit 1; }
done
echo "$stability" > "$fresh/STABILITY.txt"
cp "$page_dir/stability.html" "$fresh/stability.html" 2>/dev/null ||
  echo "${0##*/}: no stability page (the text is in STABILITY.txt)" >&2
{ echo "blessed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) from ${#run_dirs[@]} runs: ${run_dirs[*]}";
  echo "runs ${#run_dirs[@]}";
  echo "hpcnn $("$HPCNN_BIN/hpcnn-summary" --version)";
  git -C "$jobscripts/.." rev-parse HEAD 2>/dev/null | sed 's/^/commit /'; } > "$fresh/BLESSED"
rm -rf "$reference.old"
[ ! -e "$reference" ] || mv "$reference" "$reference.old" || { rm -rf "$fresh"; exit 1; }
mv "$fresh" "$reference" && rm -rf "$reference.old"
unstable=$(grep -c '^unstable:' <<<"$stability")
note=""
[ "$unstable" = 0 ] || note="; $unstable point(s) UNSTABLE, see $reference/STABILITY.txt (or stability.html)"
echo "reference $reference is now ${#run_dirs[@]} runs (${run_dirs[*]})$note"
