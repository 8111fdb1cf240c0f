// Gradient exchange in data-parallel training: the ONE interface hpcnn-scale drives and the
// registry of every scheme by name (`--exchange`). Allreduce schemes (mpi, ring, rhd) sum each
// gradient bucket over the workers while backward continues and apply the optimizer on every
// worker; parameter-server schemes (ps-sync, ps-async) push buckets to dedicated server ranks that
// own key-range shards of the weights and optimizer state and send the weights back.
//
// Per training step a worker calls: start_bucket(b) for each bucket as Network::backward reports
// it (with progress() in between), then wait() (the communication-wait phase), then update().
// A server rank calls serve() once; it returns after serving the agreed number of steps.
//
// GPU backends keep parameters and gradients in device memory. A scheme that can read device
// memory (nccl; mpi when the MPI library is CUDA-aware) gets the device pointers; the others stage
// every bucket through host memory (ExchangeMemory::HostStaged, collectives/staging.hpp).
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/cost_model.hpp"
#include "engine/backend.hpp"
#include "engine/buckets.hpp"
#include "engine/optimizer.hpp"

namespace hpcnn {

// Where the buffers a scheme sums may live.
enum class BufferAccess {
  Host,                // host memory only (ring, rhd, parameter servers: they add on the CPU)
  HostOrCudaAwareMpi,  // host, or device memory when the MPI library is CUDA-aware (mpi)
  Device,              // device memory only (nccl)
};

// Where an exchange finds the gradients of one run: a CPU backend's host buffers, a GPU backend's
// device buffers handed to the scheme directly, or device buffers copied to the host per bucket
// and back before the update.
enum class ExchangeMemory { Host, Device, HostStaged };
const char* exchange_memory_name(ExchangeMemory m);  // "host", "device", "host-staged"

// What a training checkpoint keeps of an exchange (hpcnn-scale --data): the optimizer state over
// the whole parameter buffer (allreduce schemes: the one every worker holds; parameter servers:
// their shards, put together) and, for parameter servers, the weights the servers hold (which
// ps-async workers do not all share; empty for allreduce schemes, whose workers hold the weights).
struct ExchangeState {
  std::vector<float> weights;
  Optimizer::State optimizer;
};

struct ExchangeSetup {
  MPI_Comm world = MPI_COMM_WORLD;     // every rank of the job; the setup is collective over it
  int servers = 0;                     // parameter servers (the last `servers` ranks of world)
  std::size_t param_count = 0;
  const GradientBuckets* buckets = nullptr;
  std::int64_t steps = 0;              // steps every worker will run (servers serve exactly these)
  OptimizerSettings optimizer;
  Backend* backend = nullptr;          // runs the optimizer (workers, or servers for their shard)
  ExchangeMemory memory = ExchangeMemory::Host;  // choose_exchange_memory(scheme, *backend)
  // --exchange-precision bf16: each bucket is rounded to bf16 and summed in bf16 (half the bytes),
  // then widened to fp32 for the update, as PyTorch DDP's bf16 compression hook does. Allreduce
  // schemes that sum bf16 in host memory only (Allreduce::sums_bf16); others refuse it.
  bool bf16 = false;
  // Parameter servers: has this process received a stop signal? Asked by every worker before each
  // step's wait and by the first server before each reply; the servers then make one step the
  // last (stop_agreed). Empty: never. (Allreduce schemes stop through the training loop's
  // per-iteration agreement instead.)
  std::function<bool()> stop_signalled;
  // Resuming from a training checkpoint: the state to start from, on every rank (the workers'
  // weights come through init()), or nullptr to start afresh. steps above counts what is left.
  const ExchangeState* resume = nullptr;
  // ps-sync with checkpoints: when a stop ends the run before its last step, worker 0 takes the
  // servers' state of that step before it announces that it has finished (checkpoint_state()).
  bool state_on_stop = false;
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
  // Parameter servers: the step just waited for was this worker's last one, because a stop
  // signal reached a worker or the first server (ExchangeSetup::stop_signalled): stop before the
  // next step. ps-sync ends every worker after the same step; ps-async ends each worker after its
  // next reply. Always false for allreduce schemes.
  virtual bool stop_agreed() const { return false; }
  // Worker 0 (world rank 0), between steps, when every worker's exchange of the steps so far is
  // complete and none has started the next one (the caller's barrier keeps them there until it
  // returns): the state a training checkpoint keeps. Parameter servers answer from within serve().
  virtual ExchangeState checkpoint_state() = 0;
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

// A scheme's registry entry: everything the suites, the simulator and the help texts know of it.
struct ExchangeInfo {
  std::string name;
  std::string description;
  bool parameter_server = false;
  // Its workers run free (ps-async): no step is aligned across them, each ends after its own count.
  bool asynchronous = false;
  BufferAccess access = BufferAccess::Host;
  BucketCost bucket_seconds = nullptr;  // its cost model (nullptr: none)
  // hpcnn-simulate runs its code in the SMPI rank program (simulate/Makefile.inc builds that from
  // EXCHANGE_SCHEME_SOURCES, collectives/Makefile.inc); a scheme simulated has a cost model.
  bool simulated = false;
  // Allreduce schemes only (hpcnn-allreduce and the allreduce exchange): collective over comm.
  std::function<std::unique_ptr<Allreduce>(MPI_Comm)> make_allreduce;
  std::function<std::unique_ptr<Exchange>(const ExchangeSetup&)> make_exchange;
};

// Every scheme of this build, in registration order (registers the built-in ones on first use).
const std::vector<ExchangeInfo>& exchanges();
// The names of the schemes hpcnn-simulate runs, "mpi, ring, ..." in registration order.
std::string simulated_exchange_names();
// Throws SettingError("exchange", "", "unknown scheme 'X' (available: ...)").
const ExchangeInfo& find_exchange(const std::string& name);

// The memory mode of `scheme` with `backend`: Host on CPU backends; on GPU backends Device when the
// scheme reads device memory (for mpi: the MPI library says it is CUDA-aware at run time), else
// HostStaged. Throws UsageError for a device-only scheme (nccl) with a CPU backend.
ExchangeMemory choose_exchange_memory(const ExchangeInfo& scheme, const Backend& backend);

// The allreduce exchange over any Allreduce: the adapter mpi, ring and rhd share.
std::unique_ptr<Exchange> make_allreduce_exchange(const ExchangeSetup& setup,
                                                  const std::function<std::unique_ptr<Allreduce>(MPI_Comm)>& make);
// ps-sync and ps-async (parameter_server.cpp).
std::unique_ptr<Exchange> make_parameter_server(const ExchangeSetup& setup, bool asynchronous);
// Each of S servers takes a 1/S shard from W workers and sends it back: its link carries W n/S each
// way, so 2 W n/S beta + 2 alpha + (W - 1) n/S gamma (the server's bound).
double parameter_server_bucket_seconds(int workers, int servers, double bytes, const LinkCost& net);
// ps-async: a worker's push and pull still share the server's link with every other worker's, once
// each per step on average, but each push is applied as it arrives, not summed first: 2 W n/S beta
// + 2 alpha, no adds (the optimizer step per push is the server's compute, outside this model).
double parameter_server_async_bucket_seconds(int workers, int servers, double bytes, const LinkCost& net);

}  // namespace hpcnn
