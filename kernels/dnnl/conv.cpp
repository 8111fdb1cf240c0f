// Convolution: forward, backward data and backward weights (with bias) as oneDNN primitives.
// Activations and weights use the formats the forward primitive prefers (format_tag::any); the
// canonical OIHW weights are reordered each step, diff weights reordered back to OIHW. 3x3 stride-1
// layers may use Winograd (Context::conv_algorithm). An inference convolution may carry a folded
// batch norm (its weights scaled and a bias added per output channel, recomputed when the
// parameters or statistics change), and a residual Add as a sum post-op onto the shortcut, which
// is then its dst (before the ReLU post-op). In bf16 (Context::compute) the src, weights and
// diff_dst are converted to bf16 on the way in; dst, diff_src and diff weights stay f32. In int8
// (Context::int8, inference) the same layer runs on quantized inputs (int8.hpp) where oneDNN has an
// optimized int8 kernel for it, in FP32 otherwise; its output is quantized where every reader
// takes int8 (Epilogue::readers), and a residual sum onto a quantized shortcut is quantized too.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/dnnl/conv_batch_gemm.hpp"
#include "kernels/dnnl/int8.hpp"
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {
namespace {

using namespace dnnl;

// Post-ops of a convolution's epilogue: dst = [relu](conv + [dst before]).
primitive_attr epilogue_attr(bool sum, bool relu) {
  if (!sum) return relu_post_op(relu);
  primitive_attr attr;
  post_ops ops;
  ops.append_sum(1.0f);
  if (relu) compat::append_relu(ops);
  attr.set_post_ops(ops);
  return attr;
}

// The dst format of a convolution that adds onto `shortcut`: the shortcut's own. On a 1x1 map
// plain NCHW and channels-last are the same bytes, and the convolution kernels want the latter.
memory::desc residual_dst(const Tensor& shortcut) {
  const Shape s = shortcut.shape;
  const memory::desc d = desc_of(shortcut);
  if (s.h == 1 && s.w == 1 && is_plain(d, s)) return memory::desc(dims_of(s), compat::data_type_of(d), tag::nhwc);
  return d;
}

// An int8 residual onto a shortcut stored quantized: the sum is stored quantized too, in the
// shortcut's bytes and format, at the scale of its own calibrated range; in u8 after a ReLU where
// the format can say so (the sum reads the s8 shortcut as s8), else in the shortcut's type. False
// where it cannot be (no range): the executor then adds separately.
bool quantize_residual(const Context& c, const Tensor& shortcut, const Epilogue& e, Int8Layer& l) {
  const std::optional<ValueRange> range = output_range(c, e.result);
  if (!range) return false;
  l.shortcut = stored_quantization(c, shortcut);
  const memory::desc d = residual_dst(shortcut);
  l.out = activation_quantization(*range);
  const std::optional<memory::desc> own = compat::with_data_type(d, l.out->type);
  if (!own) l.out = activation_quantization(*range, l.shortcut->type);
  if (!l.out) return false;
  l.dst = own ? *own : d;
  return true;
}

// A convolution's sizes and types as oneDNN takes them: w_any the weights as the primitive reads
// them (compute type), dw_any their gradient (f32).
struct ConvGeometry {
  Shape in, out;
  dt compute;
  memory::dims strides, pad_l, pad_r;
  memory::desc w_any, dw_any, w_plain, b_desc;
};

ConvGeometry conv_geometry(const OpAttr& a, const Shape& in, const Shape& out, dt compute) {
  const memory::dims wdims = {out.c, in.c, a.kh, a.kw};
  ConvGeometry g{in, out, compute, {a.sh, a.sw}, {a.ph, a.pw},
                 {(out.h - 1) * a.sh + a.kh - in.h - a.ph, (out.w - 1) * a.sw + a.kw - in.w - a.pw},
                 memory::desc(wdims, compute, tag::any), memory::desc(wdims, dt::f32, tag::any),
                 memory::desc(wdims, dt::f32, tag::oihw), memory::desc({out.c}, dt::f32, tag::x)};
  return g;
}

// The activation formats a forward primitive is made with: format_tag::any (the primitive's
// choice) or a concrete one (channels-last, or the shortcut's format under a residual add). src is
// of the compute type, dst f32.
struct ConvFormats {
  memory::desc src, dst;
  bool channels_last = false;
};

class ConvOp final : public Op {
 public:
  // shortcut: the residual Add's other input (Epilogue::add), or nullptr.
  ConvOp(const ContextPtr& c, const Node& node, const Tensor& src, const Tensor* shortcut, Mode mode, Tensor& dst,
         const Epilogue& e)
      : ctx_(c), train_(mode == Mode::Train), conv_bias_(node.attr.bias),
        bias_(node.attr.bias || e.batch_norm), relu_(e.relu), fold_(e.batch_norm != nullptr),
        residual_(shortcut != nullptr) {
    if ((fold_ || residual_) && train_)
      throw std::logic_error("dnnl conv: a batch norm or a residual add is fused only in inference");
    if (fold_) bn_eps_ = e.batch_norm->attr.eps;
    const OpAttr& a = node.attr;
    dst.shape = Shape{src.shape.n, node.out.c, node.out.h, node.out.w};
    const ConvGeometry g = conv_geometry(a, src.shape, dst.shape, c->compute);
    weight_count_ = static_cast<std::size_t>(g.out.c) * g.in.c * a.kh * a.kw;
    // A residual op writes over the shortcut: the dst format is the shortcut's.
    ConvFormats f{any_desc(g.in, g.compute), residual_ ? residual_dst(*shortcut) : any_desc(g.out)};
    choose_algorithm(g, a, f);
    if (residual_) residual_same_kernel_ = residual_keeps_kernel(g, f);
    if (alg_ == algorithm::convolution_direct && !residual_) prefer_channels_last(g, f);
    fwd_ = convolution_forward(fwd_pd_);
    dst.layout = residual_ ? shortcut->layout : make_layout(fwd_pd_.dst_desc(), g.out);
    set_up_forward_memory(g);
    if (!train_) return;
    if (relu_) relu_grad_ = FusedReluGrad(c, fwd_pd_.dst_desc());
    set_up_backward_data(g, f);
    set_up_backward_weights(g, a);
  }

  // A residual epilogue runs in the kernel the plain convolution gets (else make_conv declines
  // it: the separate add is cheaper than a slower convolution kernel).
  bool residual_pays() const { return residual_same_kernel_ && !is_reference_impl(fwd_pd_); }

  void forward(const OpContext& x) override {
    src_ = src_in_.get(*x.src[0]);
    // The sum post-op adds onto dst: it must hold the shortcut (the executor passes the shortcut's
    // own tensor as dst; anyone else gets a copy made here).
    if (residual_ && x.dst->data != x.src.back()->data)
      std::memcpy(x.dst->data, x.src.back()->data, fwd_pd_.dst_desc().get_size());
    const float* canonical = fold_ ? folded(x) : x.weights;  // weights, then the bias if any
    const float* w = w_in_.get(canonical, w_plain_, x.params_version);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_.bind(src_)},
                                            {DNNL_ARG_WEIGHTS, w_m_.bind(w)},
                                            {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}};
    if (bias_) args[DNNL_ARG_BIAS] = b_m_.bind(canonical + weight_count_);
    execute(*ctx_, fwd_, args);
  }

  // The src for the weight gradient; the output only for a fused ReLU's mask.
  BackwardReads backward_reads() const override { return {true, relu_}; }

  void backward(const OpContext& x) override {
    const Tensor diff_dst = relu_ ? relu_grad_.run(x) : *x.diff_dst;
    bw_diff_dst_ = nullptr;
    // Weights first: oneDNN's threading keeps the src/diff_dst of the forward hot.
    if (batch_dw_) {
      batch_dw_->run(*x.src[0], diff_dst, x.diff_weights);
    } else {
      backward_weights(x, diff_dst);
    }

    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    float* out = bd_diff_src_out_.target(*ds);
    // (the conversion backward_weights made, where it wants the same format)
    const float* dd = bw_diff_dst_ && bd_diff_dst_in_.want() == bw_diff_dst_in_.want() ? bw_diff_dst_
                                                                                      : bd_diff_dst_in_.get(diff_dst);
    execute(*ctx_, bwd_data_,
            {{DNNL_ARG_DIFF_DST, bd_diff_dst_m_.bind(dd)},
             {DNNL_ARG_WEIGHTS, bd_w_m_.bind(bd_weights())},
             {DNNL_ARG_DIFF_SRC, bd_diff_src_m_.bind(out)}});
    bd_diff_src_out_.finish(*ds);
  }

 private:
  convolution_forward::primitive_desc make_forward(const ConvGeometry& g, const ConvFormats& f, bool sum) const {
    return compat::conv_forward(ctx_->engine, train_ ? prop_kind::forward_training : prop_kind::forward_inference, alg_,
                                f.src, g.w_any, bias_ ? g.b_desc : memory::desc(), f.dst, g.strides, g.pad_l,
                                g.pad_r, epilogue_attr(sum, relu_));
  }

  // Sets alg_ and fwd_pd_. f32 3x3 stride-1 layers with enough channels and an output of at least 4x4
  // (its 4x4 tiles waste most of the work on 2x2 and 1x1 maps: measured 2-9x slower there): let
  // oneDNN choose Winograd where its heuristics expect it to be faster (about 2x on AVX-512 for
  // ResNet and AlexNet shapes, fwd and bwd), unless the context asks for direct convolution only.
  void choose_algorithm(const ConvGeometry& g, const OpAttr& a, const ConvFormats& f) {
    alg_ = algorithm::convolution_direct;
    if (ctx_->conv_algorithm == ConvAlgorithm::Auto && g.compute == dt::f32 && a.kh == 3 && a.kw == 3 && a.sh == 1 && a.sw == 1 &&
        g.in.c >= 16 && g.out.c >= 16 && g.out.h >= 4 && g.out.w >= 4) {
      alg_ = algorithm::convolution_auto;
      fwd_pd_ = make_forward(g, f, residual_);
      if (std::string(fwd_pd_.impl_info_str()).find("wino") == std::string::npos)
        alg_ = algorithm::convolution_direct;
    }
    if (alg_ == algorithm::convolution_direct) fwd_pd_ = make_forward(g, f, residual_);
  }

  // The sum is worth it only where the kernel stays the one the plain convolution (its own dst
  // format, no sum) gets: oneDNN 2.6 on AVX-512 runs resnet50's 1x1 convolutions onto a plain
  // 1x1 map in its gemm fallback, 3-7x slower than brgemm (10.1 ms instead of 1.4).
  bool residual_keeps_kernel(const ConvGeometry& g, const ConvFormats& f) const {
    const ConvFormats plain{f.src, any_desc(g.out)};
    return std::string(fwd_pd_.impl_info_str()) == make_forward(g, plain, false).impl_info_str();
  }

  // Blocked formats pad channels to the block (16 on AVX-512: 6 -> 16): LeNet's 6-channel maps
  // would cost the following ReLU, pooling and their backward 2.7x the memory traffic, and
  // backward weights of a 6-channel input falls back to an AVX2 kernel. Where the padding wastes
  // more than a quarter of a tensor, channels-last (unpadded, with its own optimized kernels) is
  // used instead: measured for LeNet-5's conv2, backward weights 0.16 ms instead of 0.36 ms.
  // AVX2's block is 8 (6 -> 8 wastes a quarter): there LeNet-5 stays blocked.
  // Channels-last also where the blocked choice is the gemm fallback, which writes plain NCHW:
  // the ops after it would get no JIT kernel (AlexNet's 11x11/4 first layer on AVX2: its max
  // pool ran simple_nchw, 3.9 ms instead of 0.1).
  void prefer_channels_last(const ConvGeometry& g, ConvFormats& f) {
    const int block = fwd_pd_.dst_desc() == memory::desc(dims_of(g.out), dt::f32, tag::nChw8c) ? 8 : 16;
    auto block_waste = [block](int channels) {
      return 1.0 - channels / static_cast<double>(block * ((channels + block - 1) / block));
    };
    const bool wasteful = block_waste(g.out.c) > 0.25 || (g.in.c > 4 && block_waste(g.in.c) > 0.25);
    const bool plain_gemm = is_gemm_fallback(fwd_pd_) && is_plain(fwd_pd_.dst_desc(), g.out);
    if (!wasteful && !plain_gemm) return;
    const ConvFormats last{memory::desc(dims_of(g.in), g.compute, tag::nhwc),
                           memory::desc(dims_of(g.out), dt::f32, tag::nhwc), true};
    const auto channels_last = make_forward(g, last, false);
    if (is_reference_impl(channels_last)) return;
    fwd_pd_ = channels_last;
    f = last;
  }

  void set_up_forward_memory(const ConvGeometry& g) {
    const ContextPtr& c = ctx_;
    src_in_ = Converter(c, fwd_pd_.src_desc());
    w_in_ = WeightCache(c, fwd_pd_.weights_desc());
    w_plain_ = g.w_plain;
    src_m_ = Mem(*c, fwd_pd_.src_desc());
    w_m_ = Mem(*c, fwd_pd_.weights_desc());
    b_m_ = Mem(*c, g.b_desc);
    dst_m_ = Mem(*c, fwd_pd_.dst_desc());
  }

  // Backward data: diff_src and weights in the formats it likes (for a plain 3-channel input
  // the forward's nchw src would get only the reference implementation; a blocked diff_src
  // plus one reorder is much faster). A channels-last layer keeps channels-last gradients. In
  // bf16 diff_dst arrives in f32 and is converted anyway: the primitive chooses its format.
  void set_up_backward_data(const ConvGeometry& g, const ConvFormats& f) {
    const ContextPtr& c = ctx_;
    auto make_bd = [&](const memory::desc& diff_src_d, const memory::desc& diff_dst_d) {
      return compat::conv_backward_data(c->engine, alg_, diff_src_d, g.w_any, diff_dst_d, g.strides, g.pad_l,
                                        g.pad_r, fwd_pd_);
    };
    if (g.compute == dt::f32) {
      bwd_data_pd_ = make_bd(f.src, fwd_pd_.dst_desc());
    } else if (f.channels_last) {
      bwd_data_pd_ = make_bd(memory::desc(dims_of(g.in), dt::f32, tag::nhwc),
                             memory::desc(dims_of(g.out), g.compute, tag::nhwc));
    } else {
      bwd_data_pd_ = make_bd(any_desc(g.in), any_desc(g.out, g.compute));
    }
    if (is_reference_impl(bwd_data_pd_)) bwd_data_pd_ = make_bd(any_desc(g.in), any_desc(g.out, g.compute));
    bwd_data_ = convolution_backward_data(bwd_data_pd_);
    bd_w_in_ = Converter(c, bwd_data_pd_.weights_desc());
    bd_diff_dst_in_ = Converter(c, bwd_data_pd_.diff_dst_desc());
    bd_diff_src_out_ = Converter(c, bwd_data_pd_.diff_src_desc());
    bd_w_m_ = Mem(*c, bwd_data_pd_.weights_desc());
    bd_diff_dst_m_ = Mem(*c, bwd_data_pd_.diff_dst_desc());
    bd_diff_src_m_ = Mem(*c, bwd_data_pd_.diff_src_desc());
  }

  // Backward weights (and bias): with the forward's src/diff_dst formats when oneDNN has an
  // optimized implementation for them, else with the formats it prefers (small-channel layers
  // with a plain src would otherwise get the reference implementation). In bf16 the diff_dst
  // format of backward data, so that one conversion of diff_dst serves both.
  void set_up_backward_weights(const ConvGeometry& g, const OpAttr& a) {
    const ContextPtr& c = ctx_;
    auto make_bw = [&](const memory::desc& src_d, const memory::desc& diff_dst_d) {
      return compat::conv_backward_weights(c->engine, alg_, src_d, g.dw_any, conv_bias_ ? g.b_desc : memory::desc(),
                                           diff_dst_d, g.strides, g.pad_l, g.pad_r, fwd_pd_);
    };
    bwd_w_pd_ = make_bw(fwd_pd_.src_desc(), g.compute == dt::f32 ? fwd_pd_.dst_desc() : bwd_data_pd_.diff_dst_desc());
    // bf16 has no one-GEMM-over-the-batch of its own (BatchGemmWeights is fp32): where these
    // formats get oneDNN's per-image gemm, the formats the primitive prefers if they get a kernel.
    // (LeNet-5's channels-last first layer, 3 channels, on Zen 4: its diff_dst channels-last as
    // the forward's dst, 0.34 ms; plain, oneDNN 2.6 ran the per-image gemm, 4.9 ms.)
    if (g.compute != dt::f32 && (is_reference_impl(bwd_w_pd_) || is_gemm_fallback(bwd_w_pd_))) {
      const auto preferred = make_bw(any_desc(g.in, g.compute), any_desc(g.out, g.compute));
      if (!is_reference_impl(preferred) && !is_gemm_fallback(preferred)) bwd_w_pd_ = preferred;
    }
    if (is_reference_impl(bwd_w_pd_)) bwd_w_pd_ = make_bw(any_desc(g.in, g.compute), any_desc(g.out, g.compute));
    bwd_w_ = convolution_backward_weights(bwd_w_pd_);
    // Where oneDNN falls back to a GEMM per image (AVX2, kernel larger than the map), one GEMM
    // over the batch instead, while its im2col matrix stays small (AlexNet's first layer at
    // 224x224 would need 280 MB).
    const double col_bytes = 4.0 * g.in.c * a.kh * a.kw * g.out.n * g.out.h * g.out.w;
    if (g.compute == dt::f32 && is_gemm_fallback(bwd_w_pd_) && col_bytes <= kMaxBatchGemmColBytes)
      batch_dw_ = std::make_unique<BatchGemmWeights>(c, a, g.in, g.out, conv_bias_);
    bw_src_in_ = Converter(c, bwd_w_pd_.src_desc());
    bw_diff_dst_in_ = Converter(c, bwd_w_pd_.diff_dst_desc());
    bw_dw_out_ = Converter(c, bwd_w_pd_.diff_weights_desc());
    bw_src_m_ = Mem(*c, bwd_w_pd_.src_desc());
    bw_diff_dst_m_ = Mem(*c, bwd_w_pd_.diff_dst_desc());
    bw_dw_m_ = Mem(*c, bwd_w_pd_.diff_weights_desc());
    bw_db_m_ = Mem(*c, g.b_desc);
  }

  static constexpr double kMaxBatchGemmColBytes = 64.0 * 1024 * 1024;

  // oneDNN's backward weights (and bias).
  void backward_weights(const OpContext& x, const Tensor& diff_dst) {
    const float* src = bw_src_in_.want() == src_in_.want() ? src_ : bw_src_in_.get(*x.src[0]);
    float* dw = bw_dw_out_.target(x.diff_weights, w_plain_);
    bw_diff_dst_ = bw_diff_dst_in_.get(diff_dst);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, bw_src_m_.bind(src)},
        {DNNL_ARG_DIFF_DST, bw_diff_dst_m_.bind(bw_diff_dst_)},
        {DNNL_ARG_DIFF_WEIGHTS, bw_dw_m_.bind(dw)}};
    if (conv_bias_) args[DNNL_ARG_DIFF_BIAS] = bw_db_m_.bind(x.diff_weights + weight_count_);
    execute(*ctx_, bwd_w_, args);
    bw_dw_out_.finish(x.diff_weights, w_plain_);
  }

  // The weights in the backward-data format, from the forward's copy (the weights do not change
  // between forward and backward of one step): itself when the formats agree, else a reorder
  // between two blocked formats, 4x faster than from plain OIHW (512x512x3x3: 0.17 vs 0.72 ms).
  const float* bd_weights() { return bd_w_in_.get(w_in_.last(), w_in_.want()); }

  // The batch norm folded in (fold_batch_norm), redone when params_version changes (OpContext).
  const float* folded(const OpContext& x) {
    if (folded_version_ && x.params_version == folded_version_) return folded_.data();
    const auto oc = static_cast<std::size_t>(compat::dims_of(w_plain_)[0]);
    float* out = folded_.reserve((weight_count_ + oc) * sizeof(float));
    fold_batch_norm(x, weight_count_, oc, conv_bias_, bn_eps_, out);
    folded_version_ = x.params_version;
    return out;
  }

  ContextPtr ctx_;
  bool train_, conv_bias_, bias_, relu_, fold_, residual_;
  bool residual_same_kernel_ = false;
  float bn_eps_ = 0;
  Buffer folded_;
  std::uint64_t folded_version_ = 0;
  FusedReluGrad relu_grad_;
  dnnl::algorithm alg_ = dnnl::algorithm::convolution_direct;
  std::size_t weight_count_ = 0;
  memory::desc w_plain_;
  const float* src_ = nullptr;  // the forward's (possibly reordered) src, reused by backward
  const float* bw_diff_dst_ = nullptr;  // this step's diff_dst as backward weights read it

  convolution_forward::primitive_desc fwd_pd_;
  convolution_forward fwd_;
  Converter src_in_;
  WeightCache w_in_;
  Mem src_m_, w_m_, b_m_, dst_m_;

  convolution_backward_data::primitive_desc bwd_data_pd_;
  convolution_backward_data bwd_data_;
  Converter bd_w_in_, bd_diff_dst_in_, bd_diff_src_out_;
  Mem bd_w_m_, bd_diff_dst_m_, bd_diff_src_m_;

  convolution_backward_weights::primitive_desc bwd_w_pd_;
  convolution_backward_weights bwd_w_;
  Converter bw_src_in_, bw_diff_dst_in_, bw_dw_out_;
  Mem bw_src_m_, bw_diff_dst_m_, bw_dw_m_, bw_db_m_;
  std::unique_ptr<BatchGemmWeights> batch_dw_;  // instead of bwd_w_ where that is the gemm fallback
};

