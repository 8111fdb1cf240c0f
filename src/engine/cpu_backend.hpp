// Shared base for host-memory backends (reference, dnnl, openblas, eigen): aligned host memory,
// plain-layout conversions, accumulate, optimizer loops and a steady-clock timer. A CPU backend
// derives from it and overrides what its library does better (and the layout-aware calls when it
// uses non-plain layouts).
#pragma once

#include "engine/backend.hpp"

namespace hpcnn {

class CpuBackend : public Backend {
 public:
  void allocate(Tensor& t) override;  // storage_bytes from alloc_bytes
  std::size_t storage_bytes(const Tensor& t) const override;  // plain layout: count * sizeof(float)
  std::shared_ptr<void> alloc_bytes(std::size_t bytes) override;  // aligned_host_alloc
  std::shared_ptr<float> alloc_floats(std::size_t count) override;
  std::shared_ptr<std::int32_t> alloc_ints(std::size_t count) override;
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void write_plain(Tensor& t, const float* host_nchw) override;
  void read_plain(const Tensor& t, float* host_nchw) override;
  void set_zero(Tensor& t) override;
  void accumulate(Tensor& dst, const Tensor& src) override;
  void sgd_step(float* w, const float* g, float* velocity, std::size_t n,
                const SgdParams& p) override;
  void adam_step(float* w, const float* g, float* m, float* v, std::size_t n,
                 const AdamParams& p, std::int64_t t) override;
  std::unique_ptr<Timer> make_timer() override;
};

// 64-byte aligned, zeroed host allocation shared by CPU backends (the memory plan's offsets are
// multiples of 256, so every tensor in its arena stays 64-byte aligned).
std::shared_ptr<void> aligned_host_alloc(std::size_t bytes);

}  // namespace hpcnn
