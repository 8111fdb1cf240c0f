// Local response normalization across channels. oneDNN's formula divides alpha by the window size
// exactly as graph.hpp's does, so the attributes pass through unchanged.
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {
namespace {

using namespace dnnl;

class LrnOp final : public Op {
 public:
  LrnOp(const ContextPtr& c, const Node& node, const Tensor& src, Mode mode, Tensor& dst) : ctx_(c) {
    const OpAttr& a = node.attr;
    dst.shape = src.shape;
    const memory::desc data = desc_of(src);
    dst.layout = make_layout(data, dst.shape);
    const auto prop = mode == Mode::Train ? prop_kind::forward_training : prop_kind::forward_inference;
    const compat::LrnParams p{a.lrn_size, a.lrn_alpha, a.lrn_beta, a.lrn_k};
    fwd_pd_ = compat::lrn_forward(c->engine, prop, algorithm::lrn_across_channels, data, p);
    fwd_ = lrn_forward(fwd_pd_);
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
    bwd_ = lrn_backward(compat::lrn_backward(c->engine, algorithm::lrn_across_channels, data, p, fwd_pd_));
    diff_dst_in_ = Converter(c, data);
    diff_src_out_ = Converter(c, data);
    diff_dst_m_ = Mem(*c, data);
    diff_src_m_ = Mem(*c, data);
  }

  void forward(const OpContext& x) override {
    src_ = src_in_.get(*x.src[0]);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_.bind(src_)},
                                            {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}};
    if (has_ws_) args[DNNL_ARG_WORKSPACE] = ws_m_.bind(ws_buf_.data());
    execute(*ctx_, fwd_, args);
  }

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    float* out = diff_src_out_.target(*ds);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src_m_.bind(src_)},
        {DNNL_ARG_DIFF_DST, diff_dst_m_.bind(diff_dst_in_.get(*x.diff_dst))},
        {DNNL_ARG_DIFF_SRC, diff_src_m_.bind(out)}};
    if (has_ws_) args[DNNL_ARG_WORKSPACE] = ws_m_.bind(ws_buf_.data());
    execute(*ctx_, bwd_, args);
    diff_src_out_.finish(*ds);
  }

 private:
  ContextPtr ctx_;
  bool has_ws_ = false;
  Buffer ws_buf_;
  const float* src_ = nullptr;
  lrn_forward::primitive_desc fwd_pd_;
  lrn_forward fwd_;
  lrn_backward bwd_;
  Converter src_in_, diff_dst_in_, diff_src_out_;
  Mem src_m_, dst_m_, ws_m_, diff_dst_m_, diff_src_m_;
};

}  // namespace

std::unique_ptr<Op> make_lrn(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<LrnOp>(c, node, *src[0], mode, dst);
}

}  // namespace hpcnn::dnnl_impl
