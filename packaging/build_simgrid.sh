#!/usr/bin/env bash
# build_simgrid.sh PREFIX [VERSION]: build SimGrid with SMPI from its source distribution and
# install it into PREFIX, for hpcnn-simulate's large points (docs/SIMULATION.md, "What it costs":
# SimGrid 3.34 and newer find a rank's activities in a set, where Debian 12's 3.32 searches a
# list). Two fixes of hpcnn's to SimGrid's kernel go in before the build (simgrid_fixes.py: an
# activity MPI_Test completes is forgotten; a wait-any over thousands of requests costs linear
# time); SIMGRID_FIXES=no builds SimGrid as released. Then configure hpcnn with --with-simgrid=PREFIX.
#
# The source comes through pip (pip download --no-deps simgrid==VERSION: the project's source
# distribution, CMake inside); it needs cmake, a C++17 compiler and Boost's headers (Debian:
# cmake g++ libboost-dev), and about 8 minutes on 2 cores.
set -euo pipefail

usage() { echo "usage: $0 PREFIX [VERSION]   (default VERSION 4.1)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
prefix=$(realpath -m -- "$1")  # absolute: the build runs from a scratch folder
here=$(CDPATH='' cd -- "$(dirname -- "$0")" >/dev/null && pwd)
version=${2:-4.1}
case $version in *[!0-9.]*|"") echo "build_simgrid.sh: VERSION must look like 4.1, not '$version'" >&2; exit 2 ;; esac
fixes=${SIMGRID_FIXES:-yes}
case $fixes in yes|no) ;; *) echo "build_simgrid.sh: SIMGRID_FIXES must be yes or no, not '$fixes'" >&2; exit 2 ;; esac
for tool in cmake make python3 c++; do
  command -v "$tool" >/dev/null || { echo "build_simgrid.sh: $tool is missing (Debian: apt-get install cmake g++ python3-pip libboost-dev)" >&2; exit 1; }
done
python3 -m pip --version >/dev/null 2>&1 || { echo "build_simgrid.sh: python3 has no pip (Debian: apt-get install python3-pip)" >&2; exit 1; }
[ -e /usr/include/boost/version.hpp ] || { echo "build_simgrid.sh: Boost's headers are missing (Debian: apt-get install libboost-dev)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/simgrid-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "==> pip download --no-deps simgrid==$version"
python3 -m pip download -q --no-deps --no-binary :all: "simgrid==$version" -d "$work"
tar -xzf "$work"/simgrid-"$version".tar.gz -C "$work"
src=$work/simgrid-$version
# hpcnn's two fixes to SimGrid's kernel (simgrid_fixes.py says what they are and why), unless
# SIMGRID_FIXES=no; a SimGrid built with them says so in PREFIX/share/hpcnn/simgrid-fixes, which
# hpcnn-simulate reads into its records' provenance.
if [ "$fixes" = yes ]; then
  applied=$(python3 "$here/simgrid_fixes.py" "$src") || exit 1
  echo "$applied"
else
  echo "==> SimGrid $version without hpcnn's fixes (SIMGRID_FIXES=no)"
fi
# SMPI and the library only: no Python binding, model checker, Java or documentation.
echo "==> cmake (SMPI on) into $prefix"
# From the scratch folder: one of SimGrid's configure checks leaves its program in the current one.
cd "$work"
cmake -S "$src" -B "$work/build" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -Denable_smpi=ON -Denable_python=OFF -Denable_model-checking=OFF -Denable_documentation=OFF \
  -Denable_java=OFF -Denable_ns3=OFF -Denable_compile_optimizations=ON > "$work/cmake.log" ||
  { tail -20 "$work/cmake.log" >&2; echo "build_simgrid.sh: cmake failed (above)" >&2; exit 1; }
echo "==> make (library and smpimain), install"
make -C "$work/build" -j"$(nproc)" simgrid smpimain > "$work/make.log" 2>&1 ||
  { tail -20 "$work/make.log" >&2; echo "build_simgrid.sh: the build failed (above)" >&2; exit 1; }
make -C "$work/build" install > "$work/install.log" 2>&1 ||
  { tail -20 "$work/install.log" >&2; echo "build_simgrid.sh: make install failed (above)" >&2; exit 1; }
if [ "$fixes" = yes ]; then
  mkdir -p "$prefix/share/hpcnn"
  printf 'SimGrid %s with hpcnn'"'"'s fixes (packaging/simgrid_fixes.py):\n%s\n' "$version" "$applied" > "$prefix/share/hpcnn/simgrid-fixes"
else
  rm -f "$prefix/share/hpcnn/simgrid-fixes"
fi
echo "==> SimGrid $version in $prefix; now: ./configure --with-simgrid=$prefix"
