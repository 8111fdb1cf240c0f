// Operator factories of the cuda backend, one per layer family (conv.cpp, batch_norm.cpp,
// fully_connected.cpp, layers.cpp). Each sets dst.shape and dst.layout (see context.hpp).
#pragma once

#include <memory>
#include <span>

#include "engine/op.hpp"
#include "kernels/cuda/context.hpp"

namespace hpcnn::cuda {

using Inputs = std::span<const Tensor* const>;

// e (inference only): a folded batch norm and/or a ReLU after the convolution.
std::unique_ptr<Op> make_conv(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                              const Epilogue& e = {});
// relu: the ReLU after it fused (Backend::make_fused_op): cuDNN's BN_ACTIVATION ops in training
// where supported, else our ReLU kernels; backward gets the ReLU output's gradient.
std::unique_ptr<Op> make_batch_norm(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                                    bool relu = false);
std::unique_ptr<Op> make_fully_connected(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_activation(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_pooling(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_lrn(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_dropout(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
// relu: y = max(a + b, 0) in one pass (the forward half of a fused Add+ReLU, see make_fused_relu).
std::unique_ptr<Op> make_add(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                             bool relu = false);
std::unique_ptr<Op> make_flatten(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_softmax_xent(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);

// A ReLU fused into the op before it (Backend::make_fused_op), around that op: forward runs
// `inner` and then the ReLU in place on its output (unless `inner_applies_relu`: the fused Add
// does it in the same pass); backward masks the gradient (dy * (y > 0), in place when the
// executor allows it, OpContext::diff_dst_writable) and runs inner's backward on it. `dst` is the
// output tensor inner's factory described.
std::unique_ptr<Op> make_fused_relu(const ContextPtr& c, std::unique_ptr<Op> inner, const Tensor& dst,
                                    bool inner_applies_relu);
// The backward half of a fused ReLU: dy * (y > 0) for the op's output y = ctx.dst (layout l, count
// values), written over ctx.diff_dst when the executor allows it, else into `own` (allocated on
// first use). Returns where the masked gradient is.
void* fused_relu_grad(Context& c, const OpContext& ctx, const void* dy, std::size_t count, const Layout& l,
                      DeviceBuffer& own);

// Weights of a node converted to another format, redone only when the parameters change
// (OpContext::params_version; 0 = unknown, always redo). Backward reuses forward's copy.
class WeightCopy {
 public:
  // Returns the converted weights for this forward pass.
  const void* update(Context& c, const float* canonical, std::uint64_t version,
                     void (*convert)(Context&, const float*, void*, const void*), const void* arg, std::size_t bytes);
  const void* get() const { return buf_.get(); }

 private:
  DeviceBuffer buf_;
  std::uint64_t version_ = 0;
  const float* source_ = nullptr;
};

}  // namespace hpcnn::cuda
