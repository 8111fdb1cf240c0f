// oneDNN 2.x / 3.x compatibility (kernels/dnnl/ only): the one place that knows which oneDNN API
// the build compiles against. oneDNN 3.0 removed the operation descriptors (op::desc): a primitive
// descriptor is built from the engine and the memory descriptors directly, pooling gained a
// dilation, eltwise post-ops lost their scale, memory::desc::dims() became get_dims() and some
// cpu_isa values went away. Every op in this folder creates its primitive descriptors through the
// functions below, so the ops read the same for both APIs (Debian 12's 2.6, Debian 13/Spack/
// EasyBuild's 3.x). Bias arguments: a zero memory::desc means "no bias". int8 scales are attributes
// in 2.x and execution arguments in 3.x.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace hpcnn::dnnl_impl::compat {

using dnnl::algorithm;
using dnnl::engine;
using dnnl::primitive_attr;
using dnnl::prop_kind;
using md = dnnl::memory::desc;
using dims = dnnl::memory::dims;

#if DNNL_VERSION_MAJOR >= 3
inline constexpr bool kV3 = true;
#else
inline constexpr bool kV3 = false;
#endif

inline dims dims_of(const md& d) {
#if DNNL_VERSION_MAJOR >= 3
  return d.get_dims();
#else
  return d.dims();
#endif
}

inline dnnl::memory::data_type data_type_of(const md& d) {
#if DNNL_VERSION_MAJOR >= 3
  return d.get_data_type();
#else
  return d.data_type();
#endif
}

// An eltwise ReLU appended to a post-op chain.
inline void append_relu(dnnl::post_ops& ops) {
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(algorithm::eltwise_relu, 0.0f, 0.0f);
#else
  ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
#endif
}

// ---- convolution ---------------------------------------------------------------------------------
inline dnnl::convolution_forward::primitive_desc conv_forward(
    const engine& e, prop_kind prop, algorithm alg, const md& src, const md& w, const md& bias,
    const md& dst, const dims& strides, const dims& pad_l, const dims& pad_r, const primitive_attr& attr) {
  using pd = dnnl::convolution_forward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return bias.is_zero() ? pd(e, prop, alg, src, w, dst, strides, pad_l, pad_r, attr)
                        : pd(e, prop, alg, src, w, bias, dst, strides, pad_l, pad_r, attr);
#else
  using d = dnnl::convolution_forward::desc;
  return bias.is_zero() ? pd(d(prop, alg, src, w, dst, strides, pad_l, pad_r), attr, e)
                        : pd(d(prop, alg, src, w, bias, dst, strides, pad_l, pad_r), attr, e);
#endif
}

inline dnnl::convolution_backward_data::primitive_desc conv_backward_data(
    const engine& e, algorithm alg, const md& diff_src, const md& w, const md& diff_dst,
    const dims& strides, const dims& pad_l, const dims& pad_r,
    const dnnl::convolution_forward::primitive_desc& hint) {
  using pd = dnnl::convolution_backward_data::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, alg, diff_src, w, diff_dst, strides, pad_l, pad_r, hint);
#else
  return pd(dnnl::convolution_backward_data::desc(alg, diff_src, w, diff_dst, strides, pad_l, pad_r),
            e, hint);
#endif
}

inline dnnl::convolution_backward_weights::primitive_desc conv_backward_weights(
    const engine& e, algorithm alg, const md& src, const md& diff_w, const md& diff_bias,
    const md& diff_dst, const dims& strides, const dims& pad_l, const dims& pad_r,
    const dnnl::convolution_forward::primitive_desc& hint) {
  using pd = dnnl::convolution_backward_weights::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return diff_bias.is_zero()
             ? pd(e, alg, src, diff_w, diff_dst, strides, pad_l, pad_r, hint)
             : pd(e, alg, src, diff_w, diff_bias, diff_dst, strides, pad_l, pad_r, hint);
#else
  using d = dnnl::convolution_backward_weights::desc;
  return diff_bias.is_zero()
             ? pd(d(alg, src, diff_w, diff_dst, strides, pad_l, pad_r), e, hint)
             : pd(d(alg, src, diff_w, diff_bias, diff_dst, strides, pad_l, pad_r), e, hint);
#endif
}

