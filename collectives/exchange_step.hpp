// One training step's use of an exchange scheme, in the order hpcnn-scale runs it (through the
// training loop's ExchangeSync, suites/scale_common.hpp) and hpcnn-simulate simulates it
// (simulate/sim_rank.cpp): one protocol for both, so a simulated step cannot drift from a measured one.
#pragma once

#include <mpi.h>

#include "collectives/exchange.hpp"

namespace hpcnn {

class ExchangeStep {
 public:
  ExchangeStep(Exchange& exchange, const ExchangeInfo& scheme) : exchange_(exchange), aligned_(!scheme.asynchronous) {}
  // Before the step, outside its clock: the workers of a synchronous scheme start it together.
  void align() {
    if (aligned_) MPI_Barrier(exchange_.workers());
  }
  // Backward has finished bucket b: its exchange starts now, and those in flight advance.
  void bucket_ready(int b, float* params, float* grads) {
    exchange_.start_bucket(b, params, grads);
    exchange_.progress();
  }
  // After backward: the step's exchange completes (the comm_wait phase).
  void wait(float* params, float* grads) { exchange_.wait(params, grads); }
  // The update phase: the optimizer on the sums, or the weights a parameter server sent back.
  void update(float* params, float* grads) { exchange_.update(params, grads); }

 private:
  Exchange& exchange_;
  bool aligned_;
};

}  // namespace hpcnn
