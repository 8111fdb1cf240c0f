#!/usr/bin/env bash
# A second MPI: the sources as a release carries them (make distdir: configure
# included) configured out of tree against Debian's MPICH with MPICC=mpicc.mpich, which must find
# MPICH's own launcher (mpiexec.mpich, beside the wrapper) for the tests; the executables linked
# with MPICH and not Open MPI; and that build's quick MPI tests (ctest -L mpi, not slow, gpu or
# cluster) run with MPICH's launcher. Skipped without mpicc.mpich (apt-get install mpich
# libmpich-dev). OpenBLAS, Eigen, CUDA, SimGrid (the simulator runs on SMPI, not the build's MPI)
# and the fuzz targets are left out to keep it short: the MPI code is the same for every backend
# (oneDNN stays: hpcnn-scale's default backend); of the MPI tests, the real-data training of one
# rank (accuracy_real_data) and the page in a browser (html_report) are left to the main build. CXXFLAGS=-O1
# (after the build's own -O3, so it wins) halves the compile time: this build is checked for what
# it computes, not how fast.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
command -v mpicc.mpich >/dev/null || { echo "SKIP: no mpicc.mpich (apt-get install mpich libmpich-dev)"; exit 77; }
make=${MAKE:-make}
jobs=$(nproc)
src=$out/src build=$out/build

step() {  # step WHAT LOG CMD...: CMD's output to LOG, shown and the test ended if CMD fails
  local what=$1 log=$2; shift 2
  if "$@" >"$log" 2>&1; then echo "ok:   $what"; else echo "FAIL: $what:"; tail -40 "$log"; exit 1; fi
}
step "make distdir" "$out/distdir.log" "$make" -s distdir distdir="$src" top_distdir="$src"
mkdir -p "$build" && cd "$build" || exit 1
step "configure MPICC=mpicc.mpich (out of tree)" "$out/configure.log" "$src/configure" MPICC=mpicc.mpich \
  --without-openblas --without-eigen --without-cuda --without-cudnn --without-nccl \
  --without-gbench --without-simgrid FUZZ_CXX=no CXXFLAGS=-O1
mpiexec=$(sed -n 's/^MPIEXEC = //p' Makefile)
real=$(readlink -f "$mpiexec")
[ "$(mpi_launcher_kind "$mpiexec")" = hydra ] && [ "${real##*/}" != orterun ] ||
  { echo "FAIL: configure MPICC=mpicc.mpich chose the launcher '$mpiexec' ($real), not MPICH's"; exit 1; }
echo "ok:   the tests' launcher is $mpiexec"
step "make -j$jobs" "$out/make.log" "$make" -j"$jobs"
libs=$(ldd ./hpcnn-scale)
grep -q 'libmpich' <<<"$libs" && ! grep -q 'libmpi\.so' <<<"$libs" ||
  { echo "FAIL: hpcnn-scale is not linked with MPICH alone:"; grep -i mpi <<<"$libs"; fail=1; }
# A build without OpenBLAS and Eigen: hpcnn-blas's default libraries are those it has (oneDNN's
# SGEMM for --sweep gemm), so the acceptance sets' SGEMM step runs on it unchanged.
run "$mpiexec" -np 1 ./hpcnn-blas --sweep gemm --sizes 64 --iters 3 --warmup 1 --quiet --output "$out/blas"
got=$("$build/hpcnn-summary" --format csv --columns backend "$out/blas" 2>&1 | tail -n +2 | sort -u | paste -sd, -)
[ "$got" = dnnl ] || { echo "FAIL: hpcnn-blas's default --backend in a build without OpenBLAS and Eigen: '$got', want dnnl"; fail=1; }
# The tests of this build, launched with its mpiexec (CTestTestfile.cmake hands it over); of the
# test programs, only those these tests run are built (the unit tests do not depend on the MPI).
step "make the MPI tests' programs" "$out/make_tests.log" "$make" -j"$jobs" CTestTestfile.cmake \
  tests/result_checker tests/make_image_files tests/test_collectives
# CTest runs them directly: the outer `make check`'s jobserver (MAKEFLAGS names its pipe, which is
# not open here) must not reach the tests' own make calls (install_tree's `make install`).
run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ctest --output-on-failure -L mpi -LE 'slow|gpu|cluster|build' -E '^(accuracy_real_data|html_report)$'
exit $fail
