#!/usr/bin/env bash
# Bring up a virtual Slurm cluster on this machine (as root): N hosts as network namespaces, each
# with its own address, host name and slurmd, joined by veth links into a bridge on a private /24;
# munged and slurmctld on the machine itself. See docs/CLUSTER.md.
#
#   tests/cluster/cluster_up.sh [STATE_DIR]      (default: $CLUSTER_DIR, else /tmp/hpcnn-cluster)
#   export SLURM_CONF=STATE_DIR/etc/slurm.conf   then sinfo, sbatch, srun, squeue talk to it
#   tests/cluster/cluster_down.sh STATE_DIR      stops it and removes every link and namespace
#
# Environment:
#   CLUSTER_NODES   number of hosts n1..nN (default 4)
#   CLUSTER_CPUS    CPUs each host declares (default: this machine's cores; the hosts share them)
#   CLUSTER_SUBNET  first three octets of the private /24 (default 10.231.X, X from the folder)
#   CLUSTER_SHAPE   links to shape at start, e.g. "n2=1gbit n3=500mbit:2ms" (tests/cluster/
#                   cluster_shape.sh; a delay needs netem in the kernel)
#   CLUSTER_TIMEOUT seconds to wait for each daemon (default 30)
#
# On any failure it takes down what it started (cluster_down.sh) and exits 1; a machine that
# cannot host the cluster (not root, no network namespaces, no Slurm) is reported with exit 77.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_lib.sh"

