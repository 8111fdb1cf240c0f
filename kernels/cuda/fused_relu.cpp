// A ReLU fused into the op before it (ops.hpp, make_fused_relu). The ReLU's output is the op's
// output buffer (the executor never allocates a separate one), so a fused pair needs one
// activation instead of two; an Add computes max(a + b, 0) in one pass (kernels.cu, add_relu).
#include "kernels/cuda/kernels.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn::cuda {

namespace {

class FusedReluOp final : public Op {
 public:
  FusedReluOp(const ContextPtr& c, std::unique_ptr<Op> inner, const Tensor& dst, bool inner_applies_relu)
      : c_(c), inner_(std::move(inner)), count_(dst.shape.count()), l_(layout_of(dst)),
        inner_applies_relu_(inner_applies_relu) {}

  void forward(const OpContext& ctx) override {
    inner_->forward(ctx);
    if (!inner_applies_relu_) act_forward(Act::Relu, ctx.dst->data, ctx.dst->data, count_, l_.bf16, c_->stream);
  }

  void backward(const OpContext& ctx) override {
    void* masked = fused_relu_grad(*c_, ctx, ctx.diff_dst->data, count_, l_, buf_);
    Tensor g = *ctx.diff_dst;
    g.data = static_cast<float*>(masked);
    OpContext inner = ctx;
    inner.diff_dst = &g;
    inner.diff_dst_writable = nullptr;
    inner_->backward(inner);
  }

 private:
  ContextPtr c_;
  std::unique_ptr<Op> inner_;
  std::size_t count_;
  Layout l_;
  bool inner_applies_relu_;
  DeviceBuffer buf_;  // the masked gradient where diff_dst is shared (rare: a ReLU read only by an Add)
};

}  // namespace

void* fused_relu_grad(Context& c, const OpContext& ctx, const void* dy, std::size_t count, const Layout& l,
                      DeviceBuffer& own) {
  // The executor gives diff_dst the layout of dst (network.cpp), so the mask is elementwise.
  void* masked = ctx.diff_dst_writable ? ctx.diff_dst_writable->data : nullptr;
  if (!masked) {
    if (!own) own = c.alloc(count * elem_bytes(l));
    masked = own.get();
  }
  act_backward(Act::Relu, ctx.dst->data, dy, masked, count, l.bf16, c.stream);
  return masked;
}

std::unique_ptr<Op> make_fused_relu(const ContextPtr& c, std::unique_ptr<Op> inner, const Tensor& dst,
                                    bool inner_applies_relu) {
  return std::make_unique<FusedReluOp>(c, std::move(inner), dst, inner_applies_relu);
}

}  // namespace hpcnn::cuda
