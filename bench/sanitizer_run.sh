#!/usr/bin/env bash
# The executables and tests built with a sanitizer, then the MPI tests run on that build: what the
# watchdog's and the data loader's threads, the parameter servers and the result gathering do to
# memory (AddressSanitizer with UndefinedBehaviorSanitizer) or to shared data (ThreadSanitizer).
# The sources as a release carries them (make distdir) are configured out of tree with the
# sanitizer in CXXFLAGS and LDFLAGS (every object: the libraries, the executables, the tests),
# without OpenBLAS, Eigen, CUDA and the fuzz targets (the MPI code is the same for every backend).
#
#   bench/sanitizer_run.sh address|thread [CTEST_ARGS...]    (from a configured build tree)
#
# CTEST_ARGS default to the MPI tests that are not GPU, cluster or build tests: -L mpi -LE
# 'gpu|cluster|build', hostile_memory excepted. Prints each test's verdict and every sanitizer
# report found in the logs.
# ThreadSanitizer: the OpenMP runtime (libgomp) and Open MPI are not instrumented, so their own
# synchronization is invisible to it; bench/tsan.supp names those libraries, and what remains
# is hpcnn's. Takes 15-30 minutes on 2 cores. Exit 0 when every test passed without a report.
set -uo pipefail
kind=${1:?usage: bench/sanitizer_run.sh address|thread [CTEST_ARGS...]}
shift
case "$kind" in
  address) flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" ;;
  thread) flags="-fsanitize=thread" ;;
  *) echo "${0##*/}: unknown sanitizer '$kind' (address or thread)" >&2; exit 2 ;;
esac
[ -f Makefile ] || { echo "${0##*/}: run it in a configured build tree" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
ctest_args=("$@")
[ ${#ctest_args[@]} -gt 0 ] || ctest_args=(-L mpi -LE 'gpu|cluster|build')
# hostile_memory caps the address space (ulimit -v): a sanitizer's shadow memory cannot fit in it.
[ $# -gt 0 ] || ctest_args+=(-E '^hostile_memory$')
work=${SANITIZER_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/hpcnn-$kind.XXXXXX")}
mkdir -p "$work" || exit 1
src=$work/src build=$work/build
jobs=$(nproc)
step() {  # step WHAT LOG CMD...
  local what=$1 log=$2; shift 2
  if "$@" >"$log" 2>&1; then echo "ok:   $what"; else echo "FAIL: $what ($log):"; tail -30 "$log"; exit 1; fi
}
step "make distdir" "$work/distdir.log" make -s distdir distdir="$src" top_distdir="$src"
mkdir -p "$build" && cd "$build" || exit 1
step "configure with -fsanitize=$kind" "$work/configure.log" "$src/configure" \
  CXXFLAGS="-O1 -g $flags" LDFLAGS="$flags" --without-openblas --without-eigen --without-cuda --without-cudnn \
  --without-nccl --without-gbench FUZZ_CXX=no
# The build runs the executables (--help for the man pages): leak reports at their exit are Open
# MPI's and hwloc's own allocations, not hpcnn's, and would fail the build.
export ASAN_OPTIONS=detect_leaks=0
step "make -j$jobs (all and the tests)" "$work/make.log" make -j"$jobs" check CTEST=true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Reports go to files (one per process) so that a test's own output checks are not confused by
# them; a report does not end the process, so every test runs to its end.
export ASAN_OPTIONS="log_path=$work/report:detect_leaks=0:halt_on_error=0"
export UBSAN_OPTIONS="log_path=$work/report:print_stacktrace=1"
# exitcode=0: a process with a report still exits as it would (its reports are listed below), so
# that a test fails on what it checks, not on a report it did not cause.
export TSAN_OPTIONS="log_path=$work/report:halt_on_error=0:exitcode=0:suppressions=$here/tsan.supp:second_deadlock_stack=1"
ctest --output-on-failure "${ctest_args[@]}" 2>&1 | tee "$work/ctest.log" | grep -E '^ *[0-9]+/[0-9]+ Test|tests passed'
status=${PIPESTATUS[0]}
reports=$(ls "$work"/report.* 2>/dev/null | wc -l)
echo "# $reports sanitizer report file(s) in $work"
for f in "$work"/report.*; do
  [ -e "$f" ] || continue
  echo "== $f"; grep -m 3 -E 'ERROR|WARNING|runtime error' "$f"; grep -m 8 -E '^ +#[0-9]+ ' "$f"
done
[ "$status" = 0 ] && [ "$reports" = 0 ]