skip() { echo "${0##*/}: cannot run a cluster here: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root (network namespaces and slurmd need root)"
for tool in ip tc nsenter unshare munged slurmctld slurmd sinfo scontrol sbatch; do
  command -v "$tool" >/dev/null || skip "no $tool (apt-get install slurm-wlm munge iproute2 util-linux)"
done
probe=hpcnn-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
ip netns del "$probe"

state=${1:-${CLUSTER_DIR:-/tmp/hpcnn-cluster}}
mkdir -p "$state"
cluster_names "$state"
[ ! -e "$CL_ENV" ] || cluster_die "$CLUSTER_DIR already holds a cluster (cluster_down.sh $CLUSTER_DIR first)"

nodes=${CLUSTER_NODES:-4}
[[ "$nodes" =~ ^[1-9][0-9]?$ ]] && [ "$nodes" -le 64 ] || cluster_die "CLUSTER_NODES=$nodes: want 1 to 64"
cpus=${CLUSTER_CPUS:-$(nproc)}
[[ "$cpus" =~ ^[1-9][0-9]*$ ]] || cluster_die "CLUSTER_CPUS=$cpus: want a positive integer"
timeout=${CLUSTER_TIMEOUT:-30}
subnet=${CLUSTER_SUBNET:-10.231.$((16#${CL_TAG:0:2}))}
[[ "$subnet" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || cluster_die "CLUSTER_SUBNET=$subnet: want three octets, e.g. 10.231.7"
if ip -4 route show | grep -q "^$subnet\."; then cluster_die "subnet $subnet.0/24 is already routed here (set CLUSTER_SUBNET)"; fi
# slurmctld listens on every address of the machine: a port of its own per cluster.
port=$((20000 + 16#$CL_TAG % 20000))
if ss -Hltn "sport = :$port" | grep -q .; then cluster_die "port $port is in use (another slurmctld?)"; fi
controller=$(hostname -s)

# From here on a failure takes down what was started so far.
cat > "$CL_ENV" <<EOF
CL_NODES=$nodes
CL_SUBNET=$subnet
CL_PORT=$port
EOF
trap 'status=$?; if [ $status != 0 ]; then echo "${0##*/}: failed; taking down what was started (logs were in $CLUSTER_DIR/log)" >&2; "$here/cluster_down.sh" "$CLUSTER_DIR" >&2 || true; fi' EXIT
mkdir -p "$CL_PIDS" "$CLUSTER_DIR"/{etc,log,munge,ctld,spool,tmp,run}
chmod 700 "$CLUSTER_DIR/munge"
for ((k = 1; k <= nodes; k++)); do mkdir -p "$CLUSTER_DIR/spool/n$k" "$CLUSTER_DIR/tmp/n$k"; done
chmod 1777 "$CLUSTER_DIR"/tmp/n*

# ---- network: bridge (the switch) and one namespace per host ----------------------------------
ip link add "$CL_BRIDGE" type bridge
ip addr add "$subnet.254/24" dev "$CL_BRIDGE"
ip link set "$CL_BRIDGE" up
for ((k = 1; k <= nodes; k++)); do
  ns=$(cl_netns "$k")
  ip netns add "$ns"
  ip link add "$(cl_host_veth "$k")" type veth peer name "$(cl_node_veth "$k")" netns "$ns"
  ip link set "$(cl_host_veth "$k")" master "$CL_BRIDGE" up
  ip -n "$ns" addr add "$subnet.$k/24" dev "$(cl_node_veth "$k")"
  ip -n "$ns" link set "$(cl_node_veth "$k")" up
  ip -n "$ns" link set lo up
done
# Host names: every host resolves every other by name (hostfiles, Open MPI's daemons).
{
  echo "127.0.0.1 localhost"
  echo "$subnet.254 $controller"
  for ((k = 1; k <= nodes; k++)); do echo "$subnet.$k n$k"; done
} > "$CLUSTER_DIR/etc/hosts"

# ---- munge: its own key and socket --------------------------------------------------------------
head -c 1024 /dev/urandom > "$CLUSTER_DIR/munge/munge.key"
chmod 400 "$CLUSTER_DIR/munge/munge.key"
socket=$CLUSTER_DIR/munge/munge.socket
munged --foreground --force --socket="$socket" --key-file="$CLUSTER_DIR/munge/munge.key" \
  --pid-file="$CLUSTER_DIR/munge/munged.pid" --seed-file="$CLUSTER_DIR/munge/munged.seed" \
  --log-file="$CLUSTER_DIR/log/munged.log" </dev/null >>"$CLUSTER_DIR/log/munged.out" 2>&1 &
echo $! > "$CL_PIDS/munged"
wait_for "$timeout" "munged's socket" test -S "$socket"

# ---- Slurm --------------------------------------------------------------------------------------
{
  cat <<EOF
# Written by tests/cluster/cluster_up.sh: a virtual cluster of $nodes hosts on $subnet.0/24.
ClusterName=hpcnn$CL_TAG
SlurmctldHost=$controller($subnet.254)
SlurmctldPort=$port
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire=5 (the minimum): a requeued job starts again about 6 s after it ends.
AuthInfo=socket=$socket,cred_expire=5
StateSaveLocation=$CLUSTER_DIR/ctld
SlurmdSpoolDir=$CLUSTER_DIR/spool/%n
SlurmctldPidFile=$CLUSTER_DIR/run/slurmctld.pid
SlurmdPidFile=$CLUSTER_DIR/run/slurmd-%n.pid
SlurmctldLogFile=$CLUSTER_DIR/log/slurmctld.log
SlurmdLogFile=$CLUSTER_DIR/log/slurmd-%n.log
# Every host its own /tmp for jobs: PMIx keeps per-node files there, which must not collide.
TmpFS=$CLUSTER_DIR/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Debian's Open MPI speaks PMIx only (no PMI-1/2).
MpiDefault=pmix
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=2
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=10
MessageTimeout=5
KillWait=5
InactiveLimit=0
MinJobAge=300
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PartitionName=hosts Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  for ((k = 1; k <= nodes; k++)); do
    echo "NodeName=n$k NodeAddr=$subnet.$k CPUs=$cpus State=UNKNOWN"
  done
} > "$CL_CONF"
cluster_client_env

slurmctld -D -f "$CL_CONF" </dev/null >>"$CLUSTER_DIR/log/slurmctld.out" 2>&1 &
echo $! > "$CL_PIDS/slurmctld"
wait_for "$timeout" "slurmctld to answer (log: $CLUSTER_DIR/log/slurmctld.log)" scontrol ping

for ((k = 1; k <= nodes; k++)); do cl_start_slurmd "$k"; done
all_idle() {
  local states
  states=$(sinfo -h -N -o '%t' 2>/dev/null) || return 1
  [ "$(grep -c '^idle$' <<<"$states")" = "$nodes" ]
}
wait_for "$timeout" "all $nodes nodes idle in sinfo (logs: $CLUSTER_DIR/log/slurmd-n*.log)" all_idle

for spec in ${CLUSTER_SHAPE:-}; do "$here/cluster_shape.sh" "$CLUSTER_DIR" "${spec%%=*}" "${spec#*=}"; done
trap - EXIT
echo "cluster up: $nodes hosts n1-n$nodes on $subnet.0/24, state in $CLUSTER_DIR"
echo "  export SLURM_CONF=$CL_CONF"
