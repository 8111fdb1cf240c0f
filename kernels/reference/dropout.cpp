// Reference dropout: element i (logical NCHW index over the whole batch) survives iff
// dropout_keep(seed, node, step, i, p); survivors are scaled by 1/(1-p). Identity in inference.
// The mask of the last forward is kept for backward.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/rng.hpp"
#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class DropoutOp final : public Op {
 public:
  explicit DropoutOp(const OpSetup& s)
      : name_(s.node.name), p_(s.node.attr.dropout_p), mode_(s.mode), shape_(s.in[0]) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.dst, shape_, name_, "dst");
    const float* x = ctx.src[0]->data;
    float* y = ctx.dst->data;
    const std::size_t count = shape_.count();
    if (mode_ == Mode::Infer) {
      std::memcpy(y, x, count * sizeof(float));
      return;
    }
    const float scale = 1.0f / (1.0f - p_);
    keep_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      keep_[i] = dropout_keep(ctx.seed, ctx.node, ctx.step, i, p_) ? 1 : 0;
      y[i] = keep_[i] ? x[i] * scale : 0.0f;
    }
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // its own mask

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.diff_dst, shape_, name_, "diff_dst");
    expect_shape(dx_t, shape_, name_, "diff_src");
    if (keep_.size() != shape_.count()) throw std::logic_error(name_ + ": dropout backward before forward");
    const float scale = 1.0f / (1.0f - p_);
    const float* dy = ctx.diff_dst->data;
    for (std::size_t i = 0; i < keep_.size(); ++i) dx_t->data[i] = keep_[i] ? dy[i] * scale : 0.0f;
  }

 private:
  std::string name_;
  float p_;
  Mode mode_;
  Shape shape_;
  std::vector<std::uint8_t> keep_;
};

}  // namespace

std::unique_ptr<Op> make_dropout(const OpSetup& s) { return std::make_unique<DropoutOp>(s); }

}  // namespace hpcnn::reference
