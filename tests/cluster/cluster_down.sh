#!/usr/bin/env bash
# Take down a virtual cluster that cluster_up.sh brought up: its jobs' processes, the slurmds,
# slurmctld and munged (by the PIDs it kept, nothing else), the namespaces, links and bridge.
#   tests/cluster/cluster_down.sh [--purge] [STATE_DIR]
# --purge also removes the state folder (logs included). Safe to run twice, or on a cluster that
# came up only in part.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_lib.sh"
purge=no
if [ "${1:-}" = --purge ]; then purge=yes; shift; fi
state=${1:-${CLUSTER_DIR:-/tmp/hpcnn-cluster}}
[ -d "$state" ] || { echo "${0##*/}: no cluster in $state"; exit 0; }
cluster_names "$state"
[ -r "$CL_ENV" ] || { echo "${0##*/}: $CLUSTER_DIR holds no cluster (no cluster.env)"; exit 0; }
source "$CL_ENV"

# 1. The hosts: each slurmd, then whatever is left in its namespace (slurmstepd and job steps,
#    which slurmd started and which outlive it): every process in the namespace is the cluster's.
for ((k = 1; k <= CL_NODES; k++)); do cl_stop_pid "slurmd-n$k" slurmd; done
for ((k = 1; k <= CL_NODES; k++)); do
  ns=$(cl_netns "$k")
  [ -e "/run/netns/$ns" ] || continue
  pids=$(ip netns pids "$ns" 2>/dev/null)
  if [ -n "$pids" ]; then
    kill -TERM $pids 2>/dev/null
    for ((i = 0; i < 30; i++)); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
    for ((i = 0; i < 30; i++)); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
  fi
done
# A host slowed by cluster_slow.sh: its processes are gone, its cgroup is removed.
for ((k = 1; k <= CL_NODES; k++)); do
  [ ! -e "$CLUSTER_DIR/slowed-n$k" ] || "$here/cluster_slow.sh" "$CLUSTER_DIR" "n$k" off >/dev/null || true
done
# 2. The controller and munge.
cl_stop_pid slurmctld slurmctld
cl_stop_pid munged munged
# 3. The network: deleting a namespace deletes its veth pair (and the shaping on it).
for ((k = 1; k <= CL_NODES; k++)); do
  ns=$(cl_netns "$k")
  [ -e "/run/netns/$ns" ] && ip netns del "$ns"
  ip link show "$(cl_host_veth "$k")" >/dev/null 2>&1 && ip link del "$(cl_host_veth "$k")"
done
ip link show "$CL_BRIDGE" >/dev/null 2>&1 && ip link del "$CL_BRIDGE"

left=""
for ((k = 1; k <= CL_NODES; k++)); do [ -e "/run/netns/$(cl_netns "$k")" ] && left="$left $(cl_netns "$k")"; done
ip link show "$CL_BRIDGE" >/dev/null 2>&1 && left="$left $CL_BRIDGE"
[ -z "$left" ] || { echo "${0##*/}: could not remove:$left" >&2; exit 1; }
rm -f "$CL_ENV"
if [ "$purge" = yes ]; then rm -rf "$CLUSTER_DIR"; fi
echo "cluster down: $CLUSTER_DIR"
