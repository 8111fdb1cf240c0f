// The layers written as our own kernels (kernels.cu): activations, pooling, LRN, dropout, add,
// flatten and the softmax cross-entropy loss. They keep their input's layout (no conversion), so
// they cost one pass over memory each.
#include <cuda_runtime.h>

#include <string>

#include "base/errors.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/kernels.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn::cuda {

namespace {

Fmt fmt(const Layout& l) { return {l.nhwc, l.bf16}; }
Tensor* diff_src0(const OpContext& ctx) { return ctx.diff_src.empty() ? nullptr : ctx.diff_src[0]; }

// Base for ops whose output has the input's shape-dependent layout: remembers the layout of
// input 0 and brings gradients/outputs given in another layout (tests do that) into it.
class SameLayoutOp : public Op {
 protected:
  SameLayoutOp(const ContextPtr& c, const Tensor& src) : c_(c), in_(src.shape), l_(layout_of(src)) {}
  const void* input(const OpContext& ctx, int i = 0, int slot = 0) { return as_layout(*c_, *ctx.src[i], l_, slot); }
  // Where to write the input gradient (the tensor itself, or scratch + a store_as by finish()).
  void* grad_target(Tensor* dx) {
    return same_memory(in_, l_, layout_of(*dx)) ? dx->data : c_->scratch(2, in_.count() * elem_bytes(l_));
  }
  void finish(void* g, Tensor* dx) {
    if (g != dx->data) store_as(*c_, g, l_, *dx);
  }
  ContextPtr c_;
  Shape in_;
  Layout l_;
};

class ActivationOp final : public SameLayoutOp {
 public:
  ActivationOp(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst)
      : SameLayoutOp(c, *src[0]), act_(node.kind == OpKind::Relu ? Act::Relu : Act::Tanh) {
    dst.shape = in_;
    dst.layout = src[0]->layout;
  }
  void forward(const OpContext& ctx) override {
    act_forward(act_, input(ctx), ctx.dst->data, in_.count(), l_.bf16, c_->stream);
  }
  void backward(const OpContext& ctx) override {
    Tensor* dx = diff_src0(ctx);
    if (!dx) return;
    const void* dy = as_layout(*c_, *ctx.diff_dst, l_, 1);
    void* g = grad_target(dx);
    act_backward(act_, ctx.dst->data, dy, g, in_.count(), l_.bf16, c_->stream);
    finish(g, dx);
  }

 private:
  Act act_;
};

class PoolingOp final : public SameLayoutOp {
 public:
  PoolingOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst)
      : SameLayoutOp(c, *src[0]), max_(node.kind == OpKind::MaxPool) {
    const OpAttr& a = node.attr;
    p_.in = in_;
    p_.out = Shape{in_.n, node.out.c, node.out.h, node.out.w};
    if (node.kind == OpKind::GlobalAvgPool) {
      p_.kh = in_.h, p_.kw = in_.w, p_.sh = p_.sw = 1, p_.ph = p_.pw = 0;
    } else {
      p_.kh = a.kh, p_.kw = a.kw, p_.sh = a.sh, p_.sw = a.sw, p_.ph = a.ph, p_.pw = a.pw;
    }
    dst.shape = p_.out;
    dst.layout = make_layout(p_.out, l_.nhwc, l_.bf16);
    // One format for both sides: a 1x1 output is the same bytes either way.
    if (max_ && mode == Mode::Train) argmax_ = c->alloc(p_.out.count() * sizeof(std::int32_t));
  }
  void forward(const OpContext& ctx) override {
    if (max_)
      max_pool_forward(p_, fmt(l_), input(ctx), ctx.dst->data, static_cast<std::int32_t*>(argmax_.get()), c_->stream);
    else
      avg_pool_forward(p_, fmt(l_), input(ctx), ctx.dst->data, c_->stream);
  }
  void backward(const OpContext& ctx) override {
    Tensor* dx = diff_src0(ctx);
    if (!dx) return;
    const Layout out_l{l_.nhwc, l_.bf16};
    const void* dy = as_layout(*c_, *ctx.diff_dst, out_l, 1);
    void* g = grad_target(dx);
    if (max_)
      max_pool_backward(p_, fmt(l_), dy, static_cast<const std::int32_t*>(argmax_.get()), g, c_->stream);
    else
      avg_pool_backward(p_, fmt(l_), dy, g, c_->stream);
    finish(g, dx);
  }

