#!/usr/bin/env bash
# Makes a run the reference of a system (docs/ACCEPTANCE.md, "Blessing a reference"): the result
# files of RUN_DIR become results/reference/<SYSTEM>/<SET>/, with a BLESSED note (when, where,
# from which run, hpcnn version, git commit). jobscripts/acceptance.sh calls it with BLESS=1.
#
#   jobscripts/bless.sh RUN_DIR SYSTEM SET
#
# A run is blessed only when it is a clean measurement: it is compared with itself
# (hpcnn-summary --compare), and any STATUS verdict refuses it: a failed, diverged or skipped
# point, wrong elements, a failed phase check, or outlier iterations (a paused or descheduled
# rank). On a shared, noisy machine BLESS_ARGS=--ignore-outliers accepts outlier iterations
# (acceptance.sh passes its ACCEPT_SUMMARY_ARGS). The new reference is copied whole into a new
# folder beside the old one, then swapped in: a reader never sees half a reference.
# Exit: 0 blessed, 1 refused or failed (the old reference left as it was), 2 bad usage.
# Environment: REFERENCE_DIR (default results/reference of this checkout), BLESS_ARGS, HPCNN_BIN.
set -uo pipefail
usage() { echo "usage: ${0##*/} RUN_DIR SYSTEM SET" >&2; exit 2; }
[ $# = 3 ] || usage
run_dir=$1 system=$2 set_name=$3
[ -d "$run_dir" ] || { echo "${0##*/}: no run folder '$run_dir'" >&2; exit 2; }
for name in "$system" "$set_name"; do
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "${0##*/}: bad name '$name' (letters, digits, . _ -)" >&2; exit 2; }
done
source "$(dirname "$0")/common.sh"
jobscripts=$(cd "$(dirname "$0")" && pwd)
REFERENCE_DIR=${REFERENCE_DIR:-$jobscripts/../results/reference}
reference=$REFERENCE_DIR/$system/$set_name
shopt -s nullglob
files=("$run_dir"/*.h5)
[ ${#files[@]} -gt 0 ] || { echo "${0##*/}: no result files (*.h5) in $run_dir: nothing to bless" >&2; exit 1; }

# A clean measurement? The run against itself: every ratio is 1, so only STATUS verdicts fail.
read -ra bless_args <<<"${BLESS_ARGS:-}"
check=$("$HPCNN_BIN/hpcnn-summary" --compare "$run_dir" "${bless_args[@]}" "$run_dir" 2>&1)
status=$?
if [ "$status" = 2 ]; then echo "${0##*/}: bad BLESS_ARGS: $check" >&2; exit 2; fi
if [ "$status" != 0 ]; then
  echo "${0##*/}: $run_dir is not blessed: it is not a clean measurement" >&2
  grep '^failure:' <<<"$check" >&2 || echo "$check" >&2
  echo "${0##*/}: run it again (or, on a shared noisy machine, BLESS_ARGS=--ignore-outliers)" >&2
  exit 1
fi

mkdir -p "$REFERENCE_DIR/$system" || exit 1
fresh=$(mktemp -d "$REFERENCE_DIR/$system/.$set_name.new.XXXXXX") || exit 1
chmod "$(umask -S)" "$fresh"  # mktemp -d makes it private; a reference is read by everyone the umask allows
cp "${files[@]}" "$fresh"/ || { rm -rf "$fresh"; echo "${0##*/}: copy into $fresh failed" >&2; exit 1; }
{ echo "blessed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) from $run_dir";
  echo "hpcnn $("$HPCNN_BIN/hpcnn-summary" --version)";
  git -C "$jobscripts/.." rev-parse HEAD 2>/dev/null | sed 's/^/commit /'; } > "$fresh/BLESSED"
rm -rf "$reference.old"
[ ! -e "$reference" ] || mv "$reference" "$reference.old" || { rm -rf "$fresh"; exit 1; }
mv "$fresh" "$reference" && rm -rf "$reference.old"
echo "reference $reference is now $run_dir (${#files[@]} result files)"