// int8 (Context::int8, inference): the same geometry and epilogue on quantized inputs (int8.hpp);
// nullptr where oneDNN has no optimized int8 kernel for it.
std::unique_ptr<Op> make_int8_conv(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst, const Epilogue& e) {
  const OpAttr& a = node.attr;
  const Shape in = src[0]->shape;
  const Tensor* shortcut = e.add ? src[1] : nullptr;
  Tensor out = dst;
  out.shape = Shape{in.n, node.out.c, node.out.h, node.out.w};
  const ConvGeometry g = conv_geometry(a, in, out.shape, dt::f32);
  Int8Layer l;
  l.name = node.name;
  l.src = in;
  l.weights = {out.shape.c, in.c, a.kh, a.kw};
  l.dst = shortcut ? residual_dst(*shortcut) : any_desc(out.shape);
  l.bias = a.bias || e.batch_norm;
  l.layer_bias = a.bias;
  l.sum = shortcut != nullptr;
  l.relu = e.relu;
  l.batch_norm = e.batch_norm;
  l.in = stored_quantization(*c, *src[0]);
  if (!shortcut) l.out = quantization_for(*c, e);
  if (shortcut && quantized_scale(*c, *shortcut) > 0.0f && !quantize_residual(*c, *shortcut, e, l)) return nullptr;
  l.make = [c, g](const memory::desc& s, const memory::desc& w, const memory::desc& b, const memory::desc& d,
                  const primitive_attr& attr) -> dnnl::primitive_desc {
    return compat::conv_forward(c->engine, prop_kind::forward_inference, algorithm::convolution_direct, s, w, b, d,
                                g.strides, g.pad_l, g.pad_r, attr);
  };
  std::unique_ptr<Op> op;
  try {
    op = make_int8_layer(c, std::move(l), out);
  } catch (const dnnl::error&) {
    return nullptr;  // no int8 primitive for this layer (with a residual: for the sum onto this format)
  }
  if (!op) return nullptr;
  if (shortcut && quantized_scale(*c, *shortcut) == 0.0f) out.layout = shortcut->layout;  // (int8: its own)
  dst = out;
  return op;
}

}  // namespace

