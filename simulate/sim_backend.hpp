// The backend of a simulated rank: no operators and no arithmetic of its own. Its buffers are
// shared by every simulated rank (SMPI_SHARED_MALLOC: the simulation's memory does not grow with
// the rank count; their contents are meaningless), and what the exchange schemes ask of it (the
// averaging after a sum, the optimizer step) costs simulated time in proportion to the floats it
// touches, at the rate the measured node updates its parameters.
#pragma once

#include <string>

#include "engine/backend.hpp"

namespace hpcnn {

class SimBackend : public Backend {
 public:
  // update_s_per_float: the measured node's optimizer step over one parameter (update_s / params);
  // scale_s_per_float: one multiply-in-place of one float (the add rate of simulate/sim_host_buffers.cpp).
  SimBackend(double update_s_per_float, double scale_s_per_float);
  std::string name() const override { return "simulated"; }
  void allocate(Tensor& t) override;
  std::size_t storage_bytes(const Tensor& t) const override;
  std::shared_ptr<void> alloc_bytes(std::size_t bytes) override;
  std::shared_ptr<float> alloc_floats(std::size_t count) override;
  std::shared_ptr<std::int32_t> alloc_ints(std::size_t count) override;
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void write_plain(Tensor& t, const float* host_nchw) override;
  void read_plain(const Tensor& t, float* host_nchw) override;
  void set_zero(Tensor& t) override;
  void accumulate(Tensor& dst, const Tensor& src) override;
  std::unique_ptr<Op> make_op(const Node& node, std::span<const Tensor* const> src, Mode mode, Tensor& dst) override;
  void scale(float* data, std::size_t n, float factor) override;
  void sgd_step(float* w, const float* g, float* velocity, std::size_t n, const SgdParams& p) override;
  void adam_step(float* w, const float* g, float* m, float* v, std::size_t n, const AdamParams& p,
                 std::int64_t t) override;
  std::unique_ptr<Timer> make_timer() override;
  void set_threads(int) override {}
  int threads() const override { return 1; }
  LibraryVersions versions() const override { return {}; }

 private:
  double update_s_per_float_, scale_s_per_float_;
};

}  // namespace hpcnn
