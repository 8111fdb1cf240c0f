// Batch normalization on the input's own layout: batch statistics in training (the running
// statistics in the network's buffers, OpContext::running_mean/running_var, are updated here with
// graph.hpp's momentum rule and unbiased variance); in inference oneDNN's use_global_stats reads
// the mean and variance memories, which are bound to those buffers (host memory). A fused ReLU
// is oneDNN's fuse_norm_relu: in training its workspace keeps the ReLU's mask for backward.
#include <stdexcept>
#include <string>

#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {
namespace {

using namespace dnnl;

class BatchNormOp final : public Op {
 public:
  BatchNormOp(const ContextPtr& c, const Node& node, const Tensor& src, Mode mode, Tensor& dst, bool relu)
      : ctx_(c), train_(mode == Mode::Train), momentum_(node.attr.momentum), channels_(src.shape.c) {
    dst.shape = src.shape;
    const memory::desc data = desc_of(src);
    dst.layout = make_layout(data, dst.shape);
    const Shape& s = src.shape;
    count_ = static_cast<double>(s.n) * s.h * s.w;
    name_ = node.name;

    auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
    if (relu) flags = flags | normalization_flags::fuse_norm_relu;
    const auto fwd_flags = train_ ? flags : flags | normalization_flags::use_global_stats;
    const auto prop = train_ ? prop_kind::forward_training : prop_kind::forward_inference;
    fwd_pd_ = compat::bnorm_forward(c->engine, prop, data, node.attr.eps, fwd_flags);
    fwd_ = batch_normalization_forward(fwd_pd_);
    const memory::desc cdesc({channels_}, dt::f32, tag::x);
    src_in_ = Converter(c, data);
    src_m_ = Mem(*c, data);
    dst_m_ = Mem(*c, data);
    scale_m_ = Mem(*c, cdesc);
    shift_m_ = Mem(*c, cdesc);
    mean_m_ = Mem(*c, fwd_pd_.mean_desc());
    var_m_ = Mem(*c, fwd_pd_.variance_desc());
    if (!train_) return;
    const memory::desc ws = fwd_pd_.workspace_desc();
    if (!ws.is_zero()) {
      ws_m_ = Mem(*c, ws);
      ws_.reserve(ws.get_size());
      has_ws_ = true;
    }
    mean_.reserve(channels_ * sizeof(float));
    var_.reserve(channels_ * sizeof(float));

    bwd_pd_ = compat::bnorm_backward(c->engine, data, node.attr.eps, flags, fwd_pd_);
    bwd_ = batch_normalization_backward(bwd_pd_);
    diff_dst_in_ = Converter(c, data);
    diff_src_out_ = Converter(c, data);
    diff_dst_m_ = Mem(*c, data);
    diff_src_m_ = Mem(*c, data);
    dscale_m_ = Mem(*c, cdesc);
    dshift_m_ = Mem(*c, cdesc);
  }

  void forward(const OpContext& x) override {
    if (!x.running_mean || !x.running_var)
      throw std::logic_error(std::string(name_).append(": batch norm without running statistics in the context"));
    src_ = src_in_.get(*x.src[0]);
    float* mean = train_ ? mean_.data() : x.running_mean;
    float* var = train_ ? var_.data() : x.running_var;
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_.bind(src_)},
                                            {DNNL_ARG_DST, dst_m_.bind(x.dst->data)},
                                            {DNNL_ARG_SCALE, scale_m_.bind(x.weights)},
                                            {DNNL_ARG_SHIFT, shift_m_.bind(x.weights + channels_)},
                                            {DNNL_ARG_MEAN, mean_m_.bind(mean)},
                                            {DNNL_ARG_VARIANCE, var_m_.bind(var)}};
    if (has_ws_) args[DNNL_ARG_WORKSPACE] = ws_m_.bind(ws_.data());
    execute(*ctx_, fwd_, args);
    if (!train_) return;
    const float m = momentum_;
    const float unbias = count_ > 1 ? static_cast<float>(count_ / (count_ - 1)) : 1.0f;
    float* rm = x.running_mean;
    float* rv = x.running_var;
    for (memory::dim i = 0; i < channels_; ++i) {
      rm[i] = (1 - m) * rm[i] + m * mean[i];
      rv[i] = (1 - m) * rv[i] + m * var[i] * unbias;
    }
  }

  // The src (statistics are its own copies); a fused ReLU's mask is in the workspace, not dst.
  BackwardReads backward_reads() const override { return {true, false}; }

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    // oneDNN always produces diff_src; without a consumer it goes to a scratch buffer.
    float* out = ds ? diff_src_out_.target(*ds) : scratch_.reserve(fwd_pd_.src_desc().get_size());
    // With fuse_norm_relu, diff_dst is the gradient of the ReLU's output; the workspace masks it.
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src_m_.bind(src_)},
        {DNNL_ARG_MEAN, mean_m_.bind(mean_.data())},
        {DNNL_ARG_VARIANCE, var_m_.bind(var_.data())},
        {DNNL_ARG_DIFF_DST, diff_dst_m_.bind(diff_dst_in_.get(*x.diff_dst))},
        {DNNL_ARG_SCALE, scale_m_.bind(x.weights)},
        {DNNL_ARG_DIFF_SRC, diff_src_m_.bind(out)},
        {DNNL_ARG_DIFF_SCALE, dscale_m_.bind(x.diff_weights)},
        {DNNL_ARG_DIFF_SHIFT, dshift_m_.bind(x.diff_weights + channels_)}};
    // 2.6 checks that the shift is given; 3.x refuses it (the backward does not read it).
    if (compat::kBnormBackwardTakesShift) args[DNNL_ARG_SHIFT] = shift_m_.bind(x.weights + channels_);
    if (has_ws_) args[DNNL_ARG_WORKSPACE] = ws_m_.bind(ws_.data());
    execute(*ctx_, bwd_, args);
    if (ds) diff_src_out_.finish(*ds);
  }

 private:
  ContextPtr ctx_;
  bool train_;
  float momentum_;
  memory::dim channels_;
  double count_ = 1;
  std::string name_;
  Buffer mean_, var_, scratch_;  // batch statistics of the last training forward, for backward
  Buffer ws_;                    // fused ReLU's mask (training)
  bool has_ws_ = false;
  Mem ws_m_;
  const float* src_ = nullptr;

  batch_normalization_forward::primitive_desc fwd_pd_;
  batch_normalization_forward fwd_;
  Converter src_in_;
  Mem src_m_, dst_m_, scale_m_, shift_m_, mean_m_, var_m_;

  batch_normalization_backward::primitive_desc bwd_pd_;
  batch_normalization_backward bwd_;
  Converter diff_dst_in_, diff_src_out_;
  Mem diff_dst_m_, diff_src_m_, dscale_m_, dshift_m_;
};

}  // namespace

std::unique_ptr<Op> make_batch_norm(const ContextPtr& c, const Node& node, Inputs src, Mode mode,
                                    Tensor& dst, bool relu) {
  return std::make_unique<BatchNormOp>(c, node, *src[0], mode, dst, relu);
}

}  // namespace hpcnn::dnnl_impl
