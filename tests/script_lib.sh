# Sourced by the bash tests: run in the build directory with a scratch folder $out (removed on
# exit), count failures in $fail, and
#   run CMD...                            echo CMD, run it, record a failure if it exits non-zero
#   expect_error STATUS NEEDLE -- CMD...  CMD must fail with STATUS and a one-line error (below)
set -u
cd "${HPCNN_BUILDDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
# $MPIRUN: the launcher of the MPI this build uses (configure's MPIEXEC, which CTest hands over as
# HPCNN_MPIEXEC; mpirun when run by hand) with what it needs to start more ranks than this machine
# has cores, for `$MPIRUN -np N CMD...` (under timeout too). On one machine Open MPI and Hydra
# (MPICH) both hand every rank the launcher's environment: no -x needed.
source "${HPCNN_SRCDIR:?}/jobscripts/mpi_launcher.sh"
mpi_kind=$(mpi_launcher_kind "${HPCNN_MPIEXEC:-mpirun}")
MPIRUN="${HPCNN_MPIEXEC:-mpirun} $(mpi_oversubscribe_opts "$mpi_kind")"
# The job scripts the tests run launch with it too (jobscripts/common.sh).
export HPCNN_MPIRUN=${HPCNN_MPIEXEC:-mpirun}
run() {
  echo "+ $*"
  "$@" || { local status=$?; echo "FAIL: $* exited $status$([ $status = 124 ] && echo ' (timed out)')"; fail=1; }
}

# expect_error STATUS NEEDLE -- CMD...: `CMD --output $out/usage` must exit with STATUS and write
# one line to stderr, containing NEEDLE; with STATUS 2 (a usage error) it must leave no file in
# $out/usage either. The lines counted are those that match $error_lines: every line by default;
# a script whose commands run under mpirun, which may add notices of its own, sets
# error_lines='^hpcnn-' to count the suites' lines only. A command that hangs (a limit the check
# misses can hang a library) ends after 300 s with status 124, a failure.
error_lines=''
expect_error() {
  [ "${3-}" = -- ] || { echo "usage: expect_error STATUS NEEDLE -- CMD..." >&2; exit 2; }
  local want=$1 needle=$2 dir="$out/usage" err status lines
  shift 3
  err=$(timeout 300 "$@" --output "$dir" 2>&1 >/dev/null); status=$?
  lines=$(printf '%s' "$err" | grep -c -- "$error_lines")
  if [ "$status" != "$want" ] || [ "$lines" != 1 ] || [[ "$err" != *"$needle"* ]]; then
    echo "FAIL: $* -> status $status (want $want and one line containing $needle), stderr: $err"; fail=1
  else
    echo "ok:   $* -> $status: $err"
  fi
  if [ "$want" = 2 ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    echo "FAIL: $* left files: $(ls -A "$dir")"; fail=1
  fi
  rm -rf "$dir"
}
