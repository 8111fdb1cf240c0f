// Batch normalization through cuDNN's "Ex" API (the persistent NHWC kernels when the layout is
// NHWC). Scale and shift are the canonical FP32 parameters; the running statistics are the
// network's buffers (OpContext::running_mean/running_var, device memory, 256-byte aligned by the
// graph's layout): cuDNN updates them in training (resultRunningMean/Variance, momentum of
// graph.hpp as exponentialAverageFactor, unbiased variance) and normalizes with them in inference
// (estimatedMean/Variance).
#include <string>

#include "engine/errors.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn::cuda {

namespace {

class BatchNormOp final : public Op {
 public:
  BatchNormOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst)
      : c_(c), attr_(node.attr), mode_(mode), shape_(src[0]->shape), l_{c->act_nhwc, c->act_bf16},
        desc_(shape_, l_) {
    dst.shape = shape_;
    dst.layout = make_layout(shape_, l_.nhwc, l_.bf16);
    bn_mode_ = l_.nhwc && mode == Mode::Train ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
    check_cudnn(cudnnCreateTensorDescriptor(&param_desc_), "cudnnCreateTensorDescriptor");
    check_cudnn(cudnnDeriveBNTensorDescriptor(param_desc_, desc_.d, bn_mode_), "cudnnDeriveBNTensorDescriptor");
    const std::size_t cb = std::size_t(shape_.c) * sizeof(float);
    name_ = node.name;
    scale_ = c->alloc(cb);
    shift_ = c->alloc(cb);
    if (mode != Mode::Train) return;
    save_mean_ = c->alloc(cb);
    save_inv_var_ = c->alloc(cb);
    dscale_ = c->alloc(cb);
    dshift_ = c->alloc(cb);
    Context& cx = *c;
    check_cudnn(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                    cx.cudnn, bn_mode_, CUDNN_BATCHNORM_OPS_BN, desc_.d, nullptr, desc_.d, param_desc_, nullptr, &fwd_ws_),
                "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize");
    check_cudnn(cudnnGetBatchNormalizationBackwardExWorkspaceSize(cx.cudnn, bn_mode_, CUDNN_BATCHNORM_OPS_BN, desc_.d,
                                                                  desc_.d, desc_.d, nullptr, desc_.d, param_desc_,
                                                                  nullptr, &bwd_ws_),
                "cudnnGetBatchNormalizationBackwardExWorkspaceSize");
    check_cudnn(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cx.cudnn, bn_mode_, CUDNN_BATCHNORM_OPS_BN, nullptr,
                                                                     desc_.d, &reserve_bytes_),
                "cudnnGetBatchNormalizationTrainingExReserveSpaceSize");
    if (reserve_bytes_) reserve_ = c->alloc(reserve_bytes_);
  }
  ~BatchNormOp() override { cudnnDestroyTensorDescriptor(param_desc_); }

  void forward(const OpContext& ctx) override {
    Context& c = *c_;
    static const float one = 1.0f, zero = 0.0f;
    // Unlike scale and shift (copied when unaligned), the statistics are written by cuDNN in
    // training, so they must be usable in place: the graph's buffer layout guarantees it.
    if (!ctx.running_mean || !ctx.running_var)
      throw RuntimeError(std::string(name_).append(": batch norm without running statistics in the context"));
    if (!aligned(ctx.running_mean) || !aligned(ctx.running_var))
      throw RuntimeError(std::string(name_).append(": running statistics not 256-byte aligned (cuDNN needs it)"));
    const void* x = as_layout(c, *ctx.src[0], l_, 0);
    const float* scale = ctx.weights;
    const float* shift = ctx.weights + shape_.c;
    if (!aligned(scale) || !aligned(shift)) {  // copies in aligned buffers (a few KiB)
      check(cudaMemcpyAsync(scale_.get(), scale, cbytes(), cudaMemcpyDeviceToDevice, c.stream), "cudaMemcpyAsync");
      check(cudaMemcpyAsync(shift_.get(), shift, cbytes(), cudaMemcpyDeviceToDevice, c.stream), "cudaMemcpyAsync");
      scale = static_cast<const float*>(scale_.get());
      shift = static_cast<const float*>(shift_.get());
    }
    if (mode_ != Mode::Train) {
      check_cudnn(cudnnBatchNormalizationForwardInference(c.cudnn, bn_mode_, &one, &zero, desc_.d, x, desc_.d,
                                                          ctx.dst->data, param_desc_, scale, shift, ctx.running_mean,
                                                          ctx.running_var, attr_.eps),
                  "cudnnBatchNormalizationForwardInference");
      return;
    }
    check_cudnn(cudnnBatchNormalizationForwardTrainingEx(
                    c.cudnn, bn_mode_, CUDNN_BATCHNORM_OPS_BN, &one, &zero, desc_.d, x, nullptr, nullptr, desc_.d,
                    ctx.dst->data, param_desc_, scale, shift, attr_.momentum, ctx.running_mean, ctx.running_var,
                    attr_.eps, save_mean_.get(), save_inv_var_.get(), nullptr, c.workspace(fwd_ws_), fwd_ws_,
                    reserve_.get(), reserve_bytes_),
                "cudnnBatchNormalizationForwardTrainingEx");
  }

  void backward(const OpContext& ctx) override {
    Context& c = *c_;
    static const float one = 1.0f, zero = 0.0f;
    const void* x = as_layout(c, *ctx.src[0], l_, 0);
    const void* dy = as_layout(c, *ctx.diff_dst, l_, 1);
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    void* dx = dx_t && same_memory(shape_, l_, layout_of(*dx_t)) ? dx_t->data
                                                                  : c.scratch(2, shape_.count() * elem_bytes(l_));
    // Forward left aligned copies of scale and shift when the originals are not aligned.
    const bool copies = !aligned(ctx.weights) || !aligned(ctx.weights + shape_.c);
    const float* scale = copies ? static_cast<const float*>(scale_.get()) : ctx.weights;
    const float* shift = copies ? static_cast<const float*>(shift_.get()) : ctx.weights + shape_.c;
    float* dscale = ctx.diff_weights;
    float* dshift = ctx.diff_weights + shape_.c;
    const bool grad_copies = !aligned(dscale) || !aligned(dshift);
    if (grad_copies) {
      dscale = static_cast<float*>(dscale_.get());
      dshift = static_cast<float*>(dshift_.get());
    }
    check_cudnn(cudnnBatchNormalizationBackwardEx(
                    c.cudnn, bn_mode_, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one, &zero, desc_.d, x, desc_.d,
                    ctx.dst->data, desc_.d, dy, nullptr, nullptr, desc_.d, dx, param_desc_, scale, shift, dscale,
                    dshift, attr_.eps, save_mean_.get(), save_inv_var_.get(), nullptr, c.workspace(bwd_ws_), bwd_ws_,
                    reserve_.get(), reserve_bytes_),
                "cudnnBatchNormalizationBackwardEx");
    if (grad_copies) {
      check(cudaMemcpyAsync(ctx.diff_weights, dscale, cbytes(), cudaMemcpyDeviceToDevice, c.stream), "cudaMemcpyAsync");
      check(cudaMemcpyAsync(ctx.diff_weights + shape_.c, dshift, cbytes(), cudaMemcpyDeviceToDevice, c.stream),
            "cudaMemcpyAsync");
    }
    if (dx_t && dx != dx_t->data) store_as(c, dx, l_, *dx_t);
  }

 private:
  std::size_t cbytes() const { return std::size_t(shape_.c) * sizeof(float); }

  ContextPtr c_;
  OpAttr attr_;
  Mode mode_;
  Shape shape_;
  Layout l_;
  TensorDesc desc_;
  cudnnTensorDescriptor_t param_desc_ = nullptr;
  cudnnBatchNormMode_t bn_mode_ = CUDNN_BATCHNORM_SPATIAL;
  std::string name_;
  DeviceBuffer save_mean_, save_inv_var_, reserve_;
  DeviceBuffer scale_, shift_, dscale_, dshift_;  // aligned copies, used when the parameters are not
  std::size_t fwd_ws_ = 0, bwd_ws_ = 0, reserve_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Op> make_batch_norm(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<BatchNormOp>(c, node, src, mode, dst);
}

}  // namespace hpcnn::cuda
