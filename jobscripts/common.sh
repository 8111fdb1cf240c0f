# Sourced by every job script: where the executables are and how to launch them.
#   HPCNN_BIN     folder with the hpcnn-* executables (default: the build tree or $PATH)
#   HPCNN_LAUNCH  launcher prefix; default "srun" inside a Slurm allocation, else "mpirun -np ${NP:-1}"
#   OUT           result folder (default results/<script name>)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${HPCNN_BIN:-}" ]; then
  if [ -x "$here/../hpcnn-train" ]; then HPCNN_BIN="$here/.."; else HPCNN_BIN=$(dirname "$(command -v hpcnn-train || echo ./hpcnn-train)"); fi
fi
#   HPCNN_WHOLE_NODE=1  one process that may use every core of the node (library thread sweeps):
#                 the threads must not be confined to the one core a launcher binds a single rank
#                 to by default, which would also change the libraries' "default" thread count.
if [ -z "${HPCNN_LAUNCH+set}" ]; then
  if [ -n "${HPCNN_WHOLE_NODE:-}" ]; then
    if [ -n "${SLURM_JOB_ID:-}" ]; then
      HPCNN_LAUNCH="srun --ntasks=1 --cpus-per-task=${SLURM_CPUS_ON_NODE:-1} --cpu-bind=none"
    else
      HPCNN_LAUNCH="mpirun -np 1 --bind-to none"
    fi
  elif [ -n "${SLURM_JOB_ID:-}" ]; then HPCNN_LAUNCH="srun"; else HPCNN_LAUNCH="mpirun -np ${NP:-1}"; fi
fi
# Threads: all cores of a node unless told (THREADS=1,2,... sweeps).
THREADS=${THREADS:-$(nproc)}
run() { echo "+ $HPCNN_LAUNCH $*"; $HPCNN_LAUNCH "$@"; }
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
