#include "collectives/staging.hpp"

#include <stdexcept>
#include <string>

namespace hpcnn {

namespace {

void check_range(std::size_t offset, std::size_t count, std::size_t size) {
  if (offset > size || count > size - offset)
    throw std::logic_error(std::string("staging: range [").append(std::to_string(offset)).append(", +")
                               .append(std::to_string(count)).append(") outside ").append(std::to_string(size))
                               .append(" floats"));
}

}  // namespace

Staging::Staging(Backend& backend, std::size_t count, bool enabled)
    : backend_(backend), enabled_(enabled), copy_(enabled ? count : 0) {}

void Staging::pull(const float* buffer, std::size_t offset, std::size_t count) {
  if (!enabled_ || count == 0) return;
  check_range(offset, count, copy_.size());
  // Kernels producing the buffer may still be queued on the device.
  backend_.synchronize();
  backend_.copy_to_host(copy_.data() + offset, buffer + offset, count * sizeof(float));
}

void Staging::push(float* buffer, std::size_t offset, std::size_t count) {
  if (!enabled_ || count == 0) return;
  check_range(offset, count, copy_.size());
  backend_.copy_to_device(buffer + offset, copy_.data() + offset, count * sizeof(float));
}

}  // namespace hpcnn
