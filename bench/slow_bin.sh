#!/usr/bin/env bash
# A folder of hpcnn's executables in which one of them runs slowed from outside its process, for
# a job script that takes its executables from HPCNN_BIN (jobscripts/acceptance.sh and the nights
# built on it): a slower code path, a library that lost its fast kernel, as one suite of a night
# sees it, with nothing injected into the process measured.
#
#   bench/slow_bin.sh DIR EXE KIND PCT
#
# makes DIR (created; its hpcnn-* entries replaced) hold a symbolic link to every hpcnn-* executable
# of HPCNN_BIN (default: the build folder this script is run from, else the PATH's) except EXE,
# which is a small bash script running the real EXE under `bench/slow_node.sh KIND PCT` (that
# script says what each KIND does; `slices` needs no cgroup). Then `HPCNN_BIN=DIR acceptance.sh ...`
# runs EXE that much slower and every other executable as it is. The wrapper passes its arguments,
# environment and exit status through; under mpirun each rank's EXE is slowed on its own.
# Exit status: 0; 2 with one line on stderr for bad usage (a missing argument, EXE not found in
# HPCNN_BIN, KIND or PCT that bench/slow_node.sh refuses).
set -euo pipefail
me=slow_bin.sh
here=$(cd "$(dirname "$0")" && pwd)
[ $# = 4 ] || { echo "usage: $me DIR EXE KIND PCT" >&2; exit 2; }
dir=$1 exe=$2 kind=$3 pct=$4
bin=${HPCNN_BIN:-$PWD}
[ -x "$bin/$exe" ] || bin=$(dirname "$(command -v "$exe" 2>/dev/null || echo /nonexistent/x)")
[ -x "$bin/$exe" ] || { echo "$me: '$exe' is not an executable in HPCNN_BIN (${HPCNN_BIN:-$PWD}) or the PATH" >&2; exit 2; }
bin=$(cd "$bin" && pwd)
# The kind and share are checked once here, as slow_node.sh checks them (exit 2: bad usage).
SLOW_NODE_QUIET=1 "$here/slow_node.sh" "$kind" "$pct" true 2>/dev/null || {
  status=$?
  [ "$status" = 3 ] && { echo "$me: bench/slow_node.sh cannot set up '$kind' on this machine" >&2; exit 2; }
  echo "$me: bench/slow_node.sh refuses '$kind' '$pct' (a KIND of slow_node.sh, PCT from 1 to 90)" >&2; exit 2
}
mkdir -p "$dir"
for real in "$bin"/hpcnn-*; do
  [ -x "$real" ] && [ -f "$real" ] || continue
  name=$(basename "$real")
  rm -f "$dir/$name"
  if [ "$name" = "$exe" ]; then
    printf '#!/usr/bin/env bash\n# %s under bench/slow_node.sh %s %s (made by bench/slow_bin.sh)\nSLOW_NODE_QUIET=1 exec %q %q %q %q "$@"\n' \
      "$name" "$kind" "$pct" "$here/slow_node.sh" "$kind" "$pct" "$real" > "$dir/$name"
    chmod +x "$dir/$name"
  else
    ln -s "$real" "$dir/$name"
  fi
done
