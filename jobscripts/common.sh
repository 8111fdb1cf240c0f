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
