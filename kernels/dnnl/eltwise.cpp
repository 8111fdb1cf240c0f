// ReLU and tanh on the input's own layout (tanh's backward uses dst).
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {
namespace {

using namespace dnnl;

class EltwiseOp final : public Op {
 public:
  EltwiseOp(const ContextPtr& c, const Node& node, const Tensor& src, Mode mode, Tensor& dst)
      : ctx_(c), tanh_(node.kind == OpKind::Tanh) {
    dst.shape = src.shape;
    const memory::desc data = desc_of(src);
    dst.layout = make_layout(data, dst.shape);
    const algorithm alg = tanh_ ? algorithm::eltwise_tanh_use_dst_for_bwd : algorithm::eltwise_relu;
    const auto prop = mode == Mode::Train ? prop_kind::forward_training : prop_kind::forward_inference;
    fwd_pd_ = compat::eltwise_forward(c->engine, prop, alg, data);
    fwd_ = eltwise_forward(fwd_pd_);
    src_in_ = Converter(c, data);
    src_m_ = Mem(*c, data);
    dst_m_ = Mem(*c, data);
    if (mode != Mode::Train) return;
    bwd_ = eltwise_backward(compat::eltwise_backward(c->engine, alg, data, fwd_pd_));
    diff_dst_in_ = Converter(c, data);
    diff_src_out_ = Converter(c, data);
    diff_dst_m_ = Mem(*c, data);
    diff_src_m_ = Mem(*c, data);
  }

  void forward(const OpContext& x) override {
    src_ = src_in_.get(*x.src[0]);
    execute(*ctx_, fwd_, {{DNNL_ARG_SRC, src_m_.bind(src_)}, {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}});
  }

  BackwardReads backward_reads() const override { return {!tanh_, tanh_}; }  // ReLU: src, tanh: dst

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    float* out = diff_src_out_.target(*ds);
    execute(*ctx_, bwd_,
            {{tanh_ ? DNNL_ARG_DST : DNNL_ARG_SRC, src_m_.bind(tanh_ ? x.dst->data : src_)},
             {DNNL_ARG_DIFF_DST, diff_dst_m_.bind(diff_dst_in_.get(*x.diff_dst))},
             {DNNL_ARG_DIFF_SRC, diff_src_m_.bind(out)}});
    diff_src_out_.finish(*ds);
  }

 private:
  ContextPtr ctx_;
  bool tanh_;
  const float* src_ = nullptr;
  eltwise_forward::primitive_desc fwd_pd_;
  eltwise_forward fwd_;
  eltwise_backward bwd_;
  Converter src_in_, diff_dst_in_, diff_src_out_;
  Mem src_m_, dst_m_, diff_dst_m_, diff_src_m_;
};

}  // namespace

primitive_attr relu_post_op(bool relu) {
  primitive_attr attr;
  if (!relu) return attr;
  post_ops ops;
  compat::append_relu(ops);
  attr.set_post_ops(ops);
  return attr;
}

FusedReluGrad::FusedReluGrad(const ContextPtr& c, const memory::desc& data)
    : ctx_(c), bytes_(data.get_size()) {
  // relu_use_dst_for_bwd: the mask comes from the fused op's output (its input is never stored).
  const auto alg = algorithm::eltwise_relu_use_dst_for_bwd;
  const auto hint = compat::eltwise_forward(c->engine, prop_kind::forward_training, alg, data);
  bwd_ = eltwise_backward(compat::eltwise_backward(c->engine, alg, data, hint));
  dst_m_ = Mem(*c, data);
  diff_dst_m_ = Mem(*c, data);
  diff_src_m_ = Mem(*c, data);
}

Tensor FusedReluGrad::run(const OpContext& x, float* out) {
  Tensor g = *x.diff_dst;
  if (x.diff_dst_writable) out = x.diff_dst_writable->data;  // in place (oneDNN allows it)
  else if (!out) out = buf_.reserve(bytes_);
  execute(*ctx_, bwd_,
          {{DNNL_ARG_DST, dst_m_.bind(x.dst->data)},
           {DNNL_ARG_DIFF_DST, diff_dst_m_.bind(x.diff_dst->data)},
           {DNNL_ARG_DIFF_SRC, diff_src_m_.bind(out)}});
  g.data = out;
  return g;
}

std::unique_ptr<Op> make_eltwise(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<EltwiseOp>(c, node, *src[0], mode, dst);
}

}  // namespace hpcnn::dnnl_impl
