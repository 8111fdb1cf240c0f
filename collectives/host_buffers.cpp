#include "collectives/host_buffers.hpp"

#include <algorithm>
#include <new>
#include <utility>

#include "base/bf16.hpp"

namespace hpcnn {

HostFloats::HostFloats(std::size_t n) : data_(n ? new float[n]() : nullptr), size_(n) {}

HostFloats::~HostFloats() { delete[] data_; }

HostFloats::HostFloats(HostFloats&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostFloats& HostFloats::operator=(HostFloats&& other) noexcept {
  if (this != &other) {
    delete[] data_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void copy_floats(float* dst, const float* src, std::size_t n) { std::copy(src, src + n, dst); }

void add_floats(float* __restrict dst, const float* __restrict src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
}

void add_bf16(std::uint16_t* __restrict dst, const std::uint16_t* __restrict src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_bits(bf16_value(dst[i]) + bf16_value(src[i]));
}

void scale_floats(float* data, std::size_t n, float factor) {
  for (std::size_t i = 0; i < n; ++i) data[i] *= factor;
}

}  // namespace hpcnn
