// What collectives/ offers on GPUs: the nccl scheme and messages in device memory. Two
// implementations, chosen by the build instead of an #ifdef: gpu_exchanges.cpp (CUDA builds) and
// no_gpu_exchanges.cpp (the others).
#pragma once

#include <cstddef>
#include <memory>

#include "base/registry.hpp"
#include "collectives/exchange.hpp"
#include "collectives/message_buffer.hpp"

namespace hpcnn {

bool gpu_exchanges_built();
// Adds nccl (CUDA builds); nothing otherwise.
void register_gpu_exchanges(Registry<ExchangeInfo>& registry);
// A message of `count` floats in the device memory of this rank's GPU. Throws UsageError in a
// build without CUDA, RuntimeError when CUDA fails (no GPU, no memory).
std::unique_ptr<MessageBuffer> make_device_message(std::size_t count);

}  // namespace hpcnn