 private:
  bool max_;
  PoolShape p_{};
  DeviceBuffer argmax_;
};

class LrnOp final : public SameLayoutOp {
 public:
  LrnOp(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst) : SameLayoutOp(c, *src[0]) {
    const OpAttr& a = node.attr;
    p_ = {a.lrn_size, a.lrn_alpha, a.lrn_beta, a.lrn_k};
    dst.shape = in_;
    dst.layout = src[0]->layout;
    scale_ = c->alloc(in_.count() * sizeof(float));
  }
  void forward(const OpContext& ctx) override {
    lrn_forward(p_, in_, fmt(l_), input(ctx), ctx.dst->data, static_cast<float*>(scale_.get()), c_->stream);
  }
  void backward(const OpContext& ctx) override {
    Tensor* dx = diff_src0(ctx);
    if (!dx) return;
    const void* x = input(ctx);
    const void* dy = as_layout(*c_, *ctx.diff_dst, l_, 1);
    void* g = grad_target(dx);
    lrn_backward(p_, in_, fmt(l_), x, dy, static_cast<const float*>(scale_.get()), g, c_->stream);
    finish(g, dx);
  }

 private:
  LrnParams p_{};
  DeviceBuffer scale_;
};

class DropoutOp final : public SameLayoutOp {
 public:
  DropoutOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst)
      : SameLayoutOp(c, *src[0]), p_(node.attr.dropout_p), mode_(mode) {
    dst.shape = in_;
    dst.layout = src[0]->layout;
  }
  void forward(const OpContext& ctx) override {
    const void* x = input(ctx);
    if (mode_ != Mode::Train) {
      check(cudaMemcpyAsync(ctx.dst->data, x, in_.count() * elem_bytes(l_), cudaMemcpyDeviceToDevice, c_->stream),
            "cudaMemcpyAsync");
      return;
    }
    dropout(in_, fmt(l_), x, ctx.dst->data, p_, ctx.seed, ctx.node, ctx.step, c_->stream);
  }
  // The mask is a pure function of (seed, node, step, index): backward recomputes it.
  void backward(const OpContext& ctx) override {
    Tensor* dx = diff_src0(ctx);
    if (!dx) return;
    const void* dy = as_layout(*c_, *ctx.diff_dst, l_, 1);
    void* g = grad_target(dx);
    dropout(in_, fmt(l_), dy, g, p_, ctx.seed, ctx.node, ctx.step, c_->stream);
    finish(g, dx);
  }

 private:
  float p_;
  Mode mode_;
};

// relu: the ReLU after it fused (one pass: y = max(a + b, 0)); its backward is FusedRelu's.
class AddOp final : public SameLayoutOp {
 public:
  AddOp(const ContextPtr& c, Inputs src, Tensor& dst, bool relu) : SameLayoutOp(c, *src[0]), relu_(relu) {
    if (!(src[1]->shape == in_)) throw std::logic_error("cuda add: input shapes differ");
    dst.shape = in_;
    dst.layout = src[0]->layout;
  }
  void forward(const OpContext& ctx) override {
    (relu_ ? add_relu : add)(ctx.src[0]->data, input(ctx, 1, 1), ctx.dst->data, in_.count(), l_.bf16, c_->stream);
  }
  void backward(const OpContext& ctx) override {
    const void* dy = as_layout(*c_, *ctx.diff_dst, l_, 1);
    for (Tensor* dx : ctx.diff_src)
      if (dx) store_as(*c_, dy, l_, *dx);
  }

 private:
  bool relu_;
};

