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
// Collective over comm (MPI_COMM_NULL or one rank: this process alone): did any rank get one?
bool stop_requested_anywhere(MPI_Comm comm);
// The temporary result file a second signal removes before exiting ("" for none). The path is
// copied into a fixed buffer: the signal handler may only make async-signal-safe calls.
void set_partial_file(const char* path);

}  // namespace hpcnn
