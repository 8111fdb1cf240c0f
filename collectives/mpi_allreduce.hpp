// The MPI library's own allreduce: MPI_Iallreduce per started operation, MPI_Allreduce for run().
#pragma once

#include <memory>

#include "collectives/allreduce.hpp"

namespace hpcnn {

std::unique_ptr<Allreduce> make_mpi_allreduce(MPI_Comm comm);  // collective over comm

}  // namespace hpcnn
