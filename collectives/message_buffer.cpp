#include "collectives/message_buffer.hpp"

#include <algorithm>
#include <string>

#include "config.h"
#include "engine/errors.hpp"
#ifdef HPCNN_BUILD_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/device.hpp"
#endif

namespace hpcnn {

namespace {

class HostBuffer : public MessageBuffer {
 public:
  explicit HostBuffer(std::size_t count) : data_(count) {}
  float* data() override { return data_.data(); }
  void fill(const std::vector<float>& host) override { std::copy(host.begin(), host.end(), data_.begin()); }
  void read(std::vector<float>& host) override { host.assign(data_.begin(), data_.end()); }

 private:
  std::vector<float> data_;
};

#ifdef HPCNN_BUILD_CUDA
class DeviceBuffer : public MessageBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    cuda::select_device();
    // At least one float, so data() is a valid device address even for 0-byte messages.
    cuda::check(cudaMalloc(reinterpret_cast<void**>(&data_), std::max<std::size_t>(count, 1) * sizeof(float)),
                "cudaMalloc (allreduce message)");
  }
  ~DeviceBuffer() override { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* data() override { return data_; }
  // cudaMemcpy from pageable memory may return before the device has the data; the schemes run
  // on other streams, so wait for the whole device.
  void fill(const std::vector<float>& host) override {
    cuda::check(cudaMemcpy(data_, host.data(), count_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the copy to the device");
  }
  void read(std::vector<float>& host) override {
    host.resize(count_);
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before the copy to the host");
    cuda::check(cudaMemcpy(host.data(), data_, count_ * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }

 private:
  std::size_t count_;
  float* data_ = nullptr;
};
#endif

}  // namespace

bool device_memory_built() {
#ifdef HPCNN_BUILD_CUDA
  return true;
#else
  return false;
#endif
}

std::unique_ptr<MessageBuffer> make_message_buffer(bool device, std::size_t count) {
  if (!device) return std::make_unique<HostBuffer>(count);
#ifdef HPCNN_BUILD_CUDA
  return std::make_unique<DeviceBuffer>(count);
#else
  throw UsageError("--memory device: this build has no CUDA (configure did not find it)");
#endif
}

}  // namespace hpcnn
