// oneDNN backend internals (kernels/dnnl/ only): a convolution's weight gradient as one GEMM over
// the whole batch, for the layers where oneDNN has no JIT backward-weights kernel for the ISA
// and falls back to its per-image im2col + GEMM (`x64:gemm:jit`): on AVX2 a 3x3 kernel larger
// than its 2x2 or 1x1 map (ResNet's last stage), where a GEMM per image of 4 or 1 columns runs
// at about 23 GFLOP/s. Here the batch's columns are one matrix: dW = dY x im2col(X)^T with
// dY as C x (N*OH*OW) and im2col(X) as (IC*KH*KW) x (N*OH*OW).
#pragma once

#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "kernels/dnnl/layout.hpp"

namespace hpcnn::dnnl_impl {

class BatchGemmWeights {
 public:
  BatchGemmWeights() = default;
  // in/out: the convolution's src and dst shapes; bias: also the bias gradient (row sums of dY).
  BatchGemmWeights(const ContextPtr& c, const OpAttr& a, const Shape& in, const Shape& out, bool bias);
  // Overwrites diff_weights (canonical OIHW, then the bias) from src and diff_dst in any layout.
  void run(const Tensor& src, const Tensor& diff_dst, float* diff_weights);

 private:
  void im2col(const float* src_cnhw, float* col) const;
  OpAttr a_;
  Shape in_, out_;
  bool bias_ = false;
  Converter src_cnhw_, diff_dst_cnhw_;  // both channels-outermost: C x N x H x W
  Buffer col_;
};

// True when oneDNN implements these backward weights with its gemm fallback.
bool is_gemm_fallback(const dnnl::primitive_desc_base& pd);

}  // namespace hpcnn::dnnl_impl
