// Reference pooling. Max: the first maximum in window order (row-major), padded cells never
// selected; the arg-max of the last forward drives backward. Average: padded cells count as
// zeros, the divisor is always kh*kw. Global average: mean over H x W per channel.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

// Geometry shared by max and average pooling.
struct Window {
  OpAttr a;
  Shape in, out;
  std::size_t src_index(int n, int c, int y, int x) const {
    return ((std::size_t(n) * in.c + c) * in.h + y) * in.w + x;
  }
};

class MaxPoolOp final : public Op {
 public:
  explicit MaxPoolOp(const OpSetup& s)
      : name_(s.node.name), g_{s.node.attr, s.in[0], s.out}, argmax_(s.out.count(), -1) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], g_.in, name_, "src");
    expect_shape(ctx.dst, g_.out, name_, "dst");
    const float* x = ctx.src[0]->data;
    float* y = ctx.dst->data;
    std::size_t o = 0;
    for (int n = 0; n < g_.out.n; ++n)
      for (int c = 0; c < g_.out.c; ++c)
        for (int oy = 0; oy < g_.out.h; ++oy)
          for (int ox = 0; ox < g_.out.w; ++ox, ++o) {
            std::int64_t best = -1;
            for (int ky = 0; ky < g_.a.kh; ++ky) {
              const int iy = oy * g_.a.sh - g_.a.ph + ky;
              if (iy < 0 || iy >= g_.in.h) continue;
              for (int kx = 0; kx < g_.a.kw; ++kx) {
                const int ix = ox * g_.a.sw - g_.a.pw + kx;
                if (ix < 0 || ix >= g_.in.w) continue;
                const std::size_t i = g_.src_index(n, c, iy, ix);
                if (best < 0 || x[i] > x[best]) best = static_cast<std::int64_t>(i);
              }
            }
            argmax_[o] = best;
            y[o] = best >= 0 ? x[best] : 0.0f;  // a window of padding only (not reachable via infer_shape)
          }
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // its own arg-max

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.diff_dst, g_.out, name_, "diff_dst");
    expect_shape(dx_t, g_.in, name_, "diff_src");
    const float* dy = ctx.diff_dst->data;
    std::vector<double> dx(g_.in.count(), 0.0);
    for (std::size_t o = 0; o < argmax_.size(); ++o)
      if (argmax_[o] >= 0) dx[static_cast<std::size_t>(argmax_[o])] += dy[o];
    for (std::size_t i = 0; i < dx.size(); ++i) dx_t->data[i] = static_cast<float>(dx[i]);
  }

 private:
  std::string name_;
  Window g_;
  std::vector<std::int64_t> argmax_;
};

class AvgPoolOp final : public Op {
 public:
  explicit AvgPoolOp(const OpSetup& s) : name_(s.node.name), g_{s.node.attr, s.in[0], s.out} {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], g_.in, name_, "src");
    expect_shape(ctx.dst, g_.out, name_, "dst");
    const float* x = ctx.src[0]->data;
    float* y = ctx.dst->data;
    const double divisor = double(g_.a.kh) * g_.a.kw;
    std::size_t o = 0;
    for (int n = 0; n < g_.out.n; ++n)
      for (int c = 0; c < g_.out.c; ++c)
        for (int oy = 0; oy < g_.out.h; ++oy)
          for (int ox = 0; ox < g_.out.w; ++ox, ++o) {
            double sum = 0.0;
            for (int ky = 0; ky < g_.a.kh; ++ky) {
              const int iy = oy * g_.a.sh - g_.a.ph + ky;
              if (iy < 0 || iy >= g_.in.h) continue;
              for (int kx = 0; kx < g_.a.kw; ++kx) {
                const int ix = ox * g_.a.sw - g_.a.pw + kx;
                if (ix < 0 || ix >= g_.in.w) continue;
                sum += x[g_.src_index(n, c, iy, ix)];
              }
            }
            y[o] = static_cast<float>(sum / divisor);
          }
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // nothing but diff_dst

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.diff_dst, g_.out, name_, "diff_dst");
    expect_shape(dx_t, g_.in, name_, "diff_src");
    const float* dy = ctx.diff_dst->data;
    const double divisor = double(g_.a.kh) * g_.a.kw;
    std::vector<double> dx(g_.in.count(), 0.0);
    std::size_t o = 0;
    for (int n = 0; n < g_.out.n; ++n)
      for (int c = 0; c < g_.out.c; ++c)
        for (int oy = 0; oy < g_.out.h; ++oy)
          for (int ox = 0; ox < g_.out.w; ++ox, ++o) {
            const double g = dy[o] / divisor;
            for (int ky = 0; ky < g_.a.kh; ++ky) {
              const int iy = oy * g_.a.sh - g_.a.ph + ky;
              if (iy < 0 || iy >= g_.in.h) continue;
              for (int kx = 0; kx < g_.a.kw; ++kx) {
                const int ix = ox * g_.a.sw - g_.a.pw + kx;
                if (ix < 0 || ix >= g_.in.w) continue;
                dx[g_.src_index(n, c, iy, ix)] += g;
              }
            }
          }
    for (std::size_t i = 0; i < dx.size(); ++i) dx_t->data[i] = static_cast<float>(dx[i]);
  }

 private:
  std::string name_;
  Window g_;
};

class GlobalAvgPoolOp final : public Op {
 public:
  explicit GlobalAvgPoolOp(const OpSetup& s) : name_(s.node.name), in_(s.in[0]), out_(s.out) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], in_, name_, "src");
    expect_shape(ctx.dst, out_, name_, "dst");
    const float* x = ctx.src[0]->data;
    float* y = ctx.dst->data;
    const std::size_t hw = std::size_t(in_.h) * in_.w;
    for (std::size_t p = 0; p < std::size_t(in_.n) * in_.c; ++p) {
      double sum = 0.0;
      for (std::size_t i = 0; i < hw; ++i) sum += x[p * hw + i];
      y[p] = static_cast<float>(sum / double(hw));
    }
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // nothing but diff_dst

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.diff_dst, out_, name_, "diff_dst");
    expect_shape(dx_t, in_, name_, "diff_src");
    const float* dy = ctx.diff_dst->data;
    const std::size_t hw = std::size_t(in_.h) * in_.w;
    for (std::size_t p = 0; p < std::size_t(in_.n) * in_.c; ++p) {
      const float g = static_cast<float>(double(dy[p]) / double(hw));
      for (std::size_t i = 0; i < hw; ++i) dx_t->data[p * hw + i] = g;
    }
  }

 private:
  std::string name_;
  Shape in_, out_;
};

}  // namespace

std::unique_ptr<Op> make_max_pool(const OpSetup& s) { return std::make_unique<MaxPoolOp>(s); }
std::unique_ptr<Op> make_avg_pool(const OpSetup& s) { return std::make_unique<AvgPoolOp>(s); }
std::unique_ptr<Op> make_global_avg_pool(const OpSetup& s) { return std::make_unique<GlobalAvgPoolOp>(s); }

}  // namespace hpcnn::reference
