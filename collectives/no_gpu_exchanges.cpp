// The GPU side of collectives/ in a build without CUDA (gpu_exchanges.hpp): nothing to offer.
#include "base/errors.hpp"
#include "collectives/gpu_exchanges.hpp"

namespace hpcnn {

bool gpu_exchanges_built() { return false; }

void register_gpu_exchanges(Registry<ExchangeInfo>& /*registry*/) {}

std::unique_ptr<MessageBuffer> make_device_message(std::size_t /*count*/) {
  throw UsageError("--memory device: this build has no CUDA (configure did not find it)");
}

}  // namespace hpcnn
