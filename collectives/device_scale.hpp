// Scaling a float buffer in device memory: the allreduce exchange averages summed gradients where
// the backend keeps them (collectives/device_scale.cu; CUDA builds only).
#pragma once

#include <cstddef>

namespace hpcnn {

// data[i] *= factor for i < count, queued on `stream` (a cudaStream_t; nullptr: the default
// stream). Asynchronous. The same single float multiply the host loop does, so the results are
// bit-identical to it. Throws RuntimeError naming the failed launch.
void scale_on_device(float* data, std::size_t count, float factor, void* stream);

}  // namespace hpcnn
