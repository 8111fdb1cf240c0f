// Host staging of a backend buffer for schemes that communicate from host memory (ring, rhd,
// parameter servers, mpi without CUDA-aware MPI) while a GPU backend keeps the buffer on the
// device. Enabled, it owns a host copy of the whole buffer: pull() brings a range to the host
// after the device has finished writing it, push() sends a range back. Disabled (host buffers, or
// a scheme that reads device memory), host() is the buffer itself and pull/push do nothing, so an
// exchange calls them unconditionally.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/backend.hpp"

namespace hpcnn {

class Staging {
 public:
  Staging(Backend& backend, std::size_t count, bool enabled);
  bool enabled() const { return enabled_; }
  // The host address of element 0 of `buffer`: the copy when enabled, else `buffer` itself.
  float* host(float* buffer) { return enabled_ ? copy_.data() : buffer; }
  // Floats [offset, offset + count) of device `buffer` into the copy; waits for the backend first.
  void pull(const float* buffer, std::size_t offset, std::size_t count);
  // Floats [offset, offset + count) of the copy into device `buffer`.
  void push(float* buffer, std::size_t offset, std::size_t count);

 private:
  Backend& backend_;
  bool enabled_;
  std::vector<float> copy_;
};

}  // namespace hpcnn
