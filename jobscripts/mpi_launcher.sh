# shellcheck shell=bash
# Sourced by common.sh and by the tests (tests/script_lib.sh): which MPI a launcher belongs to,
# and the options that differ between them, so that the job scripts and the tests run with Open
# MPI's mpirun and with the Hydra launcher of MPICH (mpiexec.mpich; Intel MPI's and MVAPICH's are
# Hydra too) alike. The launcher must belong to the MPI the executables were built with:
# configure finds it (MPIEXEC in the Makefile), and CTest hands it to the tests as HPCNN_MPIEXEC.

# mpi_launcher_kind LAUNCHER: prints openmpi, hydra or srun (Slurm's); unknown when --version says
# neither (it is then given Open MPI's options, the style of most other mpiruns).
mpi_launcher_kind() {
  case "${1##*/}" in srun) echo srun; return ;; esac
  case "$("$1" --version 2>&1 </dev/null)" in
    *"Open MPI"*|*OpenRTE*) echo openmpi ;;
    *HYDRA*|*"Intel(R) MPI"*) echo hydra ;;
    *) echo unknown ;;
  esac
}

# mpi_oversubscribe_opts KIND: the options that let the launcher start more ranks than this
# machine has cores (Hydra does so by itself).
mpi_oversubscribe_opts() {
  case "$1" in hydra|srun) ;; *) echo --oversubscribe ;; esac
}

# mpi_env_opts KIND NAME...: the options that hand the named environment variables to ranks on
# other hosts (Hydra hands over the whole environment by itself; Open MPI does only on this one).
mpi_env_opts() {
  local kind=$1 name
  shift
  case "$kind" in hydra|srun) return ;; esac
  for name in "$@"; do printf '%s\n' -x "$name"; done
}

# mpi_hostfile_opts KIND FILE: the option naming a host file; mpi_hostfile_line KIND HOST SLOTS:
# one host of such a file, with room for SLOTS ranks.
mpi_hostfile_opts() {
  case "$1" in hydra) printf '%s\n' -f "$2" ;; *) printf '%s\n' --hostfile "$2" ;; esac
}
mpi_hostfile_line() {
  case "$1" in hydra) echo "$2:$3" ;; *) echo "$2 slots=$3" ;; esac
}

# mpi_unbound_opts KIND: the options that leave a rank's threads free on every core of its node (a
# launcher binds one rank to one core by default).
mpi_unbound_opts() {
  case "$1" in hydra) printf '%s\n' -bind-to none ;; srun) ;; *) printf '%s\n' --bind-to none ;; esac
}
