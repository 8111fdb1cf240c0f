#include <cuda_runtime.h>

#include <string>

#include "collectives/device_scale.hpp"
#include "engine/errors.hpp"

namespace hpcnn {

namespace {

// Grid-stride loop: any count with a bounded grid.
__global__ void scale_kernel(float* data, std::size_t count, float factor) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] *= factor;
}

}  // namespace

void scale_on_device(float* data, std::size_t count, float factor, void* stream) {
  if (count == 0) return;
  constexpr unsigned threads = 256;
  const std::size_t wanted = (count + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
  scale_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(data, count, factor);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw RuntimeError(std::string("CUDA: gradient scaling kernel launch: ").append(cudaGetErrorString(e)));
}

}  // namespace hpcnn
