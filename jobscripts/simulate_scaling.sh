#!/usr/bin/env bash
# Every exchange scheme projected to thousands of nodes (docs/SIMULATION.md): the paper's Fig 6
# (ref. [1]: images/s and efficiency against nodes, with the linear line) beyond the cluster at hand.
#  1. calibrate: the node (hpcnn-train, one rank: forward, backward and update of a step), and the
#     network (hpcnn-allreduce --exchange ring, one rank on each of 2 nodes, 1 KiB to 64 MiB:
#     latency and bandwidth of a link, fitted by hpcnn-simulate --fit-link);
#  2. measure: hpcnn-scale at 1..MEASURE_NODES nodes (one rank per node) for every scheme, the
#     points the simulation is checked against;
#  3. simulate: hpcnn-simulate on the fitted link for every scheme, 1..SIM_NODES nodes, TOPOLOGY;
#  4. the tables and the plot: hpcnn-summary --table simulation, --table scaling --plot.
# Under Slurm: sbatch --nodes=2 jobscripts/simulate_scaling.sh (more nodes: MEASURE_NODES).
# Environment: OUT (results/simulate), MODEL (resnet50), BATCH (64), SCHEMES (mpi,ring,rhd,ps-sync,
# ps-async), PS_SERVERS (1), MEASURE_NODES ("1 2"), SIM_NODES (1,2,4,...,4096), TOPOLOGY
# (fat-tree), NETWORK_MODEL (ideal), LINK_GBPS (set: use it instead of fitting the link), LINK_SIZES
# (the calibration's message sizes, 1K,16K,256K,1M,4M,16M,64M), ITERS (20).
#SBATCH --nodes=2
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
jobscripts=$(dirname "$0")
[ -r "$jobscripts/common.sh" ] || jobscripts=$(dirname "$(scontrol show job "${SLURM_JOB_ID:?no common.sh next to $0}" | sed -n 's/^ *Command=//p')")
# One-process steps (the node's calibration, the simulation) may use every core of the node.
HPCNN_WHOLE_NODE=${HPCNN_WHOLE_NODE-1}
source "$jobscripts/common.sh"
OUT=${OUT:-results/simulate}
MODEL=${MODEL:-resnet50}
BATCH=${BATCH:-64}
SCHEMES=${SCHEMES:-mpi,ring,rhd,ps-sync,ps-async}
PS_SERVERS=${PS_SERVERS:-1}
MEASURE_NODES=${MEASURE_NODES:-1 2}
SIM_NODES=${SIM_NODES:-1,2,4,8,16,32,64,128,256,512,1024,2048,4096}
TOPOLOGY=${TOPOLOGY:-fat-tree}
NETWORK_MODEL=${NETWORK_MODEL:-ideal}
LINK_SIZES=${LINK_SIZES:-1K,16K,256K,1M,4M,16M,64M}
ITERS=${ITERS:-20}
mkdir -p "$OUT/node" "$OUT/network" "$OUT/measured" "$OUT/simulated"

# 1. calibrate
run "$HPCNN_BIN/hpcnn-train" --model "$MODEL" --batch "$BATCH" --iters "$ITERS" --warmup 3 --output "$OUT/node"
link_args=()
if [ -n "${LINK_GBPS:-}" ]; then
  link_args=(--link-gbps "$LINK_GBPS")
else
  run_on 2 2 "$HPCNN_BIN/hpcnn-allreduce" --exchange ring --sizes "$LINK_SIZES" --output "$OUT/network"
  link_args=(--fit-link "$(ls -t "$OUT"/network/*.h5 | head -n 1)")
fi

# 2. measure: one rank per node; the parameter servers on nodes of their own, so a parameter-server
# point of N workers needs N + PS_SERVERS nodes: where the allocation is smaller, it is measured at
# the worker counts that fit and simulated beyond (one line says so).
allocated=${SLURM_JOB_NUM_NODES:-}
[ -n "$allocated" ] || [ -z "${HOSTFILE:-}" ] || allocated=$(grep -cv '^[[:space:]]*\(#\|$\)' "$HOSTFILE")
for n in $MEASURE_NODES; do
  run_on "$n" "$n" "$HPCNN_BIN/hpcnn-scale" --model "$MODEL" --batch "$BATCH" --iters "$ITERS" --warmup 3 \
    --exchange "$(tr , '\n' <<<"$SCHEMES" | grep -v '^ps-' | paste -sd,)" --baseline --output "$OUT/measured"
  if [[ ",$SCHEMES," == *,ps-* ]] && [ -n "$allocated" ] && [ $((n + PS_SERVERS)) -gt "$allocated" ]; then
    echo "${0##*/}: the parameter servers at $n worker(s) need $((n + PS_SERVERS)) nodes, the allocation has $allocated: measured where they fit, simulated beyond"
  elif [[ ",$SCHEMES," == *,ps-* ]]; then
    run_on $((n + PS_SERVERS)) $((n + PS_SERVERS)) "$HPCNN_BIN/hpcnn-scale" --model "$MODEL" --batch "$BATCH" \
      --iters "$ITERS" --warmup 3 --exchange "$(tr , '\n' <<<"$SCHEMES" | grep '^ps-' | paste -sd,)" \
      --ps-servers "$PS_SERVERS" --baseline --output "$OUT/measured"
  fi
done

# 3. simulate (one process on this node: the simulation is SimGrid's, not MPI's).
run "$HPCNN_BIN/hpcnn-simulate" --compute "$(ls -t "$OUT"/node/*.h5 | head -n 1)" \
  --model "$MODEL" --batch "$BATCH" --exchange "$SCHEMES" --ps-servers "$PS_SERVERS" --nodes "$SIM_NODES" \
  --topology "$TOPOLOGY" --network-model "$NETWORK_MODEL" "${link_args[@]}" --output "$OUT/simulated"

# 4. tables and plot
"$HPCNN_BIN/hpcnn-summary" --table simulation --format markdown "$OUT/simulated"
"$HPCNN_BIN/hpcnn-summary" --table scaling --format markdown "$OUT/measured" "$OUT/simulated"
if command -v gnuplot >/dev/null; then
  "$HPCNN_BIN/hpcnn-summary" --table scaling --plot "$OUT/scaling.svg" "$OUT/measured" "$OUT/simulated"
fi