// ---- inner product -------------------------------------------------------------------------------
inline dnnl::inner_product_forward::primitive_desc ip_forward(const engine& e, prop_kind prop,
                                                              const md& src, const md& w,
                                                              const md& bias, const md& dst,
                                                              const primitive_attr& attr) {
  using pd = dnnl::inner_product_forward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return bias.is_zero() ? pd(e, prop, src, w, dst, attr) : pd(e, prop, src, w, bias, dst, attr);
#else
  using d = dnnl::inner_product_forward::desc;
  return bias.is_zero() ? pd(d(prop, src, w, dst), attr, e) : pd(d(prop, src, w, bias, dst), attr, e);
#endif
}

inline dnnl::inner_product_backward_data::primitive_desc ip_backward_data(
    const engine& e, const md& diff_src, const md& w, const md& diff_dst,
    const dnnl::inner_product_forward::primitive_desc& hint) {
  using pd = dnnl::inner_product_backward_data::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, diff_src, w, diff_dst, hint);
#else
  return pd(dnnl::inner_product_backward_data::desc(diff_src, w, diff_dst), e, hint);
#endif
}

inline dnnl::inner_product_backward_weights::primitive_desc ip_backward_weights(
    const engine& e, const md& src, const md& diff_w, const md& diff_bias, const md& diff_dst,
    const dnnl::inner_product_forward::primitive_desc& hint) {
  using pd = dnnl::inner_product_backward_weights::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return diff_bias.is_zero() ? pd(e, src, diff_w, diff_dst, hint)
                             : pd(e, src, diff_w, diff_bias, diff_dst, hint);
#else
  using d = dnnl::inner_product_backward_weights::desc;
  return diff_bias.is_zero() ? pd(d(src, diff_w, diff_dst), e, hint)
                             : pd(d(src, diff_w, diff_bias, diff_dst), e, hint);
#endif
}

// ---- batch normalization (src and dst share `data`) ----------------------------------------------
inline dnnl::batch_normalization_forward::primitive_desc bnorm_forward(
    const engine& e, prop_kind prop, const md& data, float eps, dnnl::normalization_flags flags) {
  using pd = dnnl::batch_normalization_forward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, prop, data, data, eps, flags);
#else
  return pd(dnnl::batch_normalization_forward::desc(prop, data, eps, flags), e);
#endif
}

// 2.6's backward execution insists on DNNL_ARG_SHIFT with use_shift; 3.x rejects the extra input.
inline constexpr bool kBnormBackwardTakesShift = !kV3;

inline dnnl::batch_normalization_backward::primitive_desc bnorm_backward(
    const engine& e, const md& data, float eps, dnnl::normalization_flags flags,
    const dnnl::batch_normalization_forward::primitive_desc& hint) {
  using pd = dnnl::batch_normalization_backward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, prop_kind::backward, data, data, data, eps, flags, hint);
#else
  return pd(dnnl::batch_normalization_backward::desc(prop_kind::backward, data, data, eps, flags), e,
            hint);
#endif
}

// ---- eltwise (src, dst and their gradients share `data`) -----------------------------------------
inline dnnl::eltwise_forward::primitive_desc eltwise_forward(const engine& e, prop_kind prop,
                                                             algorithm alg, const md& data) {
  using pd = dnnl::eltwise_forward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, prop, alg, data, data, 0.f, 0.f);
#else
  return pd(dnnl::eltwise_forward::desc(prop, alg, data, 0.f, 0.f), e);
#endif
}

inline dnnl::eltwise_backward::primitive_desc eltwise_backward(
    const engine& e, algorithm alg, const md& data, const dnnl::eltwise_forward::primitive_desc& hint) {
  using pd = dnnl::eltwise_backward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, alg, data, data, data, 0.f, 0.f, hint);
#else
  return pd(dnnl::eltwise_backward::desc(alg, data, data, 0.f, 0.f), e, hint);
#endif
}

