#include "harness/timed_count.hpp"

#include <algorithm>
#include <cmath>

#include "harness/training_loop.hpp"

namespace hpcnn {

int timed_count(int iters, double min_time, double per_call, MPI_Comm comm) {
  if (min_time <= 0) return iters;
  const double wanted = per_call > 0 ? std::ceil(min_time / per_call) : static_cast<double>(kMaxTimedIterations);
  int count = static_cast<int>(std::clamp(wanted, static_cast<double>(iters), static_cast<double>(std::max(iters, kMaxTimedIterations))));
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_INT, MPI_MAX, comm);
  return count;
}

}  // namespace hpcnn
