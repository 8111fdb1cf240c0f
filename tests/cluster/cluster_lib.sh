# shellcheck shell=bash
# Sourced by cluster_up.sh, cluster_down.sh, cluster_shape.sh and the cluster tests: the names and
# paths of one virtual cluster, all derived from its state folder, so that every script finds
# what the others made.
#
#   CLUSTER_DIR   state folder (config, munge key, PIDs, logs, spool, per-node TmpFS); must be on
#                 a file system every "host" sees, which it is: the hosts are network namespaces
#                 of this machine.
#
# A cluster is named by a short tag (4 hex digits of the state folder's path), so that two
# clusters (say a developer's and a test's) can be up at once: namespaces hpcnn-TAG-nK, bridge
# hpcbTAG, host-side veth ends hpcvTAG-K (Linux allows 15 characters per link name).

cluster_die() { echo "${0##*/}: $*" >&2; exit 1; }

cluster_names() {  # cluster_names DIR: set the names of the cluster kept in DIR
  CLUSTER_DIR=$(cd "$1" && pwd) || cluster_die "no state folder $1"
  CL_TAG=$(printf '%s' "$CLUSTER_DIR" | md5sum | cut -c1-4)
  CL_BRIDGE=hpcb$CL_TAG
  CL_CONF=$CLUSTER_DIR/etc/slurm.conf
  CL_ENV=$CLUSTER_DIR/cluster.env
  CL_PIDS=$CLUSTER_DIR/pids
}
# cl_exec_on_host K PROGRAM ARGS...: becomes PROGRAM on host nK (exec: the PID stays): in its network
# namespace (nsenter, not `ip netns exec`, which remounts /sys so that slurmd cannot start its
# cgroup plugin), with its own host name (--uts) and its own /etc/hosts (--mount: a bind mount seen
# by the host's processes only). nsenter and unshare exec too.
cl_exec_on_host() {
  local k=$1
  shift
  exec nsenter --net="/run/netns/$(cl_netns "$k")" unshare --uts --mount --propagation private \
    bash -c 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' \
    "on-n$k" "n$k" "$CLUSTER_DIR/etc/hosts" "$@"
}
# cl_start_slurmd K: host nK's slurmd, in the background, its PID kept. (Also a test's way to bring
# back a host it killed.)
cl_start_slurmd() {
  (cl_exec_on_host "$1" slurmd -D -N "n$1" -f "$CL_CONF") </dev/null >>"$CLUSTER_DIR/log/slurmd-n$1.out" 2>&1 &
  echo $! > "$CL_PIDS/slurmd-n$1"
}
# cluster_host STATE_DIR nK: load the running cluster kept in STATE_DIR and set k to host nK's
# number; exit 1 without a cluster, 2 for a host it does not have.
cluster_host() {
  cluster_names "$1"
  [ -r "$CL_ENV" ] || cluster_die "no cluster in $CLUSTER_DIR"
  source "$CL_ENV"
  [[ "$2" =~ ^n([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le "$CL_NODES" ] ||
    { echo "${0##*/}: no host $2 (n1 to n$CL_NODES)" >&2; exit 2; }
  k=${BASH_REMATCH[1]}
}
cl_netns() { echo "hpcnn-$CL_TAG-n$1"; }    # namespace of node K
cl_host_veth() { echo "hpcv$CL_TAG-$1"; }   # bridge-side end of node K's link
cl_node_veth() { echo "eth0"; }             # node-side end, inside the namespace

# The environment a client (sbatch, squeue, srun) needs to talk to this cluster.
cluster_client_env() {
  export SLURM_CONF=$CL_CONF
}

# Is PID alive and running PROGRAM? (a PID file may outlive its process and the PID be reused)
cl_pid_is() {
  local pid=$1 prog=$2
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$prog"
}

# Stop one process we started (PID kept in $CL_PIDS/NAME) and wait for it: TERM, then KILL after
# a few seconds.
cl_stop_pid() {
  local name=$1 prog=$2 pid i
  pid=$(cat "$CL_PIDS/$name" 2>/dev/null) || return 0
  if cl_pid_is "$pid" "$prog"; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do cl_pid_is "$pid" "$prog" || break; sleep 0.1; done
    cl_pid_is "$pid" "$prog" && kill -KILL "$pid" 2>/dev/null
    for ((i = 0; i < 20; i++)); do cl_pid_is "$pid" "$prog" || break; sleep 0.1; done
  fi
  rm -f "$CL_PIDS/$name"
}

# wait_for SECONDS WHAT CMD...: poll CMD every 0.2 s until it succeeds; fail naming WHAT after
# SECONDS (every wait has a bound: a job sent to the wrong cluster would wait forever).
wait_for() {
  local limit=$1 what=$2 end
  shift 2
  end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || { echo "${0##*/}: timed out after ${limit} s waiting for $what" >&2; return 1; }
    sleep 0.2
  done
}

# Does this kernel have netem (delay emulation)? Tried on a throw-away dummy link.
cl_have_netem() {
  local probe=hpcprobe$$
  ip link add "$probe" type dummy 2>/dev/null || return 1
  local ok=1
  tc qdisc add dev "$probe" root netem delay 1ms 2>/dev/null && ok=0
  ip link del "$probe" 2>/dev/null
  return $ok
}