// ---- pooling (no dilation) -----------------------------------------------------------------------
inline dnnl::pooling_forward::primitive_desc pooling_forward(const engine& e, prop_kind prop,
                                                             algorithm alg, const md& src,
                                                             const md& dst, const dims& strides,
                                                             const dims& kernel, const dims& pad_l,
                                                             const dims& pad_r) {
  using pd = dnnl::pooling_forward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, prop, alg, src, dst, strides, kernel, dims(kernel.size(), 0), pad_l, pad_r);
#else
  return pd(dnnl::pooling_forward::desc(prop, alg, src, dst, strides, kernel, pad_l, pad_r), e);
#endif
}

inline dnnl::pooling_backward::primitive_desc pooling_backward(
    const engine& e, algorithm alg, const md& diff_src, const md& diff_dst, const dims& strides,
    const dims& kernel, const dims& pad_l, const dims& pad_r,
    const dnnl::pooling_forward::primitive_desc& hint) {
  using pd = dnnl::pooling_backward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, alg, diff_src, diff_dst, strides, kernel, dims(kernel.size(), 0), pad_l, pad_r, hint);
#else
  return pd(dnnl::pooling_backward::desc(alg, diff_src, diff_dst, strides, kernel, pad_l, pad_r), e,
            hint);
#endif
}

// ---- local response normalization (src, dst and their gradients share `data`) -------------------
struct LrnParams {
  dnnl::memory::dim size;
  float alpha, beta, k;
};

inline dnnl::lrn_forward::primitive_desc lrn_forward(const engine& e, prop_kind prop, algorithm alg,
                                                     const md& data, const LrnParams& p) {
  using pd = dnnl::lrn_forward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, prop, alg, data, data, p.size, p.alpha, p.beta, p.k);
#else
  return pd(dnnl::lrn_forward::desc(prop, alg, data, p.size, p.alpha, p.beta, p.k), e);
#endif
}

inline dnnl::lrn_backward::primitive_desc lrn_backward(const engine& e, algorithm alg, const md& data,
                                                       const LrnParams& p,
                                                       const dnnl::lrn_forward::primitive_desc& hint) {
  using pd = dnnl::lrn_backward::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, alg, data, data, data, p.size, p.alpha, p.beta, p.k, hint);
#else
  return pd(dnnl::lrn_backward::desc(alg, data, data, p.size, p.alpha, p.beta, p.k), e, hint);
#endif
}

// ---- binary --------------------------------------------------------------------------------------
inline dnnl::binary::primitive_desc binary(const engine& e, algorithm alg, const md& a, const md& b,
                                           const md& dst, const primitive_attr& attr) {
  using pd = dnnl::binary::primitive_desc;
#if DNNL_VERSION_MAJOR >= 3
  return pd(e, alg, a, b, dst, attr);
#else
  return pd(dnnl::binary::desc(alg, a, b, dst), attr, e);
#endif
}

// ---- int8 scales ---------------------------------------------------------------------------------
// A convolution's or inner product's int8 scales: the src's per tensor, the weights' per output
// channel (weights dimension 0, dst dimension 1), and where dst is itself int8 its own per tensor
// (dst_int = result / dst; 0: an FP32 dst). 2.x bakes src * weights / dst into the primitive as
// output scales and adds the bias before it scales (so the bias arrives divided by src * weights);
// 3.x takes the scales at execution (int8_scale_arg) and adds the bias as it is.
inline constexpr bool kInt8BiasScaled = !kV3;

inline void set_int8_scales(primitive_attr& a, float src, const std::vector<float>& weights, float dst = 0.0f) {
#if DNNL_VERSION_MAJOR >= 3
  (void)src;
  (void)weights;
  a.set_scales_mask(DNNL_ARG_SRC, 0);
  a.set_scales_mask(DNNL_ARG_WEIGHTS, 1 << 0);
  if (dst > 0.0f) a.set_scales_mask(DNNL_ARG_DST, 0);
#else
  std::vector<float> out(weights.size());
  for (std::size_t o = 0; o < weights.size(); ++o) out[o] = dst > 0.0f ? src * weights[o] / dst : src * weights[o];
  a.set_output_scales(1 << 1, out);
#endif
}

