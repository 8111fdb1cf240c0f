// Reference fully connected layer: the input is flattened per sample in c, h, w order;
// weight [O][C*H*W], optional bias [O]; dot products in double.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class FullyConnectedOp final : public Op {
 public:
  explicit FullyConnectedOp(const OpSetup& s)
      : name_(s.node.name), bias_(s.node.attr.bias), in_(s.in[0]), out_(s.out),
        k_(s.in[0].per_sample()), o_(static_cast<std::size_t>(s.out.c)) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], in_, name_, "src");
    expect_shape(ctx.dst, out_, name_, "dst");
    const float* x = ctx.src[0]->data;
    const float* w = ctx.weights;
    const float* b = bias_ ? w + o_ * k_ : nullptr;
    float* y = ctx.dst->data;
    for (std::size_t n = 0; n < std::size_t(in_.n); ++n)
      for (std::size_t o = 0; o < o_; ++o) {
        double acc = b ? b[o] : 0.0;
        const float* xr = x + n * k_;
        const float* wr = w + o * k_;
        for (std::size_t k = 0; k < k_; ++k) acc += double(xr[k]) * wr[k];
        y[n * o_ + o] = static_cast<float>(acc);
      }
  }

  BackwardReads backward_reads() const override { return {true, false}; }  // the input for the weight gradient

  void backward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], in_, name_, "src");
    expect_shape(ctx.diff_dst, out_, name_, "diff_dst");
    const float* x = ctx.src[0]->data;
    const float* w = ctx.weights;
    const float* dy = ctx.diff_dst->data;
    const std::size_t batch = std::size_t(in_.n);
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (dx_t) {
      expect_shape(dx_t, in_, name_, "diff_src");
      std::vector<double> acc(k_);
      for (std::size_t n = 0; n < batch; ++n) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::size_t o = 0; o < o_; ++o) {
          const double g = dy[n * o_ + o];
          const float* wr = w + o * k_;
          for (std::size_t k = 0; k < k_; ++k) acc[k] += g * wr[k];
        }
        for (std::size_t k = 0; k < k_; ++k) dx_t->data[n * k_ + k] = static_cast<float>(acc[k]);
      }
    }
    for (std::size_t o = 0; o < o_; ++o) {
      for (std::size_t k = 0; k < k_; ++k) {
        double acc = 0.0;
        for (std::size_t n = 0; n < batch; ++n) acc += double(dy[n * o_ + o]) * x[n * k_ + k];
        ctx.diff_weights[o * k_ + k] = static_cast<float>(acc);
      }
      if (bias_) {
        double acc = 0.0;
        for (std::size_t n = 0; n < batch; ++n) acc += dy[n * o_ + o];
        ctx.diff_weights[o_ * k_ + o] = static_cast<float>(acc);
      }
    }
  }

 private:
  std::string name_;
  bool bias_;
  Shape in_, out_;
  std::size_t k_, o_;
};

}  // namespace

std::unique_ptr<Op> make_fully_connected(const OpSetup& s) { return std::make_unique<FullyConnectedOp>(s); }

}  // namespace hpcnn::reference
