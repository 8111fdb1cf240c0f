// Convolution as im2col + SGEMM (the Caffe scheme), images grouped so that every GEMM has enough
// columns (conv_lowering.hpp):
//   forward          Y[O][G*P]  = W[O][K] * col[K][G*P]               (+ bias)
//   backward weights dW[O][K]  += dY[O][G*P] * col[K][G*P]^T           (accumulated over groups)
//   backward data    dcol[K][G*P] = W[O][K]^T * dY[O][G*P], then col2im into dX
// with K = C*KH*KW, P = OH*OW and G images per GEMM. A single pointwise image needs no column copy.
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/cpu_backend.hpp"
#include "kernels/gemm/conv_lowering.hpp"
#include "kernels/gemm/gemm_ops.hpp"

namespace hpcnn::gemm_ops {

float* Scratch::get(int slot, std::size_t floats) {
  if (floats > size_[slot]) {
    buf_[slot] = aligned_host_alloc(floats * sizeof(float));
    size_[slot] = floats;
  }
  return static_cast<float*>(buf_[slot].get());
}

namespace {

using gemm_conv::Geometry;

void expect(const Tensor* t, const Shape& s, const std::string& node, const char* what) {
  if (!t) throw std::logic_error(node + ": " + what + " is missing");
  if (!(t->shape == s) || t->layout)
    throw std::logic_error(node + ": " + what + " is " + t->shape.str() + ", expected plain " + s.str());
}

class ConvOp final : public Op {
 public:
  ConvOp(std::shared_ptr<Sgemm> sgemm, std::shared_ptr<Scratch> scratch, const Node& node, const Shape& in,
         const Shape& out, int columns)
      : sgemm_(std::move(sgemm)), scratch_(std::move(scratch)), name_(node.name), bias_(node.attr.bias),
        in_(in), out_(out), g_(Geometry::of(node.attr, in, out)),
        group_(gemm_conv::images_per_gemm(g_, in.n, columns)) {}

  void forward(const OpContext& ctx) override {
    expect(ctx.src[0], in_, name_, "src");
    expect(ctx.dst, out_, name_, "dst");
    const int o = g_.o, k = g_.rows(), p = g_.positions();
    const float* w = ctx.weights;
    const float* b = bias_ ? w + std::size_t(o) * k : nullptr;
    for (int n0 = 0; n0 < in_.n; n0 += group_) {
      const int images = std::min(group_, in_.n - n0), cols = images * p;
      float* y0 = ctx.dst->data + std::size_t(n0) * o * p;
      const float* col = columns(ctx.src[0]->data, n0, images);
      if (images == 1) {
        sgemm_->run(false, false, o, p, k, 1.0f, w, col, 0.0f, y0);
        if (b) add_bias(y0, b);
        continue;
      }
      float* tmp = scratch_->get(1, std::size_t(o) * cols);
      sgemm_->run(false, false, o, cols, k, 1.0f, w, col, 0.0f, tmp);
      for (int j = 0; j < images; ++j) {  // [O][G*P] -> G images of [O][P]
        float* y = y0 + std::size_t(j) * o * p;
        for (int c = 0; c < o; ++c) std::memcpy(y + std::size_t(c) * p, tmp + std::size_t(c) * cols + std::size_t(j) * p, sizeof(float) * p);
        if (b) add_bias(y, b);
      }
    }
  }

  BackwardReads backward_reads() const override { return {true, false}; }  // the input for the weight gradient

  void backward(const OpContext& ctx) override {
    expect(ctx.src[0], in_, name_, "src");
    expect(ctx.diff_dst, out_, name_, "diff_dst");
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (dx_t) expect(dx_t, in_, name_, "diff_src");
    const int o = g_.o, k = g_.rows(), p = g_.positions();
    const float* w = ctx.weights;
    float* dw = ctx.diff_weights;
    const float* dy_all = ctx.diff_dst->data;
    if (bias_) {
      float* db = dw + std::size_t(o) * k;
      for (int c = 0; c < o; ++c) {
        double acc = 0.0;
        for (int n = 0; n < in_.n; ++n) {
          const float* dy = dy_all + (std::size_t(n) * o + c) * p;
          for (int q = 0; q < p; ++q) acc += dy[q];
        }
        db[c] = static_cast<float>(acc);
      }
    }
    for (int n0 = 0; n0 < in_.n; n0 += group_) {
      const int images = std::min(group_, in_.n - n0), cols = images * p;
      const float* dy = dy_all + std::size_t(n0) * o * p;
      if (images > 1) {  // G images of [O][P] -> [O][G*P]
        float* t = scratch_->get(1, std::size_t(o) * cols);
        for (int j = 0; j < images; ++j)
          for (int c = 0; c < o; ++c)
            std::memcpy(t + std::size_t(c) * cols + std::size_t(j) * p, dy + (std::size_t(j) * o + c) * p, sizeof(float) * p);
        dy = t;
      }
      const float* col = columns(ctx.src[0]->data, n0, images);
      sgemm_->run(false, true, o, k, cols, 1.0f, dy, col, n0 == 0 ? 0.0f : 1.0f, dw);
      if (!dx_t) continue;
      float* dx0 = dx_t->data + std::size_t(n0) * in_.per_sample();
      if (images == 1 && g_.pointwise()) {
        sgemm_->run(true, false, k, p, o, 1.0f, w, dy, 0.0f, dx0);
        continue;
      }
      float* dcol = scratch_->get(0, std::size_t(k) * cols);  // the columns are not needed any more
      sgemm_->run(true, false, k, cols, o, 1.0f, w, dy, 0.0f, dcol);
      std::memset(dx0, 0, sizeof(float) * images * in_.per_sample());
      for (int j = 0; j < images; ++j)
        gemm_conv::col2im_add(dcol + std::size_t(j) * p, cols, g_, dx0 + std::size_t(j) * in_.per_sample());
    }
  }

