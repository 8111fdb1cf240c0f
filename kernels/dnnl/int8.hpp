// oneDNN backend internals (kernels/dnnl/ only): int8 inference of a convolution or fully connected
// layer (Context::int8), as post-training static quantization does it. The layer's input is
// quantized with the scale its calibrated range gives (engine/calibration.hpp): u8 where the range
// never goes below zero (after a ReLU), s8 else, scale = largest magnitude / 255 or 127. Its
// weights (a folded batch norm's included) are quantized per output channel, symmetric s8, when
// the parameters change. The primitive accumulates in int32 and writes FP32 (dequantized, bias and
// post-ops applied), or, where every reader of its output takes int8 (Epilogue::readers: int8
// convolutions and fully connected layers, residual sums), that output quantized at the scale of
// its own calibrated range: the tensor between them is u8 or s8, a quarter of the bytes, and the
// readers read it as it is. A residual convolution adds onto a shortcut stored so and writes its
// sum so too, in the shortcut's bytes. Such a tensor's scale is in Context::quantized; whatever
// else reads it (the backend's read_plain, a layer that runs in FP32) dequantizes it first.
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
// The same in a given type (u8 only for a range that never goes below zero), or nullopt.
std::optional<ActivationQuantization> activation_quantization(const ValueRange& r, memory::data_type type);

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
  std::optional<ActivationQuantization> in;        // the input as its producer stored it, or FP32
  std::optional<ActivationQuantization> shortcut;  // the sum's input (dst before) stored so, or FP32
  std::optional<ActivationQuantization> out;       // dst quantized so (for its readers), or FP32
  std::function<dnnl::primitive_desc(const memory::desc& src, const memory::desc& weights,
                                     const memory::desc& bias, const memory::desc& dst,
                                     const dnnl::primitive_attr& attr)>
      make;
};

// The layer as an inference op, or nullptr where oneDNN has only its reference implementation
// for it (the caller then runs it in FP32). Sets dst.layout to the format the primitive writes
// (a 2-D {n, o} dst is plain NCHW {n, o, 1, 1}); the caller sets dst.shape first.
std::unique_ptr<Op> make_int8_layer(const ContextPtr& c, Int8Layer layer, Tensor& dst);

// The calibrated range of node `result`'s output (output_range_key), or nullopt.
std::optional<ValueRange> output_range(const Context& c, const Node* result);

// How an op's output is stored for its readers (Epilogue::result, readers): quantized at the scale
// of its calibrated range where every reader is a convolution, a fully connected layer or an Add
// (a residual sum), else FP32 (nullopt).
std::optional<ActivationQuantization> quantization_for(const Context& c, const Epilogue& e);

// The scale of a tensor stored quantized (Context::quantized), or 0 for an FP32 tensor.
float quantized_scale(const Context& c, const Tensor& t);
// Its type and scale, or nullopt for an FP32 tensor.
std::optional<ActivationQuantization> stored_quantization(const Context& c, const Tensor& t);

// make(src), or where some input is stored quantized, an op that dequantizes those inputs into
// FP32 buffers of its own before every forward and runs make's op on them (made on plain-NCHW FP32
// stand-ins): what every op but the int8 layers reads such a tensor through.
std::unique_ptr<Op> with_fp32_inputs(const ContextPtr& c, Inputs src,
                                     const std::function<std::unique_ptr<Op>(Inputs)>& make);

// The FP32 op of an int8 layer oneDNN has no optimized int8 kernel for (with_fp32_inputs), listed
// in Context::fp32_in_int8, as taking its input rounded to int8 where that arrives quantized.
std::unique_ptr<Op> make_fp32_fallback(const ContextPtr& c, const Node& node, Inputs src,
                                       const std::function<std::unique_ptr<Op>(Inputs)>& make);

// The FP32 values of a tensor stored quantized, in plain NCHW (read_plain).
void dequantize_plain(const ContextPtr& c, const Tensor& t, float* host_nchw);

// The oneDNN kernel an int8 convolution (u8 input) gets on this CPU, with its ISA.
std::string int8_kernel_text();

}  // namespace hpcnn::dnnl_impl
