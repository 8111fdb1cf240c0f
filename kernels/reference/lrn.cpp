// Reference local response normalization across channels (AlexNet/Caffe, graph.hpp):
//   s_c = k + alpha/size * sum_{c' in [c - size/2, c + size/2] and in [0, C)} x_{c'}^2,  y_c = x_c * s_c^-beta
// Backward (the window is symmetric, so c is in window(j) iff j is in window(c)):
//   dx_j = dy_j * s_j^-beta - 2 alpha beta / size * x_j * sum_{c in window(j)} dy_c * x_c * s_c^(-beta-1)
// Computed in double.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class LrnOp final : public Op {
 public:
  explicit LrnOp(const OpSetup& s) : name_(s.node.name), a_(s.node.attr), shape_(s.in[0]) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.dst, shape_, name_, "dst");
    const float* x = ctx.src[0]->data;
    std::vector<double> s = scales(x);
    float* y = ctx.dst->data;
    for (std::size_t i = 0; i < s.size(); ++i)
      y[i] = static_cast<float>(double(x[i]) * std::pow(s[i], -double(a_.lrn_beta)));
  }

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.diff_dst, shape_, name_, "diff_dst");
    expect_shape(dx_t, shape_, name_, "diff_src");
    const float* x = ctx.src[0]->data;
    const float* dy = ctx.diff_dst->data;
    const std::vector<double> s = scales(x);
    const double beta = a_.lrn_beta;
    // t_c = dy_c * x_c * s_c^(-beta-1)
    std::vector<double> t(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) t[i] = double(dy[i]) * x[i] * std::pow(s[i], -beta - 1.0);
    const double coef = 2.0 * double(a_.lrn_alpha) * beta / double(a_.lrn_size);
    const int half = a_.lrn_size / 2;
    const std::size_t hw = std::size_t(shape_.h) * shape_.w;
    for (int n = 0; n < shape_.n; ++n)
      for (int c = 0; c < shape_.c; ++c) {
        const int lo = std::max(0, c - half), hi = std::min(shape_.c - 1, c + half);
        for (std::size_t p = 0; p < hw; ++p) {
          double sum = 0.0;
          for (int cc = lo; cc <= hi; ++cc) sum += t[index(n, cc) + p];
          const std::size_t i = index(n, c) + p;
          dx_t->data[i] = static_cast<float>(double(dy[i]) * std::pow(s[i], -beta) - coef * x[i] * sum);
        }
      }
  }

 private:
  std::size_t index(int n, int c) const { return (std::size_t(n) * shape_.c + c) * shape_.h * shape_.w; }

  std::vector<double> scales(const float* x) const {
    std::vector<double> s(shape_.count());
    const int half = a_.lrn_size / 2;
    const double alpha_n = double(a_.lrn_alpha) / double(a_.lrn_size);
    const std::size_t hw = std::size_t(shape_.h) * shape_.w;
    for (int n = 0; n < shape_.n; ++n)
      for (int c = 0; c < shape_.c; ++c) {
        const int lo = std::max(0, c - half), hi = std::min(shape_.c - 1, c + half);
        for (std::size_t p = 0; p < hw; ++p) {
          double sum = 0.0;
          for (int cc = lo; cc <= hi; ++cc) {
            const double v = x[index(n, cc) + p];
            sum += v * v;
          }
          s[index(n, c) + p] = double(a_.lrn_k) + alpha_n * sum;
        }
      }
    return s;
  }

  std::string name_;
  OpAttr a_;
  Shape shape_;
};

}  // namespace

std::unique_ptr<Op> make_lrn(const OpSetup& s) { return std::make_unique<LrnOp>(s); }

}  // namespace hpcnn::reference
