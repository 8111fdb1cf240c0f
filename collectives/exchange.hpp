// Gradient exchange in data-parallel training: the ONE interface hpcnn-scale drives and the
// registry of every scheme by name (`--exchange`). Allreduce schemes (mpi, ring, rhd) sum each
// gradient bucket over the workers while backward continues and apply the optimizer on every
// worker; parameter-server schemes (ps-sync, ps-async) push buckets to dedicated server ranks that
// own key-range shards of the weights and optimizer state and send the weights back.
//
// Per training step a worker calls: start_bucket(b) for each bucket as Network::backward reports
// it (with progress() in between), then wait() (the communication-wait phase), then update().
// A server rank calls serve() once; it returns after serving the agreed number of steps.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "engine/backend.hpp"
#include "engine/buckets.hpp"
#include "harness/optimizer.hpp"

namespace hpcnn {

struct ExchangeSetup {
  MPI_Comm world = MPI_COMM_WORLD;     // every rank of the job; the setup is collective over it
  int servers = 0;                     // parameter servers (the last `servers` ranks of world)
  std::size_t param_count = 0;
  const GradientBuckets* buckets = nullptr;
  std::int64_t steps = 0;              // steps every worker will run (servers serve exactly these)
  OptimizerSettings optimizer;
  Backend* backend = nullptr;          // runs the optimizer (workers, or servers for their shard)
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  bool is_worker() const { return workers_ != MPI_COMM_NULL; }
  MPI_Comm workers() const { return workers_; }  // MPI_COMM_NULL on server ranks
  int worker_count() const { return worker_count_; }
  // Worker, once before the first step: `params` hold the initial weights, identical on every
  // worker. Collective over world (servers receive their shards here).
  virtual void init(float* params) = 0;
  // ---- worker, every step ----
  virtual void start_bucket(int bucket, float* params, float* grads) = 0;
  virtual void progress() = 0;
  // Until this step's exchange is complete (gradients summed, or new weights received).
  virtual void wait(float* params, float* grads) = 0;
  // Apply the step: allreduce schemes average the summed gradients and run the optimizer;
  // parameter-server schemes have nothing left to do (the servers updated the weights).
  virtual void update(float* params, float* grads) = 0;
  // ---- server ----
  virtual void serve() {}
  // Bytes this rank sent and received so far.
  virtual Traffic traffic() const = 0;
  // ps-async, on servers: staleness of every push applied (updates the shard saw between the
  // worker fetching the weights and its gradients arriving); empty elsewhere.
  virtual std::vector<double> staleness() const { return {}; }
  // Allreduce schemes: the time of one step's exchange alone (every bucket started back to back,
  // then waited for), used for the overlap figure. Collective over the workers; < 0 when the
  // scheme cannot measure it without changing state (parameter servers).
  virtual double isolated_exchange_seconds(float* /*grads*/) { return -1.0; }

 protected:
  MPI_Comm workers_ = MPI_COMM_NULL;
  int worker_count_ = 0;
};

struct ExchangeInfo {
  std::string name;
  std::string description;
  bool parameter_server = false;
  // Allreduce schemes only (hpcnn-allreduce and the allreduce exchange): collective over comm.
  std::function<std::unique_ptr<Allreduce>(MPI_Comm)> make_allreduce;
  std::function<std::unique_ptr<Exchange>(const ExchangeSetup&)> make_exchange;
};

void register_exchange(ExchangeInfo info);
// Every scheme of this build, in registration order (registers the built-in ones on first use).
const std::vector<ExchangeInfo>& exchanges();
// Throws UsageError("--exchange: unknown scheme 'X' (available: ...)").
const ExchangeInfo& find_exchange(const std::string& name);

// The allreduce exchange over any Allreduce: the adapter mpi, ring and rhd share.
std::unique_ptr<Exchange> make_allreduce_exchange(const ExchangeSetup& setup,
                                                  const std::function<std::unique_ptr<Allreduce>(MPI_Comm)>& make);
// ps-sync and ps-async (parameter_server.cpp).
std::unique_ptr<Exchange> make_parameter_server(const ExchangeSetup& setup, bool asynchronous);

}  // namespace hpcnn
