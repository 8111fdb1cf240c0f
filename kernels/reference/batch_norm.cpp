// Reference batch normalization over (N, H, W) per channel; parameters scale [C], shift [C].
// Train: batch mean and biased variance normalize; the running mean/var (unbiased variance) in
// the network's buffers (OpContext::running_mean/running_var) are updated with the momentum of
// graph.hpp. Infer: normalizes with those running statistics. Statistics in double.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class BatchNormOp final : public Op {
 public:
  explicit BatchNormOp(const OpSetup& s)
      : name_(s.node.name), eps_(s.node.attr.eps), momentum_(s.node.attr.momentum),
        mode_(s.mode), shape_(s.in[0]),
        mean_(std::size_t(s.in[0].c), 0.0), inv_std_(std::size_t(s.in[0].c), 1.0) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.dst, shape_, name_, "dst");
    // The executor (or a test harness) owns the statistics; without them there is nothing to
    // update or normalize with.
    if (!ctx.running_mean || !ctx.running_var)
      throw std::logic_error(name_ + ": batch norm without running statistics in the context");
    float* running_mean = ctx.running_mean;
    float* running_var = ctx.running_var;
    const float* x = ctx.src[0]->data;
    const float* scale = ctx.weights;
    const float* shift = ctx.weights + shape_.c;
    float* y = ctx.dst->data;
    const std::size_t hw = std::size_t(shape_.h) * shape_.w;
    const double m = double(shape_.n) * double(hw);
    for (int c = 0; c < shape_.c; ++c) {
      double mean, var;
      if (mode_ == Mode::Train) {
        double sum = 0.0;
        for (int n = 0; n < shape_.n; ++n) {
          const float* p = x + plane(n, c);
          for (std::size_t i = 0; i < hw; ++i) sum += p[i];
        }
        mean = sum / m;
        double sq = 0.0;  // two-pass variance
        for (int n = 0; n < shape_.n; ++n) {
          const float* p = x + plane(n, c);
          for (std::size_t i = 0; i < hw; ++i) sq += (p[i] - mean) * (p[i] - mean);
        }
        var = sq / m;
        // Unbiased variance for the running estimate (with a single value there is none: the
        // biased one, 0, is used).
        const double unbiased = m > 1.0 ? sq / (m - 1.0) : var;
        running_mean[c] = static_cast<float>((1.0 - momentum_) * running_mean[c] + momentum_ * mean);
        running_var[c] = static_cast<float>((1.0 - momentum_) * running_var[c] + momentum_ * unbiased);
      } else {
        mean = running_mean[c];
        var = running_var[c];
      }
      const double inv_std = 1.0 / std::sqrt(var + double(eps_));
      mean_[c] = mean;
      inv_std_[c] = inv_std;
      const double a = double(scale[c]) * inv_std, b = double(shift[c]) - a * mean;
      for (int n = 0; n < shape_.n; ++n) {
        const float* p = x + plane(n, c);
        float* q = y + plane(n, c);
        for (std::size_t i = 0; i < hw; ++i) q[i] = static_cast<float>(a * p[i] + b);
      }
    }
  }

  // Train mode: with xhat = (x - mean) * inv_std and M = N*H*W values per channel,
  //   dshift = sum dy, dscale = sum dy * xhat, dx = scale * inv_std / M * (M dy - dshift - xhat dscale).
  BackwardReads backward_reads() const override { return {true, false}; }  // the input (batch statistics are its own)

  void backward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.diff_dst, shape_, name_, "diff_dst");
    const float* x = ctx.src[0]->data;
    const float* dy = ctx.diff_dst->data;
    const float* scale = ctx.weights;
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (dx_t) expect_shape(dx_t, shape_, name_, "diff_src");
    const std::size_t hw = std::size_t(shape_.h) * shape_.w;
    const double m = double(shape_.n) * double(hw);
    for (int c = 0; c < shape_.c; ++c) {
      const double mean = mean_[c], inv_std = inv_std_[c];
      double dshift = 0.0, dscale = 0.0;
      for (int n = 0; n < shape_.n; ++n) {
        const float* p = x + plane(n, c);
        const float* g = dy + plane(n, c);
        for (std::size_t i = 0; i < hw; ++i) {
          dshift += g[i];
          dscale += g[i] * (p[i] - mean) * inv_std;
        }
      }
      ctx.diff_weights[c] = static_cast<float>(dscale);
      ctx.diff_weights[shape_.c + c] = static_cast<float>(dshift);
      if (!dx_t) continue;
      const double k = double(scale[c]) * inv_std;
      for (int n = 0; n < shape_.n; ++n) {
        const float* p = x + plane(n, c);
        const float* g = dy + plane(n, c);
        float* q = dx_t->data + plane(n, c);
        for (std::size_t i = 0; i < hw; ++i) {
          const double xhat = (p[i] - mean) * inv_std;
          q[i] = static_cast<float>(mode_ == Mode::Train ? k * (g[i] - (dshift + xhat * dscale) / m)
                                                         : k * g[i]);
        }
      }
    }
  }

 private:
  std::size_t plane(int n, int c) const {
    return (std::size_t(n) * shape_.c + c) * std::size_t(shape_.h) * shape_.w;
  }

  std::string name_;
  float eps_, momentum_;
  Mode mode_;
  Shape shape_;
  std::vector<double> mean_, inv_std_;  // of the last forward, for backward
};

}  // namespace

std::unique_ptr<Op> make_batch_norm(const OpSetup& s) { return std::make_unique<BatchNormOp>(s); }

}  // namespace hpcnn::reference
