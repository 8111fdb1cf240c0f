// Recursive halving-doubling allreduce (any rank count), written here. See rhd.cpp.
#pragma once

#include <memory>

#include "collectives/cost_model.hpp"
#include "collectives/schedule.hpp"

namespace hpcnn {

Schedule rhd_schedule(int rank, int size, std::size_t count);
std::unique_ptr<Allreduce> make_rhd_allreduce(MPI_Comm comm);  // collective over comm
// 2 log2 P' alpha + 2(P'-1)/P' n beta + (P'-1)/P' n gamma over the largest power of two P' <= P,
// and a step each way (alpha + n beta, n gamma) folding the other ranks in and out.
double rhd_bucket_seconds(int workers, int servers, double bytes, const LinkCost& net);

}  // namespace hpcnn
