# shellcheck shell=bash
# Sourced by every job script: where the executables are, how to launch them, and what to do when
# Slurm asks the job to stop. A job script finds this file next to itself, or, under sbatch (which
# runs a spooled copy of the script), next to the script that was submitted.
#   HPCNN_BIN     folder with the hpcnn-* executables (default: the build tree this jobscripts/
#                 folder is in; in an install (PREFIX/share/hpcnn/jobscripts) PREFIX/bin; else
#                 the one $PATH finds, as with `module load hpcnn`)
#   HPCNN_LAUNCH  launcher. For `run`: the whole prefix; default "srun" inside a Slurm allocation,
#                 else "mpirun -np ${NP:-1}". For `run_on NODES RANKS`: its first word picks the
#                 style, srun (PMIx: srun --mpi=pmix) or mpirun (inside an allocation too), and the
#                 other words are that launcher's options; the counts come from run_on.
#   HOSTFILE      mpirun's host file outside Slurm (inside, the allocation's nodes are used)
#   HPCNN_MPIRUN  the mpirun of the defaults above (default: mpirun; mpiexec.mpich for a build
#                 with Debian's MPICH: the launcher must be of the MPI the executables use)
#   RUN_ID        name of the job's runs: step K of the script runs with --run-id RUN_ID-K --resume,
#                 so that a requeued job skips every point it completed (default: $SLURM_JOB_ID;
#                 outside Slurm none)
#   HPCNN_SESSION a label the result files of one session record (an acceptance night: its rounds
#                 are one run for hpcnn-summary --compare and --trend); passed on to every rank
#   OUT           result folder (each script's default: results/<experiment>, relative to the
#                 folder the job was submitted from). Every node writes there: it must be on a
#                 file system all nodes see.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=jobscripts/mpi_launcher.sh
source "$here/mpi_launcher.sh"
if [ -z "${HPCNN_BIN:-}" ]; then
  if [ -x "$here/../hpcnn-train" ]; then HPCNN_BIN="$here/.."
  elif [ -x "$here/../../../bin/hpcnn-train" ]; then HPCNN_BIN="$here/../../../bin"
  elif command -v hpcnn-train >/dev/null; then HPCNN_BIN=$(dirname "$(command -v hpcnn-train)")
  else echo "${0##*/}: no hpcnn-train in $(cd "$here/.." && pwd), $(cd "$here/../../.." && pwd)/bin nor on PATH: set HPCNN_BIN" >&2; exit 1
  fi
fi
HPCNN_BIN=$(cd "$HPCNN_BIN" && pwd)
#   HPCNN_WHOLE_NODE=1  one process that may use every core of the node (library thread sweeps):
#                 the threads must not be confined to the one core a launcher binds a single rank
#                 to by default, which would also change the libraries' "default" thread count.
read -ra launch_words <<<"${HPCNN_LAUNCH:-}"   # what the user asked for, before the default below
if [ -z "${HPCNN_LAUNCH+set}" ]; then
  if [ -n "${HPCNN_WHOLE_NODE:-}" ]; then
    if [ -n "${SLURM_JOB_ID:-}" ]; then
      HPCNN_LAUNCH="srun --nodes=1 --ntasks=1 --cpus-per-task=${SLURM_CPUS_ON_NODE:-1} --cpu-bind=none"
    else
      HPCNN_LAUNCH="${HPCNN_MPIRUN:-mpirun} -np 1 --bind-to none"
    fi
  elif [ -n "${SLURM_JOB_ID:-}" ]; then HPCNN_LAUNCH="srun"; else HPCNN_LAUNCH="${HPCNN_MPIRUN:-mpirun} -np ${NP:-1}"; fi
fi
# Threads: all cores of a node unless told (THREADS=1,2,... sweeps).
THREADS=${THREADS:-$(nproc)}
RUN_ID=${RUN_ID-${SLURM_JOB_ID:-}}
if [ -n "${SLURM_RESTART_COUNT:-}" ] && [ "${SLURM_RESTART_COUNT}" != 0 ]; then
  echo "job $SLURM_JOB_ID restarted ($SLURM_RESTART_COUNT): steps resume run $RUN_ID-K, completed points are skipped"