// To {n, C*H*W, 1, 1}: NCHW order, the input's precision.
class FlattenOp final : public SameLayoutOp {
 public:
  FlattenOp(const ContextPtr& c, Inputs src, Tensor& dst) : SameLayoutOp(c, *src[0]) {
    dst.shape = Shape{in_.n, static_cast<int>(in_.per_sample()), 1, 1};
    dst.layout = make_layout(dst.shape, false, l_.bf16);
  }
  void forward(const OpContext& ctx) override {
    Tensor view = *ctx.dst;  // the output read as the input's shape in NCHW order
    view.shape = in_;
    view.layout = make_layout(in_, false, l_.bf16);
    store_as(*c_, ctx.src[0]->data, l_, view);
  }
  void backward(const OpContext& ctx) override {
    Tensor* dx = diff_src0(ctx);
    if (!dx) return;
    const Layout rows{false, l_.bf16};
    const Layout dy_l = layout_of(*ctx.diff_dst);
    const void* dy = same_memory(ctx.diff_dst->shape, dy_l, rows) ? ctx.diff_dst->data
                                                                   : as_layout(*c_, *ctx.diff_dst, rows, 1);
    store_as(*c_, dy, rows, *dx);
  }
};

class SoftmaxXentOp final : public Op {
 public:
  SoftmaxXentOp(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst)
      : c_(c), name_(node.name), shape_(src[0]->shape), rows_{false, layout_of(*src[0]).bf16} {
    dst.shape = shape_;
    dst.layout = nullptr;  // probabilities, FP32
    result_ = c->alloc(3 * sizeof(double));
    check(cudaMallocHost(&host_, 3 * sizeof(double)), "cudaMallocHost");
  }
  ~SoftmaxXentOp() override { cudaFreeHost(host_); }

  void forward(const OpContext& ctx) override {
    if (!ctx.labels) throw std::logic_error(name_ + ": no labels");
    Context& c = *c_;
    const void* x = as_layout(c, *ctx.src[0], rows_, 0);
    softmax_xent_forward(x, rows_.bf16, ctx.labels, shape_.n, shape_.c, ctx.dst->data,
                         static_cast<double*>(result_.get()), c.stream);
    // The loss is needed on the host now (the executor returns it): this is the one sync of forward.
    check(cudaMemcpyAsync(host_, result_.get(), 3 * sizeof(double), cudaMemcpyDeviceToHost, c.stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize (loss)");
    if (host_[2] > 0)
      throw RuntimeError(name_ + ": " + std::to_string(static_cast<long>(host_[2])) + " labels outside [0, " +
                         std::to_string(shape_.c) + ")");
    if (ctx.loss) *ctx.loss = static_cast<float>(host_[0] / shape_.n);
    if (ctx.correct) *ctx.correct = static_cast<std::int64_t>(host_[1] + 0.5);
  }

  void backward(const OpContext& ctx) override {
    Tensor* dx = diff_src0(ctx);
    if (!dx) return;
    const Layout dl = layout_of(*dx);
    void* g = same_memory(shape_, rows_, dl) ? dx->data : c_->scratch(2, shape_.count() * elem_bytes(rows_));
    softmax_xent_backward(ctx.dst->data, ctx.labels, shape_.n, shape_.c, g, rows_.bf16, c_->stream);
    if (g != dx->data) store_as(*c_, g, rows_, *dx);
  }

 private:
  ContextPtr c_;
  std::string name_;
  Shape shape_;
  Layout rows_;
  DeviceBuffer result_;
  double* host_ = nullptr;
};

}  // namespace

std::unique_ptr<Op> make_activation(const ContextPtr& c, const Node& node, Inputs src, Mode, Tensor& dst) {
  return std::make_unique<ActivationOp>(c, node, src, dst);
}
std::unique_ptr<Op> make_pooling(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<PoolingOp>(c, node, src, mode, dst);
}
std::unique_ptr<Op> make_lrn(const ContextPtr& c, const Node& node, Inputs src, Mode, Tensor& dst) {
  return std::make_unique<LrnOp>(c, node, src, dst);
}
std::unique_ptr<Op> make_dropout(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<DropoutOp>(c, node, src, mode, dst);
}
std::unique_ptr<Op> make_add(const ContextPtr& c, const Node&, Inputs src, Mode, Tensor& dst, bool relu) {
  return std::make_unique<AddOp>(c, src, dst, relu);
}
std::unique_ptr<Op> make_flatten(const ContextPtr& c, const Node&, Inputs src, Mode, Tensor& dst) {
  return std::make_unique<FlattenOp>(c, src, dst);
}
std::unique_ptr<Op> make_softmax_xent(const ContextPtr& c, const Node& node, Inputs src, Mode, Tensor& dst) {
  return std::make_unique<SoftmaxXentOp>(c, node, src, dst);
}

}  // namespace hpcnn::cuda
