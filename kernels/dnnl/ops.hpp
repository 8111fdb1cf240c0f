// oneDNN backend internals (kernels/dnnl/ only): one factory per layer family. Each creates every
// primitive its op will run (forward, backward data/weights, weight reorders) for the given input
// shapes and layouts, and sets dst.shape and dst.layout. Called by DnnlBackend::make_op.
#pragma once

#include <memory>
#include <span>

#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "kernels/dnnl/layout.hpp"

namespace hpcnn::dnnl_impl {

using Inputs = std::span<const Tensor* const>;

// dst.shape for `node` at the batch size of src[0].
Shape batch_shape(const Node& node, Inputs src);

// relu: the op also applies the ReLU that follows it (Backend::make_fused_op) as a oneDNN
// post-op (batch norm: fuse_norm_relu), its backward masking the gradient first (FusedReluGrad).
// A convolution's epilogue may also fold an inference batch norm into its weights and bias, and
// add a residual onto src[1] in place (Epilogue::add; nullptr where oneDNN has no fast kernel).
std::unique_ptr<Op> make_conv(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                              const Epilogue& e = {});
std::unique_ptr<Op> make_batch_norm(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                    Tensor& dst, bool relu = false);
std::unique_ptr<Op> make_eltwise(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_pooling(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_lrn(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_inner_product(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                       Tensor& dst, bool relu = false);
std::unique_ptr<Op> make_add(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                             bool relu = false);
std::unique_ptr<Op> make_flatten(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_dropout(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_softmax_xent(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                      Tensor& dst);

// A convolution's weights and bias with the inference batch norm after it folded in (x.bn_*):
// w'[o] = w[o] s[o], b'[o] = shift[o] + (b[o] - mean[o]) s[o] with s = scale / sqrt(var + eps), in
// double. `out` receives weight_count + oc floats; conv_bias: x.weights holds the layer's own bias.
void fold_batch_norm(const OpContext& x, std::size_t weight_count, std::size_t oc, bool conv_bias, float eps,
                     float* out);

// Attributes with a ReLU post-op (or none).
dnnl::primitive_attr relu_post_op(bool relu);

// Backward of a ReLU fused into an op: the gradient with respect to the op's own output,
// diff_dst * (dst > 0), in dst's layout. Written over diff_dst when the executor allows it
// (OpContext::diff_dst_writable), else into `out` when given, else into an owned buffer.
class FusedReluGrad {
 public:
  FusedReluGrad() = default;
  FusedReluGrad(const ContextPtr& c, const memory::desc& data);
  // The masked gradient: x.diff_dst's shape and layout, other data.
  Tensor run(const OpContext& x, float* out = nullptr);

 private:
  ContextPtr ctx_;
  dnnl::eltwise_backward bwd_;
  Mem dst_m_, diff_dst_m_, diff_src_m_;
  Buffer buf_;
  std::size_t bytes_ = 0;
};

}  // namespace hpcnn::dnnl_impl
