# shellcheck shell=bash
# Sourced by the cluster tests (label `cluster`): skip (exit 77, saying why) where no cluster can
# run; bring one up in a scratch folder under /tmp (which every "host" sees: they are network
# namespaces of this machine) and take it down on every exit path; submit jobs and wait for them,
# every wait bounded.
set -u
src=${HPCNN_SRCDIR:?} build=${HPCNN_BUILDDIR:?}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: network namespaces and slurmd need root"
for tool in ip tc nsenter unshare munged slurmctld slurmd sbatch squeue scontrol h5dump; do
  command -v "$tool" >/dev/null || skip "no $tool (./quickstart check installs slurm-wlm, munge, iproute2 as root)"
done
ip netns add "hpcnn-probe-$$" 2>/dev/null || skip "cannot create a network namespace"
ip netns del "hpcnn-probe-$$"

work=$(mktemp -d /tmp/hpcnn-cluster-test.XXXXXX)
cluster=$work/cluster
fail=0
take_down() {
  if [ -e "$cluster/cluster.env" ]; then
    if [ "$fail" != 0 ]; then  # what the daemons said, for the failure's report
      echo "---- slurmctld.log (tail)"; tail -n 20 "$cluster/log/slurmctld.log" 2>/dev/null
    fi
    "$src/tests/cluster/cluster_down.sh" "$cluster" >/dev/null || echo "FAIL: cluster_down.sh"
  fi
  if [ -n "${CLUSTER_TEST_KEEP:-}" ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap take_down EXIT
trap 'exit 1' INT TERM

# CLUSTER_TEST_KEEP=1 keeps the scratch folder (job outputs, results, logs, core files).
[ -z "${CLUSTER_TEST_KEEP:-}" ] || ulimit -c unlimited
# cluster_start NODES: bring up NODES hosts; the clients here and every job talk to it.
cluster_start() {
  local status=0
  CLUSTER_NODES=$1 "$src/tests/cluster/cluster_up.sh" "$cluster" || status=$?
  [ "$status" = 77 ] && skip "cluster_up.sh could not run here"
  [ "$status" = 0 ] || { echo "FAIL: cluster_up.sh exited $status"; exit 1; }
  source "$cluster/cluster.env"
  export SLURM_CONF=$cluster/etc/slurm.conf
  # What sbatch hands every job (its environment is exported): the executables of this build, one
  # thread per rank and MPI yielding its core (4-5 hosts share this machine's cores), MPI on the
  # cluster's subnet.
  export HPCNN_BIN=$build OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
  export OMPI_MCA_btl_tcp_if_include=$CL_SUBNET.0/24 OMPI_MCA_oob_tcp_if_include=$CL_SUBNET.0/24
}

check() {  # check DESCRIPTION CMD...: record a failure naming DESCRIPTION when CMD fails
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; fail=1; fi
}

# submit DIR [VAR=VALUE...] SBATCH_ARGS... SCRIPT: submit from DIR (results land relative to it)
# with VAR=VALUE in the job's environment (sbatch exports its whole environment: --export=VAR=A,B
# would split a list at its commas); prints the job id.
submit() {
  local dir=$1 vars=()
  shift
  while [[ "${1:-}" =~ ^[A-Z_][A-Z0-9_]*= ]]; do vars+=("$1"); shift; done
  mkdir -p "$dir"
  (cd "$dir" && env "${vars[@]}" sbatch --parsable "$@")
}
# wait_job ID SECONDS: until the job has left the queue; on timeout cancel it and fail.
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
wait_job() {
  local id=$1 limit=$2 end=$((SECONDS + $2))
  while squeue -h -j "$id" 2>/dev/null | grep -q .; do
    if [ "$SECONDS" -ge "$end" ]; then
      echo "FAIL: job $id still $(job_state "$id") after $limit s: cancelled"; scancel "$id"; fail=1; return 1
    fi
    sleep 0.5
  done
}
job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# hosts FILE: the host of every rank, as /provenance/hosts lists them, one per line
hosts() { h5dump -d /provenance/hosts "$1" | sed -n 's/^ *([0-9]*): //p' | tr ',' '\n' | tr -d ' "' | grep .; }
# distinct_hosts FILE N: the file's N ranks ran on N different hosts, all of them cluster hosts
distinct_hosts() {
  local list
  list=$(hosts "$1") || return 1
  [ "$(wc -l <<<"$list")" = "$2" ] && [ "$(sort -u <<<"$list" | wc -l)" = "$2" ] &&
    ! grep -qv '^n[0-9]*$' <<<"$list" || { echo "  $1: hosts $(echo $list)"; return 1; }
}
# job_id_in FILE ID: the file's provenance names the Slurm job
job_id_in() { h5dump -a /provenance/job_id "$1" | grep -q "SLURM_JOB_ID=$2\""; }
# in_output FILE PATTERN: the job's output holds a line matching PATTERN (grep -E)
in_output() { grep -qE -- "$2" "$1" || { echo "  no line matching '$2' in $1"; return 1; }; }
