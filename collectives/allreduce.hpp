// The allreduce contract every exchange scheme written over MPI fulfils: sum float buffers in place
// over the ranks of one communicator, non-blocking, several operations in flight at once. Used by
// hpcnn-allreduce (one operation at a time) and by the allreduce exchanges of hpcnn-scale (one
// operation per gradient bucket, started while backward runs). Units: mpi_allreduce.cpp,
// ring.cpp, rhd.cpp, nccl_allreduce.cpp (device memory); registered by name in exchange.hpp.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace hpcnn {

// Bytes this rank has handed to MPI for sending and received, summed over operations.
struct Traffic {
  std::int64_t sent = 0, received = 0;
};

class Allreduce {
 public:
  virtual ~Allreduce() = default;
  // Starts summing `count` floats at `data` over every rank, in place; the result is bit-identical
  // on every rank. Collective in the non-blocking sense: every rank must start the same operations
  // (same counts) in the same order. `data` must not be touched until wait_all() returns.
  virtual void start(float* data, std::size_t count) = 0;
  // bf16 (hpcnn-scale --exchange-precision bf16): starts summing `count` bf16 values (their bit
  // patterns) at `data` in place, each addition rounded to bf16 as NCCL's bf16 allreduce rounds:
  // half the bytes of the fp32 sum. Only where sums_bf16(); the same contract as start().
  virtual bool sums_bf16() const { return false; }
  virtual void start_bf16(std::uint16_t* /*data*/, std::size_t /*count*/) {
    throw std::logic_error("allreduce: this scheme sums fp32 only");
  }
  // Advances every operation in flight without blocking; true when none is left.
  virtual bool progress() = 0;
  // Blocks until every operation started has completed.
  virtual void wait_all() = 0;
  // One blocking allreduce (what hpcnn-allreduce times). Default: start() + wait_all(); the mpi
  // scheme calls MPI_Allreduce here (and MPI_Iallreduce in start()).
  virtual void run(float* data, std::size_t count) {
    start(data, count);
    wait_all();
  }
  // Out of place (hpcnn-allreduce --placement out, OSU's form): `recv` gets the sum of every
  // rank's `send`, which is left as it was. Host memory. Default: the copy into `recv` (as an
  // out-of-place schedule makes it) and run() there; mpi passes both buffers to MPI_Allreduce.
  virtual void run_out_of_place(const float* send, float* recv, std::size_t count) {
    if (count > 0) std::memcpy(recv, send, count * sizeof(float));  // a 0-element call may pass null buffers
    run(recv, count);
  }
  // GPU schemes (nccl): every later start() is ordered after the work queued by then on this CUDA
  // stream (a cudaStream_t: the backend's, whose kernels produce the gradients), so a bucket is
  // read only once it is final; returns true. Other schemes return false: their caller must
  // synchronize the device before start().
  virtual bool set_producer_stream(void* /*stream*/) { return false; }
  // What this rank sent and received so far. Schemes written here count their own messages;
  // `mpi` cannot see inside the library and counts the bus volume 2(P-1)/P x bytes each way.
  virtual Traffic traffic() const = 0;
};

}  // namespace hpcnn