fi

# ---- stopping: preemption, time limit, requeue ---------------------------------------------------
# USR1 (sbatch --signal=B:USR1@T before the time limit, or scancel --batch --signal=USR1) reaches
# this shell only: it is passed on to the running step, whose ranks stop after the current
# iteration or point, keep what they completed and exit 75; the job then requeues itself
# (scontrol requeue) and its next start resumes (RUN_ID). TERM and INT reach the steps from Slurm
# or the terminal themselves (a second signal would make them exit at once): they are only noted,
# and a step that ends with 75 after them ends the job with 75, not requeued.
step_pid=""
stop_signal=""
on_stop() {
  stop_signal=$1
  echo "${0##*/}: SIG$1 received${step_pid:+, stopping the running step}" >&2
  if [ "$1" = USR1 ] && [ -n "$step_pid" ]; then kill -USR1 "$step_pid" 2>/dev/null || true; fi
}
trap 'on_stop USR1' USR1
trap 'on_stop TERM' TERM
trap 'on_stop INT' INT
step_hostfile=""
trap 'rm -f "${step_hostfile:-}"' EXIT
requeue_or_stop() {  # after a stop: requeue a Slurm job that was asked to stop by USR1, else exit 75
  if [ "$stop_signal" = USR1 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
    echo "${0##*/}: stopped; requeueing job $SLURM_JOB_ID (it resumes run ${RUN_ID:-?})" >&2
    scontrol requeue "$SLURM_JOB_ID" || echo "${0##*/}: scontrol requeue $SLURM_JOB_ID failed" >&2
  else
    echo "${0##*/}: stopped (exit 75); rerun with RUN_ID=${RUN_ID:-<id>} to resume" >&2
  fi
  exit 75
}
# step CMD...: run one step in the background (so that this shell's traps run while it does) and
# return its status; exit 75 (after requeueing, see above) when the step was stopped.
step_no=0
step() {
  [ -z "$stop_signal" ] || requeue_or_stop
  "$@" &
  step_pid=$!
  local status=0
  while :; do
    wait "$step_pid" && status=0 || status=$?
    kill -0 "$step_pid" 2>/dev/null || break   # else a trap interrupted the wait
  done
  step_pid=""
  if [ "$status" = 75 ] || { [ -n "$stop_signal" ] && [ "$status" != 0 ]; }; then requeue_or_stop; fi
  [ "$status" = 0 ] || echo "${0##*/}: step exited $status: $*" >&2
  return "$status"
}
# The run's name for the next step that writes results (none for --preflight).
run_id_args=()
next_run_id() {
  run_id_args=()
  local a
  for a in "$@"; do [ "$a" = --preflight ] && return 0; done
  step_no=$((step_no + 1))
  [ -z "$RUN_ID" ] || run_id_args=(--run-id "$RUN_ID-$step_no" --resume)
}

# ---- launching -----------------------------------------------------------------------------------
# run CMD...: CMD under the $HPCNN_LAUNCH prefix (one rank, or what the prefix says).
run() {
  next_run_id "$@"
  echo "+ $HPCNN_LAUNCH $* ${run_id_args[*]}"
  step $HPCNN_LAUNCH "$@" "${run_id_args[@]}"
}

node_cores() { echo "${SLURM_CPUS_ON_NODE:-$(nproc)}"; }

# Ranks x threads must not oversubscribe a node's cores (a LeNet-5 iteration went from ms to
# 0.6 s): with several ranks per node and no OMP_NUM_THREADS, each rank gets cores/ranks threads
# for this step; otherwise a warning, and MPI yields the core while it waits.
step_threads_env() {  # step_threads_env RANKS_PER_NODE: prints NAME=VALUE words for the step
  local per_node=$1 cores threads
  cores=$(node_cores)
  if [ -z "${OMP_NUM_THREADS:-}" ] && [ "$per_node" -gt 1 ]; then
    threads=$((cores / per_node)); [ "$threads" -ge 1 ] || threads=1
    echo "OMP_NUM_THREADS=$threads"
    echo "(threads: $per_node ranks per node on $cores cores: OMP_NUM_THREADS=$threads per rank)" >&2
  else
    threads=${OMP_NUM_THREADS:-1}
  fi
  threads=${threads%%,*}
  if [ $((per_node * threads)) -gt "$cores" ]; then
    echo "${0##*/}: warning: $per_node ranks x $threads threads per node > $cores cores: timings will suffer" >&2
    [ -n "${OMPI_MCA_mpi_yield_when_idle:-}" ] || echo "OMPI_MCA_mpi_yield_when_idle=1"
  fi
}

# run_on NODES RANKS CMD...: CMD as RANKS ranks spread over NODES nodes of the allocation (srun or
# mpirun, see HPCNN_LAUNCH); outside Slurm, RANKS ranks on this machine or $HOSTFILE's hosts.
# STEP_NODELIST (comma-separated host names, as many as NODES) names the nodes instead of the
# allocation's or host file's first NODES: a wave of nodes (acceptance.sh). STEP_WHOLE_NODE=1: one
# rank per node whose threads may use every core of its node (not bound to one). STEP_OVERLAP=1
# (srun): the step may share the allocation's CPUs with other steps (srun --overlap): after a node
# died, Slurm can hold the CPUs of a step that ran on it and on live nodes until it hears from the
# dead one, and a later step on those live nodes would wait for them.
run_on() {
  local nodes=$1 ranks=$2 style per_node hostfile="" status=0
  shift 2
  [[ "$nodes" =~ ^[1-9][0-9]*$ && "$ranks" =~ ^[1-9][0-9]*$ ]] || { echo "run_on: bad node or rank count '$nodes' '$ranks'" >&2; exit 2; }
  if [ -n "${SLURM_JOB_ID:-}" ] && [ "$nodes" -gt "${SLURM_JOB_NUM_NODES:-1}" ]; then
    echo "${0##*/}: this step needs $nodes nodes, the allocation has ${SLURM_JOB_NUM_NODES:-1} (sbatch --nodes=$nodes, or fewer NODES)" >&2
    exit 1
  fi
  local words=("${launch_words[@]}")
  if [ ${#words[@]} = 0 ]; then
    if [ -n "${SLURM_JOB_ID:-}" ]; then words=(srun); else words=("${HPCNN_MPIRUN:-mpirun}"); fi
  fi
  case "${words[0]##*/}" in
    srun) style=srun ;;
    mpirun|mpiexec|orterun|mpirun.*|mpiexec.*) style=mpirun ;;
    *) echo "${0##*/}: HPCNN_LAUNCH='${words[*]}': run_on knows srun and mpirun" >&2; exit 2 ;;
  esac
  # Open MPI's or Hydra's (MPICH) options, whichever MPI the mpirun is of.
  local kind=srun
  [ $style = srun ] || kind=$(mpi_launcher_kind "${words[0]}")
  # Ranks per node: known inside an allocation and on this machine alone, not from a host file.
  per_node=$(((ranks + nodes - 1) / nodes))
  [ -n "${SLURM_JOB_ID:-}" ] || per_node=$ranks
  [ -n "${SLURM_JOB_ID:-}" ] || [ -z "${HOSTFILE:-}${STEP_NODELIST:-}" ] || per_node=1
  local envs=() e
  mapfile -t envs < <(step_threads_env "$per_node")
  # The session label rank 0 records (hpcnn-summary's runs), wherever rank 0 runs.
  [ -z "${HPCNN_SESSION:-}" ] || envs+=("HPCNN_SESSION=$HPCNN_SESSION")
  local cmd=("${words[@]}")
  # Open MPI's mpirun passes its environment on to remote ranks only when told.
  if [ $style = mpirun ]; then
    local names=()
    for e in "${envs[@]}"; do names+=("${e%%=*}"); done
    mapfile -t -O ${#cmd[@]} cmd < <(mpi_env_opts "$kind" "${names[@]}")
  fi
  if [ $style = srun ]; then
    cmd+=(-N "$nodes" -n "$ranks" --kill-on-bad-exit=1)
    [ -z "${STEP_NODELIST:-}" ] || cmd+=(-w "$STEP_NODELIST")
    [ -z "${STEP_WHOLE_NODE:-}" ] || cmd+=(--ntasks-per-node=1 --cpus-per-task="$(node_cores)" --cpu-bind=none)
    [ -z "${STEP_OVERLAP:-}" ] || cmd+=(--overlap)
  elif [ -n "${SLURM_JOB_ID:-}${STEP_NODELIST:-}" ]; then
    # The first NODES nodes of the allocation (or STEP_NODELIST's), RANKS/NODES slots each (rounded up).
    hostfile=$(mktemp "${TMPDIR:-/tmp}/hpcnn-hosts.XXXXXX")
    step_hostfile=$hostfile   # removed on exit too: a stopped step ends the script (exit 75)
    local h
    for h in $(if [ -n "${STEP_NODELIST:-}" ]; then tr ',' '\n' <<<"$STEP_NODELIST"; else scontrol show hostnames "$SLURM_JOB_NODELIST"; fi | head -n "$nodes"); do
      mpi_hostfile_line "$kind" "$h" "$per_node"
    done > "$hostfile"
    cmd+=(-np "$ranks")
    mapfile -t -O ${#cmd[@]} cmd < <(mpi_hostfile_opts "$kind" "$hostfile")
  else
    cmd+=(-np "$ranks")
    mapfile -t -O ${#cmd[@]} cmd < <(mpi_oversubscribe_opts "$kind"; [ -z "${HOSTFILE:-}" ] || mpi_hostfile_opts "$kind" "$HOSTFILE")
  fi
  [ $style = srun ] || [ -z "${STEP_WHOLE_NODE:-}" ] || mapfile -t -O ${#cmd[@]} cmd < <(mpi_unbound_opts "$kind")
  next_run_id "$@"
  echo "+ ${envs[*]} ${cmd[*]} $* ${run_id_args[*]}"
  step env "${envs[@]}" "${cmd[@]}" "$@" "${run_id_args[@]}" || status=$?
  [ -z "$hostfile" ] || rm -f "$hostfile"
  step_hostfile=""
  return "$status"
}

# preflight NODES RANKS [OPTIONS]: every rank's host, local rank, GPU and backend, before timing.
preflight() {
  local nodes=$1 ranks=$2
  shift 2
  run_on "$nodes" "$ranks" "$HPCNN_BIN/hpcnn-scale" --preflight "$@"
}

# The largest number in a list of numbers (NODES="1 2 4" -> 4).
largest() { printf '%s\n' "$@" | sort -n | tail -n 1; }

# CPU_PRECISIONS: the --precision list of dnnl runs: fp32, and bf16 where this CPU has a bf16
# kernel (hpcnn-train --list says which).
cpu_precisions() {
  "$HPCNN_BIN/hpcnn-train" --list 2>/dev/null | grep -q -- '--precision fp32,bf16 on this CPU' && echo fp32,bf16 || echo fp32
}
# The same for inference: int8 added where the dnnl backend of this build has it.
cpu_infer_precisions() {
  local p
  p=$(cpu_precisions)
  "$HPCNN_BIN/hpcnn-infer" --list 2>/dev/null | grep -q -- '^  dnnl .*int8 for inference' && p=$p,int8
  echo "$p"
}

# GPU part of an experiment: runs when this build has the cuda backend and the node a GPU
# (GPU=0 skips it, GPU=1 insists). PRECISIONS: the --precision list of GPU runs.
PRECISIONS=${PRECISIONS:-fp32,tf32,bf16}
have_gpu() {
  [ "${GPU:-auto}" = 0 ] && return 1
  if "$HPCNN_BIN/hpcnn-train" --list | grep -q '^  cuda ' && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    return 0
  fi
  if [ "${GPU:-auto}" = 1 ]; then echo "GPU=1 but this build has no cuda backend or the node no GPU" >&2; exit 1; fi
  echo "(no cuda backend or no GPU here: GPU part skipped)"
  return 1
}
