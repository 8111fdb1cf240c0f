// Fully connected layer through cuBLAS (cublasGemmEx). Row-major view: Y[N][O] = X[N][K] W[O][K]^T
// + b, with K = C*H*W of the input in NCHW order (the canonical weight layout). cuBLAS is
// column-major, so each product is written for the transposed matrices:
//   forward      Y^T (O x N)  = W^T' (O x K) . X^T (K x N)      gemm(T, N, O, N, K)
//   backward-data dX^T (K x N) = W^T (K x O) . dY^T (O x N)      gemm(N, N, K, N, O)
//   backward-wts  dW^T (K x O) = X^T (K x N) . dY (N x O)        gemm(N, T, K, O, N)
// BF16: inputs and outputs in BF16 with FP32 accumulation, the weight gradient written in FP32.
#include "base/errors.hpp"
#include "kernels/cuda/kernels.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn::cuda {

namespace {

void to_bf16_weights(Context& c, const float* src, void* dst, const void* arg) {
  to_bf16(src, dst, *static_cast<const std::size_t*>(arg), c.stream);
}

class FullyConnectedOp final : public Op {
 public:
  FullyConnectedOp(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst)
      : c_(c), bias_(node.attr.bias), in_(src[0]->shape), outs_(node.out.c),
        k_(static_cast<int>(in_.per_sample())), bf16_(c->act_bf16), rows_{false, bf16_} {
    dst.shape = Shape{in_.n, outs_, 1, 1};
    dst.layout = make_layout(dst.shape, false, bf16_);
    weight_count_ = std::size_t(outs_) * std::size_t(k_);
  }

  void forward(const OpContext& ctx) override {
    Context& c = *c_;
    const void* x = as_layout(c, *ctx.src[0], rows_, 0);
    const void* w = weights(ctx);
    const float one = 1.0f, zero = 0.0f;
    check_cublas(c.blas.gemm_ex(c.cublas, CUBLAS_OP_T, CUBLAS_OP_N, outs_, in_.n, k_, &one, w, type(), k_, x, type(), k_,
                              &zero, ctx.dst->data, type(), outs_, c.gemm_compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (fully connected forward)");
    if (bias_) bias_forward(ctx.dst->shape, {false, bf16_}, ctx.dst->data, ctx.weights + weight_count_, false, c.stream);
  }

  void backward(const OpContext& ctx) override {
    Context& c = *c_;
    const float one = 1.0f, zero = 0.0f;
    const void* dy = as_layout(c, *ctx.diff_dst, rows_, 1);
    const void* x = as_layout(c, *ctx.src[0], rows_, 0);
    check_cublas(c.blas.gemm_ex(c.cublas, CUBLAS_OP_N, CUBLAS_OP_T, k_, outs_, in_.n, &one, x, type(), k_, dy, type(),
                              outs_, &zero, ctx.diff_weights, CUDA_R_32F, k_, c.gemm_compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (fully connected backward weights)");
    if (bias_) bias_backward(ctx.diff_dst->shape, {false, bf16_}, dy, ctx.diff_weights + weight_count_, c.stream);
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    const bool direct = same_memory(in_, rows_, layout_of(*dx_t));
    void* dx = direct ? dx_t->data : c.scratch(2, in_.count() * elem_bytes(rows_));
    const void* w = bf16_ ? wcopy_.get() : ctx.weights;
    check_cublas(c.blas.gemm_ex(c.cublas, CUBLAS_OP_N, CUBLAS_OP_N, k_, in_.n, outs_, &one, w, type(), k_, dy, type(),
                              outs_, &zero, dx, type(), k_, c.gemm_compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (fully connected backward data)");
    if (!direct) store_as(c, dx, rows_, *dx_t);
  }

 private:
  cudaDataType_t type() const { return bf16_ ? CUDA_R_16BF : CUDA_R_32F; }
  const void* weights(const OpContext& ctx) {
    if (!bf16_) return ctx.weights;
    return wcopy_.update(*c_, ctx.weights, ctx.params_version, to_bf16_weights, &weight_count_, weight_count_ * 2);
  }

  ContextPtr c_;
  bool bias_;
  Shape in_;
  int outs_, k_;
  bool bf16_;
  Layout rows_;  // the input as NCHW-ordered rows in the activation precision
  std::size_t weight_count_ = 0;
  WeightCopy wcopy_;
};

}  // namespace

std::unique_ptr<Op> make_fully_connected(const ContextPtr& c, const Node& node, Inputs src, Mode, Tensor& dst) {
  return std::make_unique<FullyConnectedOp>(c, node, src, dst);
}

}  // namespace hpcnn::cuda
