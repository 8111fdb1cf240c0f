// hpcnn-blas --sweep noise: operating-system noise on a node, measured the way the fixed-work-quantum
// benchmarks (FWQ, FTQ) do it: every thread times the same small unit of work many times over, and
// the distribution of those times is the noise. A quiet core runs every quantum in the same time; a
// stray daemon, a throttled CPU quota, interrupts or a co-scheduled job show as quanta that took
// longer, on the node that has them. The point's headline is delivered, like every other: the
// quanta's work over their wall time (gflops, each quantum the slowest thread's), beside its median
// pace (gflops_median) and what the stalls took (stall_share).
#pragma once

#include <mpi.h>

#include "results/result_file.hpp"

namespace hpcnn {

struct NoiseProbe {
  int threads = 1;       // threads of each rank, each timing its own quanta
  int iters = 0;         // quanta each thread times at least
  int warmup = 0;        // untimed quanta first
  double min_time = 0;   // --min-time: at least this many seconds of quanta
};

// The fixed work quantum: a chain of dependent multiply-adds, no memory traffic, the same length on
// every call (about 0.1 ms on a 3 GHz core).
inline constexpr long kQuantumSteps = 100000;
inline constexpr double kQuantumFlops = 2.0 * kQuantumSteps;

// Every rank's threads time their quanta, starting together; rank 0's record has the figures and
// the array quantum_time_s [ranks][quanta]: per quantum the slowest thread of that rank (a node's
// noise shows in its row, and the file holds one series per rank however many cores it has).
// Collective over comm.
ResultPoint noise_point(const NoiseProbe& probe, MPI_Comm comm);

}  // namespace hpcnn
