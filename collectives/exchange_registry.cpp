// The registry of exchange schemes, and the built-in ones. Like the backend registry, the list is
// filled on first use (a static library drops self-registering objects nobody references).
#include <mutex>

#include "collectives/exchange.hpp"
#include "collectives/mpi_allreduce.hpp"
#include "collectives/rhd.hpp"
#include "collectives/ring.hpp"
#include "config.h"
#include "engine/errors.hpp"
#ifdef HPCNN_BUILD_CUDA
#include "collectives/nccl_allreduce.hpp"
#endif

namespace hpcnn {

namespace {

std::vector<ExchangeInfo>& registry() {
  static std::vector<ExchangeInfo> list;
  return list;
}

void register_allreduce(const char* name, const char* description, std::unique_ptr<Allreduce> (*make)(MPI_Comm),
                        BufferAccess access = BufferAccess::Host) {
  ExchangeInfo info;
  info.name = name;
  info.description = description;
  info.access = access;
  info.make_allreduce = make;
  info.make_exchange = [make](const ExchangeSetup& s) { return make_allreduce_exchange(s, make); };
  register_exchange(std::move(info));
}

void register_builtin_exchanges() {
  register_allreduce("mpi", "the MPI library's allreduce (MPI_Iallreduce per bucket; MPI_Allreduce in hpcnn-allreduce)",
                     make_mpi_allreduce, BufferAccess::HostOrCudaAwareMpi);
  register_allreduce("ring", "ring allreduce: reduce-scatter + allgather over non-blocking point-to-point (hpcnn)",
                     make_ring_allreduce);
  register_allreduce("rhd", "recursive halving-doubling allreduce, any rank count (hpcnn)", make_rhd_allreduce);
#ifdef HPCNN_BUILD_CUDA
  register_allreduce("nccl", "NVIDIA NCCL allreduce on GPU memory, one rank per GPU (ncclAllReduce per bucket)",
                     make_nccl_allreduce, BufferAccess::Device);
#endif
  for (bool async : {false, true}) {
    ExchangeInfo info;
    info.name = async ? "ps-async" : "ps-sync";
    info.description = async ? "parameter server, asynchronous: each push applied on arrival, staleness recorded"
                             : "parameter server, synchronous: one averaged update per step";
    info.parameter_server = true;
    info.make_exchange = [async](const ExchangeSetup& s) { return make_parameter_server(s, async); };
    register_exchange(std::move(info));
  }
}

}  // namespace

void register_exchange(ExchangeInfo info) { registry().push_back(std::move(info)); }

const std::vector<ExchangeInfo>& exchanges() {
  static std::once_flag once;
  std::call_once(once, register_builtin_exchanges);
  return registry();
}

const ExchangeInfo& find_exchange(const std::string& name) {
  std::string available;
  for (const ExchangeInfo& e : exchanges()) {
    if (e.name == name) return e;
    available.append(available.empty() ? "" : ", ").append(e.name);
  }
  throw UsageError("--exchange: unknown scheme '" + name + "' (available: " + available + ")");
}

}  // namespace hpcnn
