// Test-only fault injection, so that the tests can stop, kill or crash one rank at a chosen moment
// as a node failure, the OOM killer, a segfault or a stopped process would (tests/rank_failure.sh):
//
//   HPCNN_TEST_FAULT=SIGNAL,PLACE,ITERATION,RANK
//     SIGNAL     kill (SIGKILL), stop (SIGSTOP: the test continues or kills the process), segv,
//                term (SIGTERM), usr1 (SIGUSR1): a time limit or preemption at a known step
//     PLACE      setup (a point's start), iteration (a training step's start: its phase
//                "load"), exchange (the gradient exchange's wait: its phase "exchange wait"),
//                commit (a result file written, its temporary file half-written: rank 0; the
//                writer's phase "writing a result file"). These three are reached through the
//                phases the code marks (base/activity.hpp), not by calls of their own
//     ITERATION  the training step (from 1, warm-up included) for iteration and exchange; for
//                commit, the process's Nth result-file commit (a run's journal commits a file per
//                point, then the run its result file); ignored for setup
//     RANK       the rank that receives it, as the launcher numbers them (OMPI_COMM_WORLD_RANK,
//                PMIX_RANK, PMI_RANK or SLURM_PROCID: MPI_COMM_WORLD's rank)
//
// Unset (always, outside the tests) it costs one branch on a cached flag.
//
// Counted events, data damage and an abrupt exit, for the tests of resumption and checking:
//
//   HPCNN_TEST_KILL_AFTER_POINTS=N       rank 0 is killed (SIGKILL) once N points are in its run's
//                                        journal (tests/resume_sweep.sh), as the OOM killer would
//   HPCNN_TEST_KILL_AFTER_CHECKPOINTS=N  rank 0 is killed once it has written N training
//                                        checkpoints of hpcnn-train or hpcnn-scale --data
//                                        (tests/resume_training.sh)
//   HPCNN_TEST_EXIT_AT=RANK:ITERATION    that rank leaves (_exit, no MPI_Finalize) at the start of
//                                        that training step of hpcnn-scale, as a crashed node would
//   HPCNN_TEST_CORRUPT_ELEMENT=I         hpcnn-allreduce's result element I is damaged on the last
//   HPCNN_TEST_CORRUPT_SEND=I            rank (the send buffer's, --placement out), so the element
//                                        checks can be seen to fail
//
// A slowdown is never injected into a process: the acceptance tests slow a command from outside
// (bench/slow_node.sh, bench/slow_bin.sh), as nodes really get slow, so that no timed region holds
// a test's code.
#pragma once

#include <string>

namespace hpcnn {

// Every HPCNN_TEST_* variable set in this process ("HPCNN_TEST_EXIT_AT=1:5", several
// separated by "; "), empty when none: a result file records it (provenance fault_injection), so
// that no injected fault changes a figure without a trace.
std::string active_fault_injections();

// Sends the signal to this process when HPCNN_TEST_FAULT names this place, iteration and rank.
void inject_fault(const char* place, long iteration = 0);

// When HPCNN_TEST_FAULT names a place reached through a phase (iteration, exchange, commit), has
// activity tell it of every phase (activity::observe_phases), which injects the fault at that phase's
// start; does nothing otherwise. Called once at a program's start (harness/main_wrapper.cpp).
void arm_phase_faults();

// HPCNN_TEST_KILL_AFTER_<EVENTS> (EVENTS: POINTS or CHECKPOINTS): SIGKILL when `count` events
// have happened and the variable names that count.
void inject_kill_after(const char* events, long count);
// HPCNN_TEST_EXIT_AT: _exit(3) with one line on stderr when it names this rank and iteration.
void inject_exit_at(const char* program, int rank, int iteration);
// HPCNN_TEST_CORRUPT_<WHAT> (WHAT: ELEMENT or SEND): the index to damage, or -1 when unset.
long injected_corruption(const char* what);

}  // namespace hpcnn
