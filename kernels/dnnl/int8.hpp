// oneDNN backend internals (kernels/dnnl/ only): int8 inference of a convolution or fully connected
// layer (Context::int8), as post-training static quantization does it. The layer's input is
// quantized with the scale its calibrated range gives (engine/calibration.hpp): u8 where the range
// never goes below zero (after a ReLU), s8 else, scale = largest magnitude / 255 or 127. Its
// weights (a folded batch norm's included) are quantized per output channel, symmetric s8, when
// the parameters change. The primitive accumulates in int32 and writes FP32 (dequantized, bias and
// post-ops applied), so every tensor between layers stays FP32.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/value_range.hpp"
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {

// What differs between a convolution and an inner product: the primitive descriptor made from
// the given descs and attributes, and what the layer adds.
struct Int8Layer {
  std::string name;         // node name (calibration key, messages)
  Shape src;                // input shape (batch included)
  memory::dims weights;     // plain weight dims, output channels first
  memory::desc dst;         // FP32: format_tag::any, or a concrete format (a residual's shortcut)
  bool bias = false;        // a bias: the layer's own, or a folded batch norm's
  bool layer_bias = false;  // the layer's own bias in its parameters (after the weights)
  bool sum = false, relu = false;
  const Node* batch_norm = nullptr;  // folded in (OpContext::bn_*)
  std::function<dnnl::primitive_desc(const memory::desc& src, const memory::desc& weights,
                                     const memory::desc& bias, const memory::desc& dst,
                                     const dnnl::primitive_attr& attr)>
      make;
};

// The layer as an inference op, or nullptr where oneDNN has only its reference implementation
// for it (the caller then runs it in FP32). Sets dst.layout to the format the primitive writes
// (a 2-D {n, o} dst is plain NCHW {n, o, 1, 1}); the caller sets dst.shape first.
std::unique_ptr<Op> make_int8_layer(const ContextPtr& c, Int8Layer layer, Tensor& dst);

// The int8 quantization of an activation whose calibrated range is r.
struct ActivationQuantization {
  memory::data_type type;  // u8 or s8
  float scale;             // value = scale * integer
};
ActivationQuantization activation_quantization(const ValueRange& r);

// The oneDNN kernel an int8 convolution (u8 input) gets on this CPU, with its ISA.
std::string int8_kernel_text();

}  // namespace hpcnn::dnnl_impl
