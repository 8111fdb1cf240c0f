// The GPU side of collectives/ in a CUDA build (gpu_exchanges.hpp): nccl, device messages.
#include "collectives/gpu_exchanges.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "collectives/allreduce_exchange.hpp"
#include "collectives/nccl_allreduce.hpp"
#include "kernels/cuda/device.hpp"

namespace hpcnn {

namespace {

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
}  // namespace

bool gpu_exchanges_built() { return true; }

void register_gpu_exchanges(Registry<ExchangeInfo>& registry) {
  registry.add(allreduce_scheme("nccl",
                                "NVIDIA NCCL allreduce on GPU memory, one rank per GPU (ncclAllReduce per bucket)",
                                make_nccl_allreduce, BufferAccess::Device));
}

std::unique_ptr<MessageBuffer> make_device_message(std::size_t count) { return std::make_unique<DeviceBuffer>(count); }

}  // namespace hpcnn
