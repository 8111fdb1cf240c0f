// Reference 2-D convolution: stride, zero padding, optional bias; weight [O][I][KH][KW], bias [O].
// Forward gathers, backward scatters; all sums in double.
#include <cstddef>
#include <vector>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class ConvOp final : public Op {
 public:
  explicit ConvOp(const OpSetup& s) : name_(s.node.name), a_(s.node.attr), in_(s.in[0]), out_(s.out) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], in_, name_, "src");
    expect_shape(ctx.dst, out_, name_, "dst");
    const float* x = ctx.src[0]->data;
    const float* w = ctx.weights;
    const float* b = a_.bias ? w + weight_count() : nullptr;
    float* y = ctx.dst->data;
    for (int n = 0; n < out_.n; ++n)
      for (int o = 0; o < out_.c; ++o)
        for (int oy = 0; oy < out_.h; ++oy)
          for (int ox = 0; ox < out_.w; ++ox) {
            double acc = b ? b[o] : 0.0;
            for (int i = 0; i < in_.c; ++i)
              for (int ky = 0; ky < a_.kh; ++ky) {
                const int iy = oy * a_.sh - a_.ph + ky;
                if (iy < 0 || iy >= in_.h) continue;
                for (int kx = 0; kx < a_.kw; ++kx) {
                  const int ix = ox * a_.sw - a_.pw + kx;
                  if (ix < 0 || ix >= in_.w) continue;
                  acc += double(x[src_index(n, i, iy, ix)]) * w[weight_index(o, i, ky, kx)];
                }
              }
            y[dst_index(n, o, oy, ox)] = static_cast<float>(acc);
          }
  }

  BackwardReads backward_reads() const override { return {true, false}; }  // the input for the weight gradient

  void backward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], in_, name_, "src");
    expect_shape(ctx.diff_dst, out_, name_, "diff_dst");
    const float* x = ctx.src[0]->data;
    const float* w = ctx.weights;
    const float* dy = ctx.diff_dst->data;
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    std::vector<double> dx(dx_t ? in_.count() : 0, 0.0);
    std::vector<double> dw(weight_count(), 0.0), db(a_.bias ? out_.c : 0, 0.0);
    for (int n = 0; n < out_.n; ++n)
      for (int o = 0; o < out_.c; ++o)
        for (int oy = 0; oy < out_.h; ++oy)
          for (int ox = 0; ox < out_.w; ++ox) {
            const double g = dy[dst_index(n, o, oy, ox)];
            if (a_.bias) db[o] += g;
            for (int i = 0; i < in_.c; ++i)
              for (int ky = 0; ky < a_.kh; ++ky) {
                const int iy = oy * a_.sh - a_.ph + ky;
                if (iy < 0 || iy >= in_.h) continue;
                for (int kx = 0; kx < a_.kw; ++kx) {
                  const int ix = ox * a_.sw - a_.pw + kx;
                  if (ix < 0 || ix >= in_.w) continue;
                  const std::size_t si = src_index(n, i, iy, ix), wi = weight_index(o, i, ky, kx);
                  dw[wi] += g * x[si];
                  if (dx_t) dx[si] += g * w[wi];
                }
              }
          }
    if (dx_t) {
      expect_shape(dx_t, in_, name_, "diff_src");
      for (std::size_t k = 0; k < dx.size(); ++k) dx_t->data[k] = static_cast<float>(dx[k]);
    }
    for (std::size_t k = 0; k < dw.size(); ++k) ctx.diff_weights[k] = static_cast<float>(dw[k]);
    for (std::size_t k = 0; k < db.size(); ++k) ctx.diff_weights[dw.size() + k] = static_cast<float>(db[k]);
  }

 private:
  std::size_t weight_count() const { return std::size_t(out_.c) * in_.c * a_.kh * a_.kw; }
  std::size_t src_index(int n, int c, int y, int x) const {
    return ((std::size_t(n) * in_.c + c) * in_.h + y) * in_.w + x;
  }
  std::size_t dst_index(int n, int c, int y, int x) const {
    return ((std::size_t(n) * out_.c + c) * out_.h + y) * out_.w + x;
  }
  std::size_t weight_index(int o, int i, int ky, int kx) const {
    return ((std::size_t(o) * in_.c + i) * a_.kh + ky) * a_.kw + kx;
  }

  std::string name_;
  OpAttr a_;
  Shape in_, out_;
};

}  // namespace

std::unique_ptr<Op> make_conv(const OpSetup& s) { return std::make_unique<ConvOp>(s); }

}  // namespace hpcnn::reference
