// oneDNN backend internals (kernels/dnnl/ only): int8 inference of a convolution or fully connected
// layer (Context::int8), as post-training static quantization does it. The layer's input is
// quantized with the scale its calibrated range gives (engine/calibration.hpp): u8 where the range
// never goes below zero (after a ReLU), s8 else, scale = largest magnitude / 255 or 127. Its
// weights (a folded batch norm's included) are quantized per output channel, symmetric s8, when
// the parameters change. The primitive accumulates in int32 and writes FP32 (dequantized, bias and
// post-ops applied), or, for a convolution whose only reader is another int8 layer
// (Epilogue::reader), that reader's quantized input itself: the tensor between them is u8 or s8,
// a quarter of the bytes, and the reader reads it as it is. Such a tensor's scale is in
// Context::quantized; whatever else reads it (the backend's read_plain, a reader that fell back to
// FP32) dequantizes it first.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/value_range.hpp"
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {

// The int8 quantization of an activation whose calibrated range is r.
struct ActivationQuantization {
  memory::data_type type;  // u8 or s8
  float scale;             // value = scale * integer
};
ActivationQuantization activation_quantization(const ValueRange& r);

// What differs between a convolution and an inner product: the primitive descriptor made from
// the given descs and attributes, and what the layer adds.
struct Int8Layer {
  std::string name;         // node name (calibration key, messages)
  Shape src;                // input shape (batch included)
  memory::dims weights;     // plain weight dims, output channels first
  memory::desc dst;         // format_tag::any, or a concrete format (a residual's shortcut); its type
                            // is FP32 or out's
  bool bias = false;        // a bias: the layer's own, or a folded batch norm's
  bool layer_bias = false;  // the layer's own bias in its parameters (after the weights)
  bool sum = false, relu = false;
  const Node* batch_norm = nullptr;  // folded in (OpContext::bn_*)
  std::optional<ActivationQuantization> out;  // dst quantized so (for its only reader), or FP32
  std::function<dnnl::primitive_desc(const memory::desc& src, const memory::desc& weights,
                                     const memory::desc& bias, const memory::desc& dst,
                                     const dnnl::primitive_attr& attr)>
      make;
};

// The layer as an inference op, or nullptr where oneDNN has only its reference implementation
// for it (the caller then runs it in FP32). Sets dst.layout to the format the primitive writes
// (a 2-D {n, o} dst is plain NCHW {n, o, 1, 1}); the caller sets dst.shape first.
std::unique_ptr<Op> make_int8_layer(const ContextPtr& c, Int8Layer layer, Tensor& dst);

// How a layer's output is stored for `reader`, the one node that reads it: quantized as that
// reader's input when it is an int8 convolution or inner product with a calibrated range, else
// FP32 (nullopt).
std::optional<ActivationQuantization> quantization_for(const Context& c, const Node* reader);

// The scale of a tensor stored quantized (Context::quantized), or 0 for an FP32 tensor.
float quantized_scale(const Context& c, const Tensor& t);

// The FP32 op of an int8 layer oneDNN has no optimized int8 kernel for, listed in
// Context::fp32_in_int8. Where an input arrives quantized (its producer chose that before this
// layer was made) the op is made by `make` on FP32 stand-ins for those inputs, each dequantized
// into a buffer of its own before every forward, and the list says that the layer's input was
// rounded to int8; else it is make(src) itself.
std::unique_ptr<Op> make_fp32_fallback(const ContextPtr& c, const Node& node, Inputs src,
                                       const std::function<std::unique_ptr<Op>(Inputs)>& make);

// The FP32 values of a tensor stored quantized, in plain NCHW (read_plain).
void dequantize_plain(const ContextPtr& c, const Tensor& t, float* host_nchw);

// The oneDNN kernel an int8 convolution (u8 input) gets on this CPU, with its ISA.
std::string int8_kernel_text();

}  // namespace hpcnn::dnnl_impl
