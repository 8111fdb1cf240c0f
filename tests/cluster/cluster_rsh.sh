#!/usr/bin/env bash
# Open MPI's rsh agent for the test cluster (OMPI_MCA_plm_rsh_agent), what ssh is on a real one:
#   cluster_rsh.sh [OPTIONS] nK COMMAND...
# runs COMMAND (one shell command line, as ssh runs it) on host nK of the cluster in $CLUSTER_DIR:
# in nK's network namespace, with its host name and /etc/hosts, as its slurmd runs (cluster_lib.sh
# cl_exec_on_host). It first reaches for nK over the network as ssh would (a TCP connection to its
# port 22, which nobody serves: refused means the host is there); a host whose link is down gets
# ssh's answer, "No route to host", exit 255. mpirun without Slurm then meets a lost node as it
# would on a cluster (tests/cluster/cluster_resilience.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster_lib.sh"
while [[ "${1:-}" == -* ]]; do shift; done  # ssh-style options Open MPI may add
host=${1:?usage: cluster_rsh.sh nK COMMAND...}
shift
cluster_host "${CLUSTER_DIR:?cluster_rsh.sh needs CLUSTER_DIR, the state folder of the cluster}" "$host"
answer=$(timeout 3 bash -c "exec 3<>/dev/tcp/$CL_SUBNET.$k/22" 2>&1)
if [[ "$answer" != *refused* ]]; then
  echo "ssh: connect to host $host port 22: No route to host" >&2
  exit 255
fi
cl_exec_on_host "$k" bash -c "$*"
