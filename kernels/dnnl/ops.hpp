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

std::unique_ptr<Op> make_conv(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_batch_norm(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                    Tensor& dst);
std::unique_ptr<Op> make_eltwise(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_pooling(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_lrn(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_inner_product(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                       Tensor& dst);
std::unique_ptr<Op> make_add(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_flatten(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_dropout(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst);
std::unique_ptr<Op> make_softmax_xent(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                      Tensor& dst);

}  // namespace hpcnn::dnnl_impl
