// The registry entry of an allreduce scheme (mpi, ring, rhd, nccl): its hpcnn-allreduce
// contract and the exchange hpcnn-scale drives over it (allreduce_exchange.cpp).
#pragma once

#include <mpi.h>

#include <memory>

#include "collectives/allreduce.hpp"
#include "collectives/exchange.hpp"

namespace hpcnn {

// `cost` and `simulated`: see ExchangeInfo (a scheme the simulator does not run needs neither).
ExchangeInfo allreduce_scheme(const char* name, const char* description, std::unique_ptr<Allreduce> (*make)(MPI_Comm),
                              BufferAccess access, BucketCost cost = nullptr, bool simulated = false);

}  // namespace hpcnn
