// Shapes and tensors: a logical NCHW shape plus memory owned by a backend.
// Used by every layer of the engine; only backends look inside Tensor::layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hpcnn {

// Logical 4-D shape. Fully connected activations are {n, c, 1, 1}.
struct Shape {
  int n = 1, c = 1, h = 1, w = 1;

  std::size_t count() const { return std::size_t(n) * c * h * w; }
  std::size_t per_sample() const { return std::size_t(c) * h * w; }
  bool operator==(const Shape&) const = default;
  std::string str() const;  // "NxCxHxW"
};

// One activation or activation gradient.
//   data    : device pointer (host memory for CPU backends); never dereference outside a backend
//   layout  : private to the backend that made the tensor (oneDNN memory::desc, cuDNN descriptor).
//             nullptr means plain NCHW, densely packed, which every backend must accept as input.
//   storage : keeps `data` alive; tensors are cheap to copy and share memory.
struct Tensor {
  Shape shape;
  float* data = nullptr;
  std::size_t bytes = 0;
  std::shared_ptr<const void> layout;
  std::shared_ptr<void> storage;
};

}  // namespace hpcnn
