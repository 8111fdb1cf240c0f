// collectives/host_buffers.hpp in a simulation: receive buffers shared by every simulated rank
// (their contents are meaningless, their memory does not grow with the rank count), and copies,
// sums and scalings that take simulated time at the measured node's rate instead of this
// machine's real time (sim_float_seconds: set by simulate/sim_rank.cpp from its arguments).
#include <smpi/smpi.h>

#include <utility>

#include "collectives/host_buffers.hpp"
#include "simulate/sim_rates.hpp"

namespace hpcnn {

HostFloats::HostFloats(std::size_t n)
    : data_(n ? static_cast<float*>(smpi_shared_malloc(n * sizeof(float), __FILE__, __LINE__)) : nullptr), size_(n) {}

HostFloats::~HostFloats() {
  if (data_) smpi_shared_free(data_);
}

HostFloats::HostFloats(HostFloats&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostFloats& HostFloats::operator=(HostFloats&& other) noexcept {
  if (this != &other) {
    if (data_) smpi_shared_free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void copy_floats(float*, const float*, std::size_t n) { smpi_execute_benched(static_cast<double>(n) * sim_rates().copy_s); }
void add_floats(float*, const float*, std::size_t n) { smpi_execute_benched(static_cast<double>(n) * sim_rates().add_s); }
void add_bf16(std::uint16_t*, const std::uint16_t*, std::size_t n) {
  smpi_execute_benched(static_cast<double>(n) * sim_rates().add_s);
}
void scale_floats(float*, std::size_t n, float) { smpi_execute_benched(static_cast<double>(n) * sim_rates().add_s); }

}  // namespace hpcnn
