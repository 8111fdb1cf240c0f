// Reference add (two inputs of the same shape; both gradients are diff_dst) and flatten
// (output {n, c*h*w, 1, 1}, the same data).
#include <cstddef>
#include <cstring>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class AddOp final : public Op {
 public:
  explicit AddOp(const OpSetup& s) : name_(s.node.name), shape_(s.out) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src[0]");
    expect_shape(ctx.src[1], shape_, name_, "src[1]");
    expect_shape(ctx.dst, shape_, name_, "dst");
    const float* a = ctx.src[0]->data;
    const float* b = ctx.src[1]->data;
    float* y = ctx.dst->data;
    for (std::size_t i = 0; i < shape_.count(); ++i) y[i] = a[i] + b[i];
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // a sum: copies of diff_dst

  void backward(const OpContext& ctx) override {
    expect_shape(ctx.diff_dst, shape_, name_, "diff_dst");
    for (std::size_t k = 0; k < ctx.diff_src.size() && k < 2; ++k) {
      Tensor* dx = ctx.diff_src[k];
      if (!dx) continue;
      expect_shape(dx, shape_, name_, "diff_src");
      if (dx->data == ctx.diff_dst->data) continue;  // the executor shares the buffer (network.cpp)
      std::memcpy(dx->data, ctx.diff_dst->data, shape_.count() * sizeof(float));
    }
  }

 private:
  std::string name_;
  Shape shape_;
};

class FlattenOp final : public Op {
 public:
  explicit FlattenOp(const OpSetup& s) : name_(s.node.name), in_(s.in[0]), out_(s.out) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], in_, name_, "src");
    expect_shape(ctx.dst, out_, name_, "dst");
    std::memcpy(ctx.dst->data, ctx.src[0]->data, in_.count() * sizeof(float));
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // a copy

  void backward(const OpContext& ctx) override {
    Tensor* dx = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx) return;
    expect_shape(ctx.diff_dst, out_, name_, "diff_dst");
    expect_shape(dx, in_, name_, "diff_src");
    std::memcpy(dx->data, ctx.diff_dst->data, in_.count() * sizeof(float));
  }

 private:
  std::string name_;
  Shape in_, out_;
};

}  // namespace

std::unique_ptr<Op> make_add(const OpSetup& s) { return std::make_unique<AddOp>(s); }
std::unique_ptr<Op> make_flatten(const OpSetup& s) { return std::make_unique<FlattenOp>(s); }

}  // namespace hpcnn::reference
