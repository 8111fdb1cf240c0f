#!/usr/bin/env bash
# The simulation against measurement with a model whose gradients come in several buckets
# (docs/SIMULATION.md, "How far to trust it"): tests/cluster/cluster_simulation.sh on the test
# cluster, ResNet-18 at batch 4 (11.2 million parameters: 43 MiB of gradients, 11 buckets of 4 MiB)
# measured with hpcnn-scale and simulated with hpcnn-simulate on 2 and 8 hosts, every scheme (the
# parameter servers on 8: a server and 7 workers), the link fitted from a 2-host ring allreduce.
# Prints every point's error and how many are within 15% and 25%. Too long for CTest at these
# message sizes (a few minutes a scheme at 8 hosts); needs root (network namespaces, slurmd).
#   sudo bench/simulation_vs_measured.sh
# Environment: MODEL (resnet18), BATCH (4), HOSTS ("2 8"), RATE (200mbit), ITERS (4), WARMUP (1),
# TOLERANCE (0.25), HPCNN_BUILDDIR (this checkout), CLUSTER_TEST_KEEP (1 keeps the files).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "${0##*/}: needs root (network namespaces, slurmd)" >&2; exit 2; }
export HPCNN_SRCDIR=$here HPCNN_BUILDDIR=${HPCNN_BUILDDIR:-$here}
export MODEL=${MODEL:-resnet18} BATCH=${BATCH:-4} HOSTS=${HOSTS:-2 8} RATE=${RATE:-200mbit}
export ITERS=${ITERS:-4} WARMUP=${WARMUP:-1} TOLERANCE=${TOLERANCE:-0.25}
# The allreduce sizes are the link fit's (2 hosts); the study of simulate_scaling.sh is the CTest's.
export ALLREDUCE_HOSTS=2 SIZES=${SIZES:-64K,256K,1M,4M} STUDY=0
exec bash "$here/tests/cluster/cluster_simulation.sh"
