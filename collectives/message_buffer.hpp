// The buffer hpcnn-allreduce sums: host memory, or device memory (cudaMalloc) for the schemes
// that read GPU memory (--memory device). Filled from and read back into host vectors outside the
// timed loop; both copies are complete when they return.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace hpcnn {

class MessageBuffer {
 public:
  virtual ~MessageBuffer() = default;
  virtual float* data() = 0;  // what the allreduce is given
  virtual void fill(const std::vector<float>& host) = 0;
  virtual void read(std::vector<float>& host) = 0;
};

// device: on the GPU this rank uses (kernels/cuda/device.hpp's select_device). Throws UsageError
// for device memory in a build without CUDA, RuntimeError when CUDA fails (no GPU, no memory).
std::unique_ptr<MessageBuffer> make_message_buffer(bool device, std::size_t count);

// Whether this build can put messages in device memory.
bool device_memory_built();

}  // namespace hpcnn
