// hpcnn-scale --preflight: before any timing, every rank reports its host, local rank, GPU (index,
// name, PCI bus id), whether the backends asked for can be created, whether NCCL works (a
// 1-element ncclAllReduce over all ranks, checked for the exact sum) and whether the MPI library
// is CUDA-aware (headers and run time). Rank 0 prints one table, one row per rank.
#pragma once

#include <mpi.h>

#include "harness/options.hpp"

namespace hpcnn {

// Collective over comm; reads --backend and --exchange. Returns the exit status: 1 when a check
// that ran failed, or when a GPU was asked for (a GPU backend or a GPU-only exchange) and a rank
// has none; otherwise 0 (without GPUs the GPU checks are skipped, and the table says why).
int run_preflight(const Options& options, MPI_Comm comm);

}  // namespace hpcnn
