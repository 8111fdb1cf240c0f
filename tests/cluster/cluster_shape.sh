#!/usr/bin/env bash
# Shape one host's link of a running virtual cluster, both directions, or lift the shaping:
#   tests/cluster/cluster_shape.sh STATE_DIR nK RATE[:DELAY]    e.g. n2 1gbit, n3 500mbit:2ms
#   tests/cluster/cluster_shape.sh STATE_DIR nK off
# RATE is a tc rate (1gbit, 500mbit, ...), applied with a token bucket (tbf) on both ends of the
# host's veth link. DELAY needs netem, which some kernels lack: then the delay is left out, with a
# warning, and only the rate is shaped. CLUSTER_QUEUE_MS (default 50): the queue of each end, in
# milliseconds at the rate; beyond it packets are dropped, as a switch port's buffer drops them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_lib.sh"
[ $# = 3 ] || { echo "usage: ${0##*/} STATE_DIR nK RATE[:DELAY]|off" >&2; exit 2; }
node=$2 spec=$3
cluster_host "$1" "$node"
ns=$(cl_netns "$k")
host_dev=$(cl_host_veth "$k") node_dev=$(cl_node_veth "$k")

tc qdisc del dev "$host_dev" root 2>/dev/null || true
tc -n "$ns" qdisc del dev "$node_dev" root 2>/dev/null || true
if [ "$spec" = off ]; then echo "$node: not shaped"; exit 0; fi

rate=${spec%%:*} delay=""
[ "$rate" = "$spec" ] || delay=${spec#*:}
[[ "$rate" =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$ ]] || { echo "${0##*/}: bad rate '$rate' (e.g. 1gbit, 500mbit)" >&2; exit 2; }
if [ -n "$delay" ] && ! cl_have_netem; then
  echo "${0##*/}: this kernel has no netem: $node gets the rate $rate but no delay $delay" >&2
  delay=""
fi
queue_ms=${CLUSTER_QUEUE_MS:-50}
[[ "$queue_ms" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: CLUSTER_QUEUE_MS '$queue_ms' is not a number of milliseconds" >&2; exit 2; }
# A burst of 1 ms at the rate (at least 16 KiB) and a queue of CLUSTER_QUEUE_MS. The small bucket makes the
# link send at its rate, as a switch port does: a bucket of 128 KiB lets a message that follows an
# idle spell through at once (a 64 KiB one took half the time of a loaded link's).
burst=$(awk -v r="$rate" 'BEGIN {
  n = r + 0; unit = substr(r, length(n "") + 1)
  scale["bit"] = 1 / 8; scale["kbit"] = 1e3 / 8; scale["mbit"] = 1e6 / 8; scale["gbit"] = 1e9 / 8
  scale["bps"] = 1; scale["kbps"] = 1e3; scale["mbps"] = 1e6; scale["gbps"] = 1e9
  b = n * scale[unit] / 1000; if (b < 16384) b = 16384; printf "%d", b }')
for side in host node; do
  if [ $side = host ]; then tcx=(tc); dev=$host_dev; else tcx=(tc -n "$ns"); dev=$node_dev; fi
  if [ -n "$delay" ]; then
    "${tcx[@]}" qdisc add dev "$dev" root handle 1: netem delay "$delay"
    "${tcx[@]}" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "${burst}b" latency "${queue_ms}ms"
  else
    "${tcx[@]}" qdisc add dev "$dev" root tbf rate "$rate" burst "${burst}b" latency "${queue_ms}ms"
  fi
done
echo "$node: $rate${delay:+, delay $delay}"