 private:
  // The column matrix [K][images * P] of images n0.. (scratch slot 0), or the image itself.
  const float* columns(const float* x, int n0, int images) {
    const float* first = x + std::size_t(n0) * in_.per_sample();
    if (images == 1 && g_.pointwise()) return first;
    const int p = g_.positions(), cols = images * p;
    float* col = scratch_->get(0, std::size_t(g_.rows()) * cols);
    for (int j = 0; j < images; ++j)
      gemm_conv::im2col(first + std::size_t(j) * in_.per_sample(), g_, col + std::size_t(j) * p, cols);
    return col;
  }

  void add_bias(float* y, const float* b) const {
    const int p = g_.positions();
    for (int c = 0; c < g_.o; ++c) {
      float* row = y + std::size_t(c) * p;
      const float bc = b[c];
      for (int q = 0; q < p; ++q) row[q] += bc;
    }
  }

  std::shared_ptr<Sgemm> sgemm_;
  std::shared_ptr<Scratch> scratch_;
  std::string name_;
  bool bias_;
  Shape in_, out_;
  Geometry g_;
  int group_;
};

class FullyConnectedOp final : public Op {
 public:
  FullyConnectedOp(std::shared_ptr<Sgemm> sgemm, const Node& node, const Shape& in, const Shape& out)
      : sgemm_(std::move(sgemm)), name_(node.name), bias_(node.attr.bias), in_(in), out_(out),
        n_(in.n), k_(static_cast<int>(in.per_sample())), o_(out.c) {}

  // y[N][O] = x[N][K] * W[O][K]^T + b
  void forward(const OpContext& ctx) override {
    expect(ctx.src[0], in_, name_, "src");
    expect(ctx.dst, out_, name_, "dst");
    float* y = ctx.dst->data;
    sgemm_->run(false, true, n_, o_, k_, 1.0f, ctx.src[0]->data, ctx.weights, 0.0f, y);
    if (!bias_) return;
    const float* b = ctx.weights + std::size_t(o_) * k_;
    for (int n = 0; n < n_; ++n)
      for (int o = 0; o < o_; ++o) y[std::size_t(n) * o_ + o] += b[o];
  }

  // dx[N][K] = dy[N][O] * W[O][K];  dW[O][K] = dy^T[O][N] * x[N][K];  db[O] = column sums of dy
  BackwardReads backward_reads() const override { return {true, false}; }  // the input for the weight gradient

  void backward(const OpContext& ctx) override {
    expect(ctx.src[0], in_, name_, "src");
    expect(ctx.diff_dst, out_, name_, "diff_dst");
    const float* dy = ctx.diff_dst->data;
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (dx_t) {
      expect(dx_t, in_, name_, "diff_src");
      sgemm_->run(false, false, n_, k_, o_, 1.0f, dy, ctx.weights, 0.0f, dx_t->data);
    }
    sgemm_->run(true, false, o_, k_, n_, 1.0f, dy, ctx.src[0]->data, 0.0f, ctx.diff_weights);
    if (!bias_) return;
    float* db = ctx.diff_weights + std::size_t(o_) * k_;
    for (int o = 0; o < o_; ++o) {
      double acc = 0.0;
      for (int n = 0; n < n_; ++n) acc += dy[std::size_t(n) * o_ + o];
      db[o] = static_cast<float>(acc);
    }
  }

 private:
  std::shared_ptr<Sgemm> sgemm_;
  std::string name_;
  bool bias_;
  Shape in_, out_;
  int n_, k_, o_;
};

}  // namespace

std::unique_ptr<Op> make_conv(std::shared_ptr<Sgemm> sgemm, std::shared_ptr<Scratch> scratch, const Node& node,
                              const Shape& in, const Shape& out, int columns) {
  return std::make_unique<ConvOp>(std::move(sgemm), std::move(scratch), node, in, out, columns);
}

std::unique_ptr<Op> make_fully_connected(std::shared_ptr<Sgemm> sgemm, const Node& node, const Shape& in,
                                         const Shape& out) {
  return std::make_unique<FullyConnectedOp>(std::move(sgemm), node, in, out);
}

}  // namespace hpcnn::gemm_ops
