// Recursive halving-doubling allreduce (any rank count), written here. See rhd.cpp.
#pragma once

#include <memory>

#include "collectives/schedule.hpp"

namespace hpcnn {

Schedule rhd_schedule(int rank, int size, std::size_t count);
std::unique_ptr<Allreduce> make_rhd_allreduce(MPI_Comm comm);  // collective over comm

}  // namespace hpcnn
