// Max pooling (with workspace for backward), average pooling including padding, and global
// average pooling, all on the input's own layout.
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {
namespace {

using namespace dnnl;

class PoolingOp final : public Op {
 public:
  PoolingOp(const ContextPtr& c, const Node& node, const Tensor& src, Mode mode, Tensor& dst)
      : ctx_(c) {
    const OpAttr& a = node.attr;
    const Shape in = src.shape;
    dst.shape = Shape{in.n, node.out.c, node.out.h, node.out.w};
    const Shape out = dst.shape;
    memory::dims kernel = {a.kh, a.kw}, strides = {a.sh, a.sw}, pad_l = {a.ph, a.pw};
    algorithm alg = node.kind == OpKind::MaxPool ? algorithm::pooling_max
                                                 : algorithm::pooling_avg_include_padding;
    if (node.kind == OpKind::GlobalAvgPool) {
      kernel = {in.h, in.w};
      strides = {1, 1};
      pad_l = {0, 0};
      alg = algorithm::pooling_avg_exclude_padding;
    }
    const memory::dims pad_r = {(out.h - 1) * strides[0] + kernel[0] - in.h - pad_l[0],
                                (out.w - 1) * strides[1] + kernel[1] - in.w - pad_l[1]};
    // A plain 1x1 input (ResNet's global pooling after its last block) is also channels-last, for
    // which oneDNN has a JIT kernel (plain NCHW gets simple_nchw: 0.8 ms for 64x2048x1x1, 1.7%
    // of resnet50's inference). Inference reads it so; training keeps the plain desc, whose
    // gradient would otherwise need a reorder.
    plain_1x1_as_nhwc_ = mode == Mode::Infer && in.h == 1 && in.w == 1 && is_plain(desc_of(src), in);
    const memory::desc data =
        plain_1x1_as_nhwc_ ? memory::desc(dims_of(in), dt::f32, tag::nhwc) : desc_of(src);
    const auto prop = mode == Mode::Train ? prop_kind::forward_training : prop_kind::forward_inference;
    fwd_pd_ = compat::pooling_forward(c->engine, prop, alg, data, any_desc(out), strides, kernel,
                                      pad_l, pad_r);
    fwd_ = pooling_forward(fwd_pd_);
    dst.layout = make_layout(fwd_pd_.dst_desc(), out);
    src_in_ = Converter(c, data);
    src_m_ = Mem(*c, data);
    dst_m_ = Mem(*c, fwd_pd_.dst_desc());
    const memory::desc ws = fwd_pd_.workspace_desc();
    if (!ws.is_zero()) {
      ws_m_ = Mem(*c, ws);
      ws_buf_.reserve(ws.get_size());
      has_ws_ = true;
    }
    if (mode != Mode::Train) return;
    bwd_ = pooling_backward(compat::pooling_backward(c->engine, alg, data, fwd_pd_.dst_desc(), strides,
                                                     kernel, pad_l, pad_r, fwd_pd_));
    diff_dst_in_ = Converter(c, fwd_pd_.dst_desc());
    diff_src_out_ = Converter(c, data);
    diff_dst_m_ = Mem(*c, fwd_pd_.dst_desc());
    diff_src_m_ = Mem(*c, data);
  }

  void forward(const OpContext& x) override {
    const float* src = plain_1x1_as_nhwc_ ? x.src[0]->data : src_in_.get(*x.src[0]);  // the same bytes
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_.bind(src)},
                                            {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}};
    if (has_ws_) args[DNNL_ARG_WORKSPACE] = ws_m_.bind(ws_buf_.data());
    execute(*ctx_, fwd_, args);
  }

  // Max pooling keeps its arg-max in its own workspace; average pooling needs nothing.
  BackwardReads backward_reads() const override { return {false, false}; }

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    float* out = diff_src_out_.target(*ds);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_DIFF_DST, diff_dst_m_.bind(diff_dst_in_.get(*x.diff_dst))},
        {DNNL_ARG_DIFF_SRC, diff_src_m_.bind(out)}};
    if (has_ws_) args[DNNL_ARG_WORKSPACE] = ws_m_.bind(ws_buf_.data());
    execute(*ctx_, bwd_, args);
    diff_src_out_.finish(*ds);
  }

 private:
  ContextPtr ctx_;
  bool has_ws_ = false;
  bool plain_1x1_as_nhwc_ = false;
  Buffer ws_buf_;
  pooling_forward::primitive_desc fwd_pd_;
  pooling_forward fwd_;
  pooling_backward bwd_;
  Converter src_in_, diff_dst_in_, diff_src_out_;
  Mem src_m_, dst_m_, ws_m_, diff_dst_m_, diff_src_m_;
};

}  // namespace

std::unique_ptr<Op> make_pooling(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<PoolingOp>(c, node, *src[0], mode, dst);
}

}  // namespace hpcnn::dnnl_impl
