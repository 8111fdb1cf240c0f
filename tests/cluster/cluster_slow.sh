#!/usr/bin/env bash
# Slow one host of a running virtual cluster, as a node that lost CPU does, or lift it:
#   tests/cluster/cluster_slow.sh STATE_DIR nK CPUS     e.g. n3 0.75: the host gets 3/4 of one CPU
#   tests/cluster/cluster_slow.sh STATE_DIR nK off
# A CFS bandwidth limit (a CPU quota: CPUS x 100 ms of CPU time per 100 ms period) on a cgroup of
# the host's slurmd, so every job step it starts inherits it, from outside the processes measured.
# cgroup v2 (cpu.max; "+cpu" added to the root's cgroup.subtree_control where missing) or v1 (the
# cpu hierarchy's cpu.cfs_quota_us). Lifting moves the host's processes back to the root cgroup and
# removes the cgroup; cluster_down.sh lifts what is left. Exit 77 where no cgroup can limit CPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_lib.sh"
[ $# = 3 ] || { echo "usage: ${0##*/} STATE_DIR nK CPUS|off" >&2; exit 2; }
node=$2 spec=$3
cluster_host "$1" "$node"
[ "$spec" = off ] || [[ "$spec" =~ ^(0?\.[0-9]+|[1-9][0-9]*(\.[0-9]+)?)$ ]] ||
  { echo "${0##*/}: CPUS '$spec' is not a positive number of CPUs (0.75)" >&2; exit 2; }

# The cpu controller's root: v2's unified hierarchy, or v1's cpu hierarchy.
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
  root=/sys/fs/cgroup version=2
elif [ -w /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] || [ -w /sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us ]; then
  root=/sys/fs/cgroup/cpu; [ -w "$root/cpu.cfs_quota_us" ] || root=/sys/fs/cgroup/cpu,cpuacct
  version=1
else
  echo "${0##*/}: no writable cgroup cpu controller here: cannot limit a host's CPU" >&2; exit 77
fi
cg=$root/hpcnn-cluster-$CL_TAG-n$k
record=$CLUSTER_DIR/slowed-n$k

lift() {
  [ -d "$cg" ] || { rm -f "$record"; return 0; }
  local p i
  for ((i = 0; i < 50; i++)); do
    while read -r p; do [ -z "$p" ] || echo "$p" > "$root/cgroup.procs" 2>/dev/null || true; done < "$cg/cgroup.procs"
    rmdir "$cg" 2>/dev/null && break
    sleep 0.1
  done
  [ ! -d "$cg" ] || { echo "${0##*/}: could not remove $cg" >&2; return 1; }
  rm -f "$record"
}
if [ "$spec" = off ]; then lift; echo "$node: CPU not limited"; exit 0; fi

pid=$(cat "$CLUSTER_DIR/pids/slurmd-n$k" 2>/dev/null) || cluster_die "no slurmd PID of $node"
cl_pid_is "$pid" slurmd || cluster_die "$node's slurmd ($pid) is not running"
mkdir -p "$cg"
echo "$cg" > "$record"
period=100000
quota=$(awk -v c="$spec" -v p=$period 'BEGIN { printf "%d", c * p }')
if [ "$version" = 2 ]; then
  grep -qw cpu "$root/cgroup.subtree_control" || echo +cpu > "$root/cgroup.subtree_control"
  echo "$quota $period" > "$cg/cpu.max"
else
  echo "$period" > "$cg/cpu.cfs_period_us"
  echo "$quota" > "$cg/cpu.cfs_quota_us"
fi
# slurmd and what it runs now; what it starts later is born in the cgroup.
for p in $pid $(pgrep -P "$pid" 2>/dev/null); do echo "$p" > "$cg/cgroup.procs"; done
echo "$node: at most $spec CPU ($quota us per $period us, cgroup v$version $cg)"
