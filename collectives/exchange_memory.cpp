// Which memory an exchange works on (exchange.hpp: ExchangeMemory): decided once per run from the
// scheme's BufferAccess, the backend, and for mpi the MPI library's run-time CUDA-awareness.
#include "collectives/exchange.hpp"
#include "collectives/mpi_cuda.hpp"
#include "base/errors.hpp"

namespace hpcnn {

const char* exchange_memory_name(ExchangeMemory m) {
  switch (m) {
    case ExchangeMemory::Host: return "host";
    case ExchangeMemory::Device: return "device";
    case ExchangeMemory::HostStaged: return "host-staged";
  }
  return "?";
}

ExchangeMemory choose_exchange_memory(const ExchangeInfo& scheme, const Backend& backend) {
  if (!backend.is_gpu()) {
    if (scheme.access == BufferAccess::Device)
      throw SettingError("exchange", scheme.name,
                         "works on GPU memory only; backend '" + backend.name() +
                             "' is a CPU backend (use a GPU backend, e.g. --backend cuda)");
    return ExchangeMemory::Host;
  }
  switch (scheme.access) {
    case BufferAccess::Device: return ExchangeMemory::Device;
    case BufferAccess::HostOrCudaAwareMpi:
      return mpi_cuda_support().run_time ? ExchangeMemory::Device : ExchangeMemory::HostStaged;
    case BufferAccess::Host: break;
  }
  return ExchangeMemory::HostStaged;
}

}  // namespace hpcnn
