// The GEMM-lowered operators (private to kernels/gemm): convolution via im2col + SGEMM and fully
// connected via SGEMM, both on plain NCHW tensors. Created by GemmCpuBackend::make_op.
#pragma once

#include <memory>

#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn::gemm_ops {

// Scratch memory shared by the operators of one backend (they run one at a time), so a deep
// network holds one column buffer rather than one per layer.
class Scratch {
 public:
  float* get(int slot, std::size_t floats);  // slot 0 or 1; grows, never shrinks; 64-byte aligned

 private:
  std::shared_ptr<void> buf_[2];
  std::size_t size_[2] = {0, 0};
};

// columns: the im2col GEMM's column target (images_per_gemm; 0: the built-in one).
std::unique_ptr<Op> make_conv(std::shared_ptr<Sgemm> sgemm, std::shared_ptr<Scratch> scratch, const Node& node,
                              const Shape& in, const Shape& out, int columns = 0);
std::unique_ptr<Op> make_fully_connected(std::shared_ptr<Sgemm> sgemm, const Node& node, const Shape& in,
                                         const Shape& out);

}  // namespace hpcnn::gemm_ops
