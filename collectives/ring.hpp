// Ring allreduce (reduce-scatter + allgather over point-to-point), written here. See ring.cpp.
#pragma once

#include <memory>

#include "collectives/cost_model.hpp"
#include "collectives/schedule.hpp"

namespace hpcnn {

// Step k (0 <= k < 2(size-1)) of `rank`'s ring, made from its index alone.
Step ring_step(int rank, int size, std::size_t count, std::size_t k);
Plan ring_plan(int rank, int size, std::size_t count);  // its steps, each made as it is posted
std::unique_ptr<Allreduce> make_ring_allreduce(MPI_Comm comm);  // collective over comm
// 2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma (reduce-scatter, then allgather).
double ring_bucket_seconds(int workers, int servers, double bytes, const LinkCost& net);

}  // namespace hpcnn
