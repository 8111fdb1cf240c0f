// The registry of exchange schemes, and the built-in ones. Like the backend registry, the list is
// filled on first use (a static library drops self-registering objects nobody references).
#include "base/errors.hpp"
#include "base/registry.hpp"
#include "collectives/allreduce_exchange.hpp"
#include "collectives/exchange.hpp"
#include "collectives/gpu_exchanges.hpp"
#include "collectives/mpi_allreduce.hpp"
#include "collectives/rhd.hpp"
#include "collectives/ring.hpp"

namespace hpcnn {

ExchangeInfo allreduce_scheme(const char* name, const char* description, std::unique_ptr<Allreduce> (*make)(MPI_Comm),
                              BufferAccess access, BucketCost cost, bool simulated) {
  ExchangeInfo info;
  info.name = name;
  info.description = description;
  info.access = access;
  info.bucket_seconds = cost;
  info.simulated = simulated;
  info.make_allreduce = make;
  info.make_exchange = [make](const ExchangeSetup& s) { return make_allreduce_exchange(s, make); };
  return info;
}

namespace {

void builtin_exchanges(Registry<ExchangeInfo>& registry) {
  registry.add(allreduce_scheme("mpi",
                                "the MPI library's allreduce (MPI_Iallreduce per bucket; MPI_Allreduce in hpcnn-allreduce)",
                                make_mpi_allreduce, BufferAccess::HostOrCudaAwareMpi, mpi_bucket_seconds, true));
  registry.add(allreduce_scheme("ring",
                                "ring allreduce: reduce-scatter + allgather over non-blocking point-to-point (hpcnn)",
                                make_ring_allreduce, BufferAccess::Host, ring_bucket_seconds, true));
  registry.add(allreduce_scheme("rhd", "recursive halving-doubling allreduce, any rank count (hpcnn)",
                                make_rhd_allreduce, BufferAccess::Host, rhd_bucket_seconds, true));
  register_gpu_exchanges(registry);
  for (bool async : {false, true}) {
    ExchangeInfo info;
    info.name = async ? "ps-async" : "ps-sync";
    info.description = async ? "parameter server, asynchronous: each push applied on arrival, staleness recorded"
                             : "parameter server, synchronous: one averaged update per step";
    info.parameter_server = true;
    info.asynchronous = async;
    info.bucket_seconds = async ? parameter_server_async_bucket_seconds : parameter_server_bucket_seconds;
    info.simulated = true;
    info.make_exchange = [async](const ExchangeSetup& s) { return make_parameter_server(s, async); };
    registry.add(std::move(info));
  }
}

Registry<ExchangeInfo>& exchange_registry() {
  static Registry<ExchangeInfo> registry("exchange scheme", builtin_exchanges);
  return registry;
}

}  // namespace

const std::vector<ExchangeInfo>& exchanges() { return exchange_registry().all(); }

std::string simulated_exchange_names() {
  std::string names;
  for (const ExchangeInfo& e : exchanges())
    if (e.simulated) names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

const ExchangeInfo& find_exchange(const std::string& name) {
  if (const ExchangeInfo* e = exchange_registry().find(name)) return *e;
  throw SettingError("exchange", "", "unknown scheme '" + name + "' (available: " + exchange_registry().names() + ")");
}

}  // namespace hpcnn
