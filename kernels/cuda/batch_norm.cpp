// Batch normalization through cuDNN's "Ex" API (the persistent NHWC kernels when the layout is
// NHWC). Scale and shift are the canonical FP32 parameters; the running statistics are the
// network's buffers (OpContext::running_mean/running_var, device memory, 256-byte aligned by the
// graph's layout): cuDNN updates them in training (resultRunningMean/Variance, momentum of
// graph.hpp as exponentialAverageFactor, unbiased variance) and normalizes with them in inference
// (estimatedMean/Variance). A fused ReLU (Backend::make_fused_op) runs inside cuDNN's kernels in
// training where cuDNN offers CUDNN_BATCHNORM_OPS_BN_ACTIVATION for the tensor (asked for in the
// persistent NHWC mode; a refusal, at set-up or at the first call, switches to our kernels: ReLU
// in place after the batch norm, the gradient masked before its backward).
#include <algorithm>
#include <string>

#include "base/errors.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/kernels.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn::cuda {

namespace {

class BatchNormOp final : public Op {
 public:
  BatchNormOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst, bool relu)
      : c_(c), attr_(node.attr), mode_(mode), shape_(src[0]->shape), l_{c->act_nhwc, c->act_bf16},
        desc_(shape_, l_), relu_(relu) {
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
    check_cudnn(sizes(CUDNN_BATCHNORM_OPS_BN, nullptr, plain_), "cudnnGetBatchNormalization*Ex*Size");
    if (relu_ && c->bn_activation && bn_mode_ == CUDNN_BATCHNORM_SPATIAL_PERSISTENT) {
      check_cudnn(cudnnCreateActivationDescriptor(&act_), "cudnnCreateActivationDescriptor");
      check_cudnn(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
                  "cudnnSetActivationDescriptor");
      fused_ = sizes(CUDNN_BATCHNORM_OPS_BN_ACTIVATION, act_, with_act_) == CUDNN_STATUS_SUCCESS;
    }
    const std::size_t reserve = std::max(plain_.reserve, fused_ ? with_act_.reserve : 0);
    if (reserve) reserve_ = c->alloc(reserve);
  }
  ~BatchNormOp() override {
    cudnnDestroyTensorDescriptor(param_desc_);
    if (act_) cudnnDestroyActivationDescriptor(act_);
  }

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
      relu_in_place(ctx);
      return;
    }
    auto run = [&](cudnnBatchNormOps_t ops, cudnnActivationDescriptor_t act, const Sizes& z) {
      return cudnnBatchNormalizationForwardTrainingEx(
          c.cudnn, bn_mode_, ops, &one, &zero, desc_.d, x, nullptr, nullptr, desc_.d, ctx.dst->data, param_desc_,
          scale, shift, attr_.momentum, ctx.running_mean, ctx.running_var, attr_.eps, save_mean_.get(),
          save_inv_var_.get(), act, c.workspace(z.fwd_ws), z.fwd_ws, reserve_.get(), z.reserve);
    };
    if (fused_) {
      const cudnnStatus_t st = run(CUDNN_BATCHNORM_OPS_BN_ACTIVATION, act_, with_act_);
      if (st == CUDNN_STATUS_SUCCESS) return;
      if (st != CUDNN_STATUS_NOT_SUPPORTED) check_cudnn(st, "cudnnBatchNormalizationForwardTrainingEx (BN+ReLU)");
      fused_ = false;  // refused for this tensor: our ReLU kernels from now on (before any backward)
    }
    check_cudnn(run(CUDNN_BATCHNORM_OPS_BN, nullptr, plain_), "cudnnBatchNormalizationForwardTrainingEx");
    relu_in_place(ctx);
  }

  void backward(const OpContext& ctx) override {
    Context& c = *c_;
    static const float one = 1.0f, zero = 0.0f;
    const void* x = as_layout(c, *ctx.src[0], l_, 0);
    const void* dy = as_layout(c, *ctx.diff_dst, l_, 1);
    if (relu_ && !fused_) dy = fused_relu_grad(c, ctx, dy, shape_.count(), l_, mask_);  // the ReLU's derivative first
    const Sizes& z = fused_ ? with_act_ : plain_;
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
    // With BN_ACTIVATION cuDNN reads y (the ReLU's output) and applies the ReLU's derivative to dy.
    check_cudnn(cudnnBatchNormalizationBackwardEx(
                    c.cudnn, bn_mode_, fused_ ? CUDNN_BATCHNORM_OPS_BN_ACTIVATION : CUDNN_BATCHNORM_OPS_BN, &one, &zero,
                    &one, &zero, desc_.d, x, desc_.d, ctx.dst->data, desc_.d, dy, nullptr, nullptr, desc_.d, dx,
                    param_desc_, scale, shift, dscale, dshift, attr_.eps, save_mean_.get(), save_inv_var_.get(),
                    fused_ ? act_ : nullptr, c.workspace(z.bwd_ws), z.bwd_ws, reserve_.get(), z.reserve),
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

  // Workspace and reserve sizes of one bnOps choice.
  struct Sizes {
    std::size_t fwd_ws = 0, bwd_ws = 0, reserve = 0;
  };
  cudnnStatus_t sizes(cudnnBatchNormOps_t ops, cudnnActivationDescriptor_t act, Sizes& z) {
    cudnnHandle_t h = c_->cudnn;
    cudnnStatus_t st = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        h, bn_mode_, ops, desc_.d, nullptr, desc_.d, param_desc_, act, &z.fwd_ws);
    if (st == CUDNN_STATUS_SUCCESS)
      st = cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, bn_mode_, ops, desc_.d, desc_.d, desc_.d, nullptr,
                                                             desc_.d, param_desc_, act, &z.bwd_ws);
    if (st == CUDNN_STATUS_SUCCESS)
      st = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, bn_mode_, ops, act, desc_.d, &z.reserve);
    return st;
  }
  void relu_in_place(const OpContext& ctx) {
    if (relu_) act_forward(Act::Relu, ctx.dst->data, ctx.dst->data, shape_.count(), l_.bf16, c_->stream);
  }

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
  bool relu_;
  bool fused_ = false;  // the ReLU inside cuDNN's kernels (BN_ACTIVATION)
  cudnnActivationDescriptor_t act_ = nullptr;
  Sizes plain_, with_act_;
  DeviceBuffer mask_;
};

}  // namespace

std::unique_ptr<Op> make_batch_norm(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                                    bool relu) {
  return std::make_unique<BatchNormOp>(c, node, src, mode, dst, relu);
}

}  // namespace hpcnn::cuda