// The sum post-op of an int8 residual: dst = result + shortcut, the shortcut stored as integers of
// `type` at scale `shortcut`, dst as integers at scale `dst`. 2.x adds the stored integer scaled
// into dst's units (shortcut / dst); 3.x adds shortcut * integer to the result before it divides
// the whole by dst's scale.
inline void append_int8_sum(dnnl::post_ops& ops, float shortcut, float dst, dnnl::memory::data_type type) {
#if DNNL_VERSION_MAJOR >= 3
  (void)dst;
  ops.append_sum(shortcut, 0, type);
#else
  ops.append_sum(shortcut / dst, type);
#endif
}

// `d` with another data type of the same size, in the same format; nullopt where 3.x has no way
// to state it (a format with inner blocks: 3.x builds a desc from strides only).
inline std::optional<md> with_data_type(const md& d, dnnl::memory::data_type type) {
#if DNNL_VERSION_MAJOR >= 3
  if (d.get_inner_nblks() != 0) return std::nullopt;
  return md(d.get_dims(), type, d.get_strides());
#else
  dnnl_memory_desc_t c = d.data;
  c.data_type = static_cast<dnnl_data_type_t>(type);
  return md(c);
#endif
}

// A reorder from f32 into int8 that divides by `scale` (then rounds to nearest and saturates).
inline void set_quantize_scale(primitive_attr& a, float scale) {
#if DNNL_VERSION_MAJOR >= 3
  (void)scale;
  a.set_scales_mask(DNNL_ARG_DST, 0);
#else
  a.set_output_scales(0, {1.0f / scale});
#endif
}

// A reorder from int8 into f32 that multiplies by `scale` (the int8 tensor's own); 3.x takes it as
// the src's scale at execution (int8_scale_arg with DNNL_ARG_SRC).
inline void set_dequantize_scale(primitive_attr& a, float scale) {
#if DNNL_VERSION_MAJOR >= 3
  (void)scale;
  a.set_scales_mask(DNNL_ARG_SRC, 0);
#else
  a.set_output_scales(0, {scale});
#endif
}

// 3.x: the execution argument carrying the scales of `arg` (the caller's floats, which must
// outlive the execution); 2.x: nothing (the scales are in the primitive).
inline void int8_scale_arg(std::unordered_map<int, dnnl::memory>& args, const engine& e, int arg, const float* values,
                           std::size_t count) {
#if DNNL_VERSION_MAJOR >= 3
  args[DNNL_ARG_ATTR_SCALES | arg] = dnnl::memory(md({static_cast<dims::value_type>(count)}, dnnl::memory::data_type::f32,
                                                     dnnl::memory::format_tag::x),
                                                  e, const_cast<float*>(values));
#else
  (void)args;
  (void)e;
  (void)arg;
  (void)values;
  (void)count;
#endif
}

// ---- the instruction set the kernels use ---------------------------------------------------------
// oneDNN's name for its effective (detected, possibly capped by ONEDNN_MAX_CPU_ISA /
// DNNL_MAX_CPU_ISA) instruction set: what the JIT kernels were generated for.
inline const char* isa_name(dnnl::cpu_isa isa) {
  using dnnl::cpu_isa;
  switch (isa) {
    case cpu_isa::sse41: return "sse41";
    case cpu_isa::avx: return "avx";
    case cpu_isa::avx2: return "avx2";
    case cpu_isa::avx2_vnni: return "avx2_vnni";
#if DNNL_VERSION_MAJOR >= 3
    case cpu_isa::avx2_vnni_2: return "avx2_vnni_2";
    case cpu_isa::avx512_core_fp16: return "avx512_core_fp16";
    case cpu_isa::avx512_core_amx_fp16: return "avx512_core_amx_fp16";
#else
    case cpu_isa::avx512_mic: return "avx512_mic";
    case cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
#endif
    case cpu_isa::avx512_core: return "avx512_core";
    case cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "unknown";
  }
}

}  // namespace hpcnn::dnnl_impl::compat
