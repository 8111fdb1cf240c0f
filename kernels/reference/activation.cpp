// Reference element-wise activations: ReLU (backward masks with src > 0) and tanh (backward from
// dst: dy * (1 - y^2)).
#include <cmath>
#include <cstddef>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class ReluOp final : public Op {
 public:
  explicit ReluOp(const OpSetup& s) : name_(s.node.name), shape_(s.in[0]) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.dst, shape_, name_, "dst");
    const float* x = ctx.src[0]->data;
    float* y = ctx.dst->data;
    for (std::size_t i = 0; i < shape_.count(); ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }

  BackwardReads backward_reads() const override { return {true, false}; }  // the input decides the mask

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.diff_dst, shape_, name_, "diff_dst");
    expect_shape(dx_t, shape_, name_, "diff_src");
    const float* x = ctx.src[0]->data;
    const float* dy = ctx.diff_dst->data;
    float* dx = dx_t->data;
    for (std::size_t i = 0; i < shape_.count(); ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
  }

 private:
  std::string name_;
  Shape shape_;
};

class TanhOp final : public Op {
 public:
  explicit TanhOp(const OpSetup& s) : name_(s.node.name), shape_(s.in[0]) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.dst, shape_, name_, "dst");
    const float* x = ctx.src[0]->data;
    float* y = ctx.dst->data;
    for (std::size_t i = 0; i < shape_.count(); ++i) y[i] = static_cast<float>(std::tanh(double(x[i])));
  }

  BackwardReads backward_reads() const override { return {false, true}; }  // 1 - y^2 from the output

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.dst, shape_, name_, "dst");
    expect_shape(ctx.diff_dst, shape_, name_, "diff_dst");
    expect_shape(dx_t, shape_, name_, "diff_src");
    const float* y = ctx.dst->data;
    const float* dy = ctx.diff_dst->data;
    float* dx = dx_t->data;
    for (std::size_t i = 0; i < shape_.count(); ++i)
      dx[i] = static_cast<float>(double(dy[i]) * (1.0 - double(y[i]) * y[i]));
  }

 private:
  std::string name_;
  Shape shape_;
};

}  // namespace

std::unique_ptr<Op> make_relu(const OpSetup& s) { return std::make_unique<ReluOp>(s); }
std::unique_ptr<Op> make_tanh(const OpSetup& s) { return std::make_unique<TanhOp>(s); }

}  // namespace hpcnn::reference
