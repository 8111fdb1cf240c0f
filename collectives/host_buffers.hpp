// Host memory the exchange schemes receive into, and the arithmetic they do on it (copy, sum,
// scale). These are the two things a simulated run replaces (simulate/: buffers shared by every
// simulated rank, arithmetic charged as simulated time), so they live here once, and the build
// links this file's host_buffers.cpp or the simulator's own (no #ifdef).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpcnn {

// `n` floats of host memory, zeroed; moved, never copied.
class HostFloats {
 public:
  HostFloats() = default;
  explicit HostFloats(std::size_t n);
  ~HostFloats();
  HostFloats(HostFloats&& other) noexcept;
  HostFloats& operator=(HostFloats&& other) noexcept;
  HostFloats(const HostFloats&) = delete;
  HostFloats& operator=(const HostFloats&) = delete;
  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

void copy_floats(float* dst, const float* src, std::size_t n);
void add_floats(float* __restrict dst, const float* __restrict src, std::size_t n);  // dst[i] += src[i]
void scale_floats(float* data, std::size_t n, float factor);                         // data[i] *= factor
// bf16 values as bit patterns: dst[i] = bf16(dst[i] + src[i]), the sum rounded to nearest even.
void add_bf16(std::uint16_t* __restrict dst, const std::uint16_t* __restrict src, std::size_t n);

}  // namespace hpcnn
