// SIGTERM, SIGINT and SIGUSR1 (a batch system's time limit, Ctrl-C, `sbatch --signal=B:USR1@T`
// and preemption) ask a run to stop: the training loop and the suite runner stop every rank at
// the next iteration or point boundary together, the completed points are committed, and the run
// exits with kExitInterrupted so a job script can requeue it and resume. A second signal exits at
// once, removing the result file being written (the journal keeps the completed points).
#pragma once

#include <mpi.h>

namespace hpcnn {

// The documented exit status of a run stopped by a signal: resume it with --resume (EX_TEMPFAIL).
constexpr int kExitInterrupted = 75;

void install_stop_handlers();
// This process received a stop signal (0: none), and which.
int stop_signal();
// Why a run stops at the next boundary, the strongest first: a training's data file failed on some
// rank (data::StorageError, suites/epoch_driver.hpp), a stop signal, or nothing.
enum class StopCause { None = 0, Signal = 1, Storage = 2 };
// Collective over comm (MPI_COMM_NULL or one rank: this process alone): the strongest cause on any
// rank, this one's being a stop signal or `storage_failed`.
StopCause stop_cause_anywhere(MPI_Comm comm, bool storage_failed = false);
// Collective over comm: did any rank get a stop signal?
inline bool stop_requested_anywhere(MPI_Comm comm) { return stop_cause_anywhere(comm) != StopCause::None; }
// The temporary result file a second signal removes before exiting ("" for none). The path is
// copied into a fixed buffer: the signal handler may only make async-signal-safe calls.
void set_partial_file(const char* path);

}  // namespace hpcnn