void fold_batch_norm(const OpContext& x, std::size_t weight_count, std::size_t oc, bool conv_bias, float eps,
                     float* out) {
  if (!x.bn_weights || !x.bn_mean || !x.bn_var)
    throw std::logic_error("dnnl conv: folded batch norm without its parameters in the context");
  const std::size_t per = weight_count / oc;
  for (std::size_t o = 0; o < oc; ++o) {
    const double s = x.bn_weights[o] / std::sqrt(static_cast<double>(x.bn_var[o]) + eps);
    for (std::size_t k = 0; k < per; ++k) out[o * per + k] = static_cast<float>(x.weights[o * per + k] * s);
    const double b = conv_bias ? x.weights[weight_count + o] : 0.0;
    out[weight_count + o] = static_cast<float>(x.bn_weights[oc + o] + (b - x.bn_mean[o]) * s);
  }
}

std::unique_ptr<Op> make_conv(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                              const Epilogue& e) {
  if (c->int8 && mode == Mode::Infer) {
    if (e.add && src.size() != 2) return nullptr;
    std::unique_ptr<Op> op = make_int8_conv(c, node, src, dst, e);
    // A declined residual: the executor adds separately and asks again without it.
    if (op || e.add) return op;
    return make_fp32_fallback(c, node, src, [&](Inputs fp32) -> std::unique_ptr<Op> {
      return std::make_unique<ConvOp>(c, node, *fp32[0], nullptr, mode, dst, e);
    });
  }
  if (!e.add) return std::make_unique<ConvOp>(c, node, *src[0], nullptr, mode, dst, e);
  // A residual epilogue only where oneDNN runs it in an optimized kernel; else the executor falls
  // back to the separate add (dst is untouched until an op is returned).
  if (mode != Mode::Infer || src.size() != 2) return nullptr;
  Tensor out = dst;
  std::unique_ptr<ConvOp> op;
  try {
    op = std::make_unique<ConvOp>(c, node, *src[0], src[1], mode, out, e);
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for the sum post-op with this dst format
  }
  if (!op->residual_pays()) return nullptr;
  dst = out;
  return op;
}

}  // namespace hpcnn::dnnl_impl
