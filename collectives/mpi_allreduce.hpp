// The MPI library's own allreduce: MPI_Iallreduce per started operation, MPI_Allreduce for run().
#pragma once

#include <cmath>
#include <memory>

#include "collectives/allreduce.hpp"
#include "collectives/cost_model.hpp"

namespace hpcnn {

std::unique_ptr<Allreduce> make_mpi_allreduce(MPI_Comm comm);  // collective over comm

// 2 ceil(log2 P) (alpha + n beta) + ceil(log2 P) n gamma: a binomial reduce, then a broadcast, what
// Open MPI's libnbc runs for an in-place MPI_Iallreduce. Here, not in mpi_allreduce.cpp: the
// simulator replaces that file by its own (simulate/sim_mpi_allreduce.cpp) and keeps the model.
inline double mpi_bucket_seconds(int workers, int /*servers*/, double bytes, const LinkCost& net) {
  const double lg = std::ceil(std::log2(static_cast<double>(workers)));
  return 2 * lg * (net.latency_s + bytes * net.seconds_per_byte) + lg * bytes * net.add_s_per_byte;
}

}  // namespace hpcnn
