#!/usr/bin/env bash
# gpu-check/build_kit.sh [KIT] -- run on the build machine, from the repository root: builds
# everything a GPU machine without MPI and HDF5 needs for the GPU checks into KIT (default .gpu,
# which .gitignore leaves out; copy it to the GPU machine together with the checkout):
#   KIT/build/         hpcnn-* and tests/test_* (stripped) of a CUDA-only build: configured
#                      --without-dnnl --without-openblas --without-eigen --disable-native
#                      CUDA_ARCH=${CUDA_ARCH:-90} (H100/H200), from a copy of the work tree
#   KIT/mpi-runtime/   the Debian Open MPI / HDF5 run time (fetch_runtime.sh)
# Then, on the GPU machine:
#   source gpu-check/runtime_env.sh .gpu/mpi-runtime
#   bash gpu-check/run_checks.sh .gpu/build OUT all
set -euo pipefail
kit=${1:-.gpu}
root=$(pwd)
[ -f configure.ac ] && [ -d .git ] || { echo "build_kit.sh: run from the repository root" >&2; exit 2; }
mkdir -p "$kit"
kit=$(cd "$kit" && pwd)
src=${HPCNN_KIT_SRC:-/tmp/hpcnn-gpu-src}
mkdir -p "$src"
# The tracked and untracked-but-not-ignored files: what a clone plus the work in progress has.
(git ls-files; git ls-files --others --exclude-standard) | tar -cf - --files-from=- | tar -xpf - -C "$src"
cd "$src"
[ -x configure ] || autoreconf -fi >/dev/null
if [ ! -f config.status ] || [ configure -nt config.status ]; then
  ./configure --without-dnnl --without-openblas --without-eigen --disable-native \
    CUDA_ARCH="${CUDA_ARCH:-90}" >/dev/null
fi
make -j"$(nproc)" all >/dev/null
make -j"$(nproc)" tests/test_backends tests/test_network tests/test_memory_plan tests/test_collectives tests/test_nccl \
  tests/result_checker >/dev/null
mkdir -p "$kit/build/tests"
for f in hpcnn-*; do [ -x "$f" ] && [ ! -d "$f" ] && install -m 755 -s "$f" "$kit/build/$f"; done
for f in tests/test_backends tests/test_network tests/test_memory_plan tests/test_collectives tests/test_nccl tests/result_checker; do
  install -m 755 -s "$f" "$kit/build/$f"
done
cd "$root"
bash "$root/gpu-check/fetch_runtime.sh" "$kit/mpi-runtime" "$src/hpcnn-train" "$src/hpcnn-scale" "$src/tests/test_collectives" >/dev/null
echo "kit ready: $(du -sh "$kit" | cut -f1) in $kit (build/, mpi-runtime/)"
