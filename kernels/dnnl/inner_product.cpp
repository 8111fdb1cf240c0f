// Fully connected layers as oneDNN inner products. The src (possibly blocked 4-D)
// layout is reordered to plain NCHW, so that the GEMM runs on the canonical [O][C*H*W] weights
// without any weight reorder (falling back to the formats the primitive prefers); dst is plain
// {n, O} = NCHW {n, O, 1, 1}. In bf16 (Context::compute) src, weights and diff_dst are converted
// to bf16 on the way in (in the formats the primitives choose: the weights are converted anyway);
// dst, diff_src and the weight gradients stay f32. In int8 (Context::int8, inference) the layer
// runs on quantized inputs (int8.hpp) where oneDNN has an optimized int8 kernel for it.
#include "kernels/dnnl/int8.hpp"
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {
namespace {

using namespace dnnl;

class InnerProductOp final : public Op {
 public:
  InnerProductOp(const ContextPtr& c, const Node& node, const Tensor& src, Mode mode, Tensor& dst,
                 bool relu)
      : ctx_(c), train_(mode == Mode::Train), bias_(node.attr.bias), relu_(relu) {
    const Shape in = src.shape;
    const int outs = node.attr.out_channels;
    dst.shape = Shape{in.n, outs, 1, 1};
    dst.layout = nullptr;
    weight_count_ = static_cast<std::size_t>(outs) * in.per_sample();
    const memory::dims wdims = {outs, in.c, in.h, in.w};
    const dt ct = c->compute;
    const bool low = ct != dt::f32;
    const memory::desc src_d = desc_of(src), w_any(wdims, ct, tag::any), dw_any(wdims, dt::f32, tag::any),
                       b_d({outs}, dt::f32, tag::x), dst_d({in.n, outs}, dt::f32, tag::nc),
                       diff_dst_d({in.n, outs}, ct, tag::nc);
    w_plain_ = memory::desc(wdims, dt::f32, tag::oihw);
    const auto prop = train_ ? prop_kind::forward_training : prop_kind::forward_inference;
    const memory::desc bias_d = bias_ ? b_d : memory::desc();
    auto make_fwd = [&](const memory::desc& s, const memory::desc& w) {
      return compat::ip_forward(c->engine, prop, s, w, bias_d, dst_d, relu_post_op(relu_));
    };
    // Plain src and plain (canonical) weights first: a GEMM on them needs no weight reorders, which
    // for large layers (AlexNet's 4096x4096) cost about as much as the GEMM, while reordering the
    // activation (batch x C*H*W) is cheap. Otherwise the src as it comes with the weights format
    // the primitive prefers, and as a last resort both chosen by the primitive.
    // In inference the weights are converted once per parameter version (OpContext::
    // params_version), so the weights format the primitive prefers costs nothing per pass and its
    // blocked kernels beat the plain GEMM (AlexNet's fc6/fc7).
    if (low) {
      fwd_pd_ = make_fwd(any_desc(in, ct), w_any);
    } else {
      fwd_pd_ = train_ ? make_fwd(plain_desc(in), w_plain_) : make_fwd(src_d, w_any);
      if (is_reference_impl(fwd_pd_)) fwd_pd_ = make_fwd(plain_desc(in), w_plain_);
      if (is_reference_impl(fwd_pd_)) fwd_pd_ = make_fwd(src_d, w_any);
      if (is_reference_impl(fwd_pd_)) fwd_pd_ = make_fwd(any_desc(in), w_any);
    }
    const memory::desc w_fwd = fwd_pd_.weights_desc();
    fwd_ = inner_product_forward(fwd_pd_);
    src_in_ = Converter(c, fwd_pd_.src_desc());
    w_in_ = WeightCache(c, fwd_pd_.weights_desc());
    src_m_ = Mem(*c, fwd_pd_.src_desc());
    w_m_ = Mem(*c, fwd_pd_.weights_desc());
    b_m_ = Mem(*c, b_d);
    dst_m_ = Mem(*c, dst_d);
    if (!train_) return;
    if (relu_) relu_grad_ = FusedReluGrad(c, dst_d);

    // Backward in the forward's formats when that has an optimized implementation (in bf16
    // diff_src is f32, in the format the primitive chooses).
    const memory::desc diff_src_d = low ? any_desc(in) : fwd_pd_.src_desc();
    auto make_bd = [&](const memory::desc& w) {
      return compat::ip_backward_data(c->engine, diff_src_d, w, diff_dst_d, fwd_pd_);
    };
    bd_pd_ = make_bd(w_fwd);
    if (is_reference_impl(bd_pd_)) bd_pd_ = make_bd(w_any);
    bwd_data_ = inner_product_backward_data(bd_pd_);
    bd_w_in_ = Converter(c, bd_pd_.weights_desc());
    bd_diff_src_out_ = Converter(c, bd_pd_.diff_src_desc());
    bd_w_m_ = Mem(*c, bd_pd_.weights_desc());
    bd_diff_src_m_ = Mem(*c, bd_pd_.diff_src_desc());

    auto make_bw = [&](const memory::desc& w) {
      return compat::ip_backward_weights(c->engine, fwd_pd_.src_desc(), w, bias_d, diff_dst_d, fwd_pd_);
    };
    bw_pd_ = make_bw(low ? dw_any : w_fwd);
    if (is_reference_impl(bw_pd_)) bw_pd_ = make_bw(low ? dw_any : w_any);
    bwd_w_ = inner_product_backward_weights(bw_pd_);
    bw_src_in_ = Converter(c, bw_pd_.src_desc());
    bw_dw_out_ = Converter(c, bw_pd_.diff_weights_desc());
    bw_src_m_ = Mem(*c, bw_pd_.src_desc());
    bw_dw_m_ = Mem(*c, bw_pd_.diff_weights_desc());
    bw_db_m_ = Mem(*c, b_d);
    // diff_dst arrives as plain NCHW {n, O, 1, 1}: the same bytes as {n, O} nc, of the compute type.
    diff_dst_plain_ = Converter(c, memory::desc(dims_of(dst.shape), ct, tag::nchw));
    diff_dst_m_ = Mem(*c, diff_dst_d);
  }

  void forward(const OpContext& x) override {
    src_ = src_in_.get(*x.src[0]);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src_m_.bind(src_)},
        {DNNL_ARG_WEIGHTS, w_m_.bind(w_in_.get(x.weights, w_plain_, x.params_version))},
        {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}};
    if (bias_) args[DNNL_ARG_BIAS] = b_m_.bind(x.weights + weight_count_);
    execute(*ctx_, fwd_, args);
  }

  BackwardReads backward_reads() const override { return {true, relu_}; }  // src; dst: ReLU mask

  void backward(const OpContext& x) override {
    memory& diff_dst = diff_dst_m_.bind(diff_dst_plain_.get(relu_ ? relu_grad_.run(x) : *x.diff_dst));
    const float* src = bw_src_in_.want() == src_in_.want() ? src_ : bw_src_in_.get(*x.src[0]);
    float* dw = bw_dw_out_.target(x.diff_weights, w_plain_);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, bw_src_m_.bind(src)},
                                            {DNNL_ARG_DIFF_DST, diff_dst},
                                            {DNNL_ARG_DIFF_WEIGHTS, bw_dw_m_.bind(dw)}};
    if (bias_) args[DNNL_ARG_DIFF_BIAS] = bw_db_m_.bind(x.diff_weights + weight_count_);
    execute(*ctx_, bwd_w_, args);
    bw_dw_out_.finish(x.diff_weights, w_plain_);

    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    float* out = bd_diff_src_out_.target(*ds);
    execute(*ctx_, bwd_data_,
            {{DNNL_ARG_DIFF_DST, diff_dst},
             {DNNL_ARG_WEIGHTS, bd_w_m_.bind(bd_w_in_.want() == w_in_.want()
                                                ? w_in_.last()
                                                : bd_w_in_.get(x.weights, w_plain_))},
             {DNNL_ARG_DIFF_SRC, bd_diff_src_m_.bind(out)}});
    bd_diff_src_out_.finish(*ds);
  }

 private:
  ContextPtr ctx_;
  bool train_, bias_, relu_;
  FusedReluGrad relu_grad_;
  std::size_t weight_count_ = 0;
  memory::desc w_plain_;
  const float* src_ = nullptr;  // forward's src and weights in the primitive's formats

  inner_product_forward::primitive_desc fwd_pd_;
  inner_product_forward fwd_;
  Converter src_in_;
  WeightCache w_in_;
  Mem src_m_, w_m_, b_m_, dst_m_;

  inner_product_backward_data::primitive_desc bd_pd_;
  inner_product_backward_data bwd_data_;
  Converter bd_w_in_, bd_diff_src_out_;
  Mem bd_w_m_, bd_diff_src_m_;

  inner_product_backward_weights::primitive_desc bw_pd_;
  inner_product_backward_weights bwd_w_;
  Converter bw_src_in_, bw_dw_out_, diff_dst_plain_;
  Mem bw_src_m_, bw_dw_m_, bw_db_m_, diff_dst_m_;
};

