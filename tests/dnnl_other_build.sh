#!/usr/bin/env bash
# The dnnl backend builds against oneDNN 2.x (Debian 12's 2.6) and 3.x (Debian 13,
# Spack, EasyBuild, PyPI) through kernels/dnnl/compat.hpp. This build uses one of them; this test
# builds a second hpcnn against the other one and runs there what exercises oneDNN:
# test_backends' dnnl cases (every op against the reference backend), test_network's dnnl cases
# (fusion, folded batch norm, finite differences, training), test_blas (dnnl_sgemm), test_int8
# (int8 inference: the two APIs take int8 scales differently), and a short
# hpcnn-train whose result file must name that oneDNN's version and instruction set.
# The copy comes from `make distdir` (an in-tree build's source folder cannot host a second,
# out-of-tree configure) and is configured with oneDNN and the reference backend only (no CUDA,
# OpenBLAS or Eigen: the backend tests then run the dnnl cases and nothing else), and compiled
# at -O1 (CXXFLAGS come after the build's own -O3): it is checked for what it computes, and the
# shorter compile halves the test's time; oneDNN's own kernels are compiled already.
# Where the other oneDNN is found:
#   oneDNN 3: $HPCNN_ONEDNN3, else .quickstart/onednn3 in the source tree, where `./quickstart
#             check` installs PyPI's onednn-devel-cpu-gomp (headers, libdnnl.so.3, GNU OpenMP)
#   oneDNN 2: the system's (libdnnl-dev)
# Skipped (77) when this build has no dnnl backend or the other oneDNN is not installed.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
make=${MAKE:-make}

mine=$(./hpcnn-train --list | sed -n 's/^  dnnl  *oneDNN \([0-9]*\)\..*/\1/p')
[ -n "$mine" ] || { echo "skipped: this build has no dnnl backend"; exit 77; }
if [ "$mine" -ge 3 ]; then
  want=2 header=/usr/include/oneapi/dnnl/dnnl_version.h with=--with-dnnl
  hint="install libdnnl-dev"
else
  dir=${HPCNN_ONEDNN3:-$HPCNN_SRCDIR/.quickstart/onednn3}
  want=3 header=$dir/include/oneapi/dnnl/dnnl_version.h with=--with-dnnl=$dir
  hint="./quickstart check all installs it there, or set HPCNN_ONEDNN3=DIR"
fi
major=$(sed -n 's/^#define DNNL_VERSION_MAJOR \([0-9]*\).*/\1/p' "$header" 2>/dev/null)
if [ "$major" != "$want" ] && ! { [ "$want" = 3 ] && [ "${major:-0}" -gt 3 ]; }; then
  echo "skipped: this build uses oneDNN $mine and no oneDNN $want is installed ($header: ${major:-missing}; $hint)"
  exit 77
fi
echo "this build: oneDNN $mine; building a second one against oneDNN $major ($with)"

src=$out/src build=$out/build
step() {  # step NAME CMD...: runs CMD quietly into $out/NAME.log; on failure shows the log, ends the test
  local name=$1; shift
  echo "+ $*"
  "$@" >"$out/$name.log" 2>&1 || { echo "FAIL: $* (exit $?):"; tail -n 40 "$out/$name.log"; exit 1; }
}
step distdir "$make" -s distdir distdir="$src"
mkdir -p "$build"
cd "$build" || exit 1
step configure "$src/configure" --without-cuda --without-openblas --without-eigen "$with" CXXFLAGS=-O1
grep -E '^  oneDNN ' "$out/configure.log"
step make "$make" -j"$(nproc)" hpcnn-train tests/test_backends tests/test_network tests/test_blas tests/test_int8

got=$(./hpcnn-train --list | sed -n 's/^  dnnl  *oneDNN \([0-9]*\)\..*/\1/p')
[ "$got" = "$major" ] || { echo "FAIL: the second build runs oneDNN '${got:-none}', not $major"; exit 1; }
run ./tests/test_backends --gtest_brief=1
run ./tests/test_network --gtest_brief=1
run ./tests/test_blas --gtest_brief=1
run ./tests/test_int8 --gtest_brief=1
run ./hpcnn-train --model resnet18 --backend dnnl --batch 4 --iters 2 --warmup 1 --quiet --output "$out/res"
attr() { h5dump -a "/provenance/libraries/$1" "$out"/res/*.h5 | sed -n 's/^ *(0): "\(.*\)"/\1/p'; }
version=$(attr oneDNN) isa=$(attr oneDNN_isa)
case "$version" in
  "$major".*) echo "ok:   result file: oneDNN $version, instruction set $isa" ;;
  *) echo "FAIL: result file names oneDNN '$version', not $major.x"; fail=1 ;;
esac
case "$isa" in
  ''|unknown) echo "FAIL: result file names no oneDNN instruction set ('$isa')"; fail=1 ;;
esac
exit $fail
