#include "simulate/sim_backend.hpp"

#include <smpi/smpi.h>

#include <stdexcept>

namespace hpcnn {

namespace {

[[noreturn]] void not_simulated(const char* what) {
  throw std::logic_error(std::string("simulated backend: ") + what + " is not part of a simulation");
}

// SMPI_SHARED_MALLOC's memory, freed by SMPI_SHARED_FREE.
template <typename T>
std::shared_ptr<T> shared_block(std::size_t bytes) {
  void* p = smpi_shared_malloc(bytes > 0 ? bytes : 1, __FILE__, __LINE__);
  return std::shared_ptr<T>(static_cast<T*>(p), [](T* q) { smpi_shared_free(q); });
}

}  // namespace

SimBackend::SimBackend(double update_s_per_float, double scale_s_per_float)
    : update_s_per_float_(update_s_per_float), scale_s_per_float_(scale_s_per_float) {}

void SimBackend::allocate(Tensor&) { not_simulated("a tensor"); }
std::size_t SimBackend::storage_bytes(const Tensor&) const { not_simulated("a tensor"); }
std::shared_ptr<void> SimBackend::alloc_bytes(std::size_t bytes) { return shared_block<void>(bytes); }
std::shared_ptr<float> SimBackend::alloc_floats(std::size_t count) { return shared_block<float>(count * sizeof(float)); }
std::shared_ptr<std::int32_t> SimBackend::alloc_ints(std::size_t count) {
  return shared_block<std::int32_t>(count * sizeof(std::int32_t));
}
// Host memory is the device's: the staging copies of a CPU backend never happen.
void SimBackend::copy_to_device(void*, const void*, std::size_t) {}
void SimBackend::copy_to_host(void*, const void*, std::size_t) {}
void SimBackend::write_plain(Tensor&, const float*) { not_simulated("a tensor"); }
void SimBackend::read_plain(const Tensor&, float*) { not_simulated("a tensor"); }
void SimBackend::set_zero(Tensor&) { not_simulated("a tensor"); }
void SimBackend::accumulate(Tensor&, const Tensor&) { not_simulated("a tensor"); }
std::unique_ptr<Op> SimBackend::make_op(const Node&, std::span<const Tensor* const>, Mode, Tensor&) {
  not_simulated("an operator");
}
std::unique_ptr<Timer> SimBackend::make_timer() { not_simulated("a timer"); }

void SimBackend::scale(float*, std::size_t n, float) { smpi_execute_benched(static_cast<double>(n) * scale_s_per_float_); }

void SimBackend::sgd_step(float*, const float*, float*, std::size_t n, const SgdParams&) {
  smpi_execute_benched(static_cast<double>(n) * update_s_per_float_);
}

void SimBackend::adam_step(float*, const float*, float*, float*, std::size_t n, const AdamParams&, std::int64_t) {
  smpi_execute_benched(static_cast<double>(n) * update_s_per_float_);
}

}  // namespace hpcnn
