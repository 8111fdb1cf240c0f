// Ring allreduce (reduce-scatter + allgather over point-to-point), written here. See ring.cpp.
#pragma once

#include <memory>

#include "collectives/schedule.hpp"

namespace hpcnn {

Schedule ring_schedule(int rank, int size, std::size_t count);
std::unique_ptr<Allreduce> make_ring_allreduce(MPI_Comm comm);  // collective over comm

}  // namespace hpcnn
