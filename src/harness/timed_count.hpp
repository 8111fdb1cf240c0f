// How many timed iterations a point runs under --min-time, for the suites that decide it up front
// from a few calls (hpcnn-allreduce, hpcnn-blas --sweep gemm), as OSU and Google Benchmark size
// their loops; the training loop decides it as it goes (training_loop.hpp).
#pragma once

#include <mpi.h>

namespace hpcnn {

// max(iters, ceil(min_time / per_call)), at most kMaxTimedIterations (training_loop.hpp), agreed
// over `comm` (the largest wins, so every rank times the same number of calls). Collective.
// min_time <= 0: iters, without communication.
int timed_count(int iters, double min_time, double per_call, MPI_Comm comm);

}  // namespace hpcnn
