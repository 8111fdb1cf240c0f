// Test-only fault injection, so that the tests can stop, kill or crash one rank at a chosen moment
// as a node failure, the OOM killer, a segfault or a stopped process would (tests/rank_failure.sh):
//
//   HPCNN_TEST_FAULT=SIGNAL,PLACE,ITERATION,RANK
//     SIGNAL     kill (SIGKILL), stop (SIGSTOP: the test continues or kills the process), segv,
//                term (SIGTERM), usr1 (SIGUSR1): a time limit or preemption at a known step
//     PLACE      setup (a point's start), iteration (a training step's start), exchange (the
//                gradient exchange's wait), commit (a result file written, its temporary file
//                half-written: rank 0)
//     ITERATION  the training step (from 1, warm-up included) for iteration and exchange; for
//                commit, the process's Nth result-file commit (a run's journal commits a file per
//                point, then the run its result file); ignored for setup
//     RANK       the rank that receives it, as the launcher numbers them (OMPI_COMM_WORLD_RANK,
//                PMIX_RANK, PMI_RANK or SLURM_PROCID: MPI_COMM_WORLD's rank)
//
// Unset (always, outside the tests) it costs one branch on a cached flag.
#pragma once

namespace hpcnn {

// Sends the signal to this process when HPCNN_TEST_FAULT names this place, iteration and rank.
void inject_fault(const char* place, long iteration = 0);

}  // namespace hpcnn
