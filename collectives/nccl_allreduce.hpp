// NCCL's allreduce on device memory (CUDA builds only): one rank per GPU, the GPU chosen by local
// rank (kernels/cuda/device.hpp), the NCCL communicator bootstrapped over MPI (unique id from rank
// 0 by MPI_Bcast, ncclCommInitRank). Operations run on the scheme's own CUDA stream; start() is
// ordered after the producer stream (set_producer_stream), wait_all() waits for the stream while
// watching NCCL's asynchronous error state.
#pragma once

#include <memory>
#include <string>

#include "collectives/allreduce.hpp"

namespace hpcnn {

// Collective over comm. Throws RuntimeError on every rank alike when a rank has no GPU or a node
// runs more ranks than it has GPUs (NCCL would fail with "Duplicate GPU"), or when the set-up
// before NCCL's own collective initialization fails on any rank.
std::unique_ptr<Allreduce> make_nccl_allreduce(MPI_Comm comm);

// Collective over comm: "" when every rank has a GPU of its own (ranks on one host bound to
// distinct GPUs, told apart by PCI bus id); otherwise one line, the same on every rank, naming the
// first rank without a GPU, or a host with its rank and GPU counts.
std::string nccl_placement_problem(MPI_Comm comm);

}  // namespace hpcnn