// int8 (Context::int8, inference): quantized inputs (int8.hpp); nullptr where oneDNN has no
// optimized int8 kernel for the layer.
std::unique_ptr<Op> make_int8_inner_product(const ContextPtr& c, const Node& node, const Tensor& src, Tensor& dst,
                                            bool relu) {
  const Shape in = src.shape;
  const int outs = node.attr.out_channels;
  Int8Layer l;
  l.name = node.name;
  l.src = in;
  l.weights = {outs, in.c, in.h, in.w};
  l.dst = memory::desc({in.n, outs}, dt::f32, tag::nc);
  l.bias = l.layer_bias = node.attr.bias;
  l.relu = relu;
  l.in = stored_quantization(*c, src);
  l.make = [c](const memory::desc& s, const memory::desc& w, const memory::desc& b, const memory::desc& d,
               const primitive_attr& attr) -> dnnl::primitive_desc {
    return compat::ip_forward(c->engine, prop_kind::forward_inference, s, w, b, d, attr);
  };
  Tensor out = dst;
  out.shape = Shape{in.n, outs, 1, 1};
  std::unique_ptr<Op> op;
  try {
    op = make_int8_layer(c, std::move(l), out);
  } catch (const dnnl::error&) {
    return nullptr;  // no int8 primitive for this layer
  }
  if (op) dst = out;
  return op;
}

}  // namespace

std::unique_ptr<Op> make_inner_product(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                       Tensor& dst, bool relu) {
  if (c->int8 && mode == Mode::Infer) {
    if (std::unique_ptr<Op> op = make_int8_inner_product(c, node, *src[0], dst, relu)) return op;
    return make_fp32_fallback(c, node, src, [&](Inputs fp32) -> std::unique_ptr<Op> {
      return std::make_unique<InnerProductOp>(c, node, *fp32[0], mode, dst, relu);
    });
  }
  return std::make_unique<InnerProductOp>(c, node, *src[0], mode, dst, relu);
}

}  // namespace hpcnn::dnnl_impl
