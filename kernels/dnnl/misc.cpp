// Add (binary add in src[0]'s layout), flatten (to plain {n, C*H*W, 1, 1}), dropout and softmax
// cross-entropy (plain loops on NCHW data, reordering blocked inputs first).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "base/rng.hpp"
#include "kernels/dnnl/ops.hpp"

namespace hpcnn::dnnl_impl {

Shape batch_shape(const Node& node, Inputs src) {
  Shape s = node.out;
  s.n = src[0]->shape.n;
  return s;
}

namespace {

using namespace dnnl;

void copy_floats(float* dst, const float* src, std::size_t n) {
  constexpr std::ptrdiff_t kChunk = 1 << 16;
  const auto count = static_cast<std::ptrdiff_t>(n);
  const std::ptrdiff_t chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::ptrdiff_t i = 0; i < chunks; ++i) {
    const std::ptrdiff_t b = i * kChunk, e = std::min(count, b + kChunk);
    std::memcpy(dst + b, src + b, static_cast<std::size_t>(e - b) * sizeof(float));
  }
}

// Copies between descs: a threaded memcpy when they match, a cached reorder otherwise.
void copy_desc(Copier& c, const float* src, const memory::desc& sd, float* dst, const memory::desc& dd) {
  if (sd == dd) return copy_floats(dst, src, sd.get_size() / sizeof(float));
  c.run(src, sd, dst, dd);
}

class AddOp final : public Op {
 public:
  AddOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst, bool relu)
      : ctx_(c), copier_(c), relu_(relu) {
    dst.shape = batch_shape(node, src);
    const memory::desc d0 = desc_of(*src[0]);
    dst.layout = make_layout(d0, dst.shape);
    add_ = binary(compat::binary(c->engine, algorithm::binary_add, d0, d0, d0, relu_post_op(relu)));
    if (relu && mode == Mode::Train) relu_grad_ = FusedReluGrad(c, d0);
    a_in_ = Converter(c, d0);
    b_in_ = Converter(c, d0);
    a_m_ = Mem(*c, d0);
    b_m_ = Mem(*c, d0);
    dst_m_ = Mem(*c, d0);
    d0_ = d0;
  }

  void forward(const OpContext& x) override {
    execute(*ctx_, add_,
            {{DNNL_ARG_SRC_0, a_m_.bind(a_in_.get(*x.src[0]))},
             {DNNL_ARG_SRC_1, b_m_.bind(b_in_.get(*x.src[1]))},
             {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}});
  }

  // A sum's gradient needs neither input; a fused ReLU's mask comes from the output.
  BackwardReads backward_reads() const override { return {false, relu_}; }

  void backward(const OpContext& x) override {
    Tensor g = *x.diff_dst;
    if (relu_) {
      // The masked gradient goes straight into the first input's gradient when it can.
      Tensor* d0 = x.diff_src.empty() ? nullptr : x.diff_src[0];
      g = relu_grad_.run(x, d0 && desc_of(*d0) == d0_ ? d0->data : nullptr);
    }
    for (Tensor* ds : x.diff_src)  // a shared buffer (network.cpp) needs no copy
      if (ds && ds->data != g.data) copy_desc(copier_, g.data, desc_of(g), ds->data, desc_of(*ds));
  }

 private:
  ContextPtr ctx_;
  Copier copier_;
  bool relu_;
  FusedReluGrad relu_grad_;
  memory::desc d0_;
  binary add_;
  Converter a_in_, b_in_;
  Mem a_m_, b_m_, dst_m_;
};

class FlattenOp final : public Op {
 public:
  FlattenOp(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst) : copier_(c) {
    dst.shape = batch_shape(node, src);
    dst.layout = nullptr;
    src_plain_ = plain_desc(src[0]->shape);
  }

  void forward(const OpContext& x) override {
    copy_desc(copier_, x.src[0]->data, desc_of(*x.src[0]), x.dst->data, src_plain_);
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // a copy

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    // The diff_dst of a flatten is plain: the same bytes as plain NCHW of the input shape.
    const float* g = x.diff_dst->data;
    if (x.diff_dst->layout) {
      g = scratch_.reserve(src_plain_.get_size());
      copier_.run(x.diff_dst->data, desc_of(*x.diff_dst), scratch_.data(), plain_desc(x.diff_dst->shape));
    }
    copy_desc(copier_, g, src_plain_, ds->data, desc_of(*ds));
  }

 private:
  Copier copier_;
  Buffer scratch_;
  memory::desc src_plain_;
};

class DropoutOp final : public Op {
 public:
  DropoutOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst)
      : train_(mode == Mode::Train), p_(node.attr.dropout_p), copier_(c) {
    dst.shape = batch_shape(node, src);
    const memory::desc plain = plain_desc(dst.shape);
    // Inference is the identity: keep the input's layout. Training works on plain data.
    dst.layout = train_ ? nullptr : src[0]->layout;
    if (!train_) return;
    src_in_ = Converter(c, plain);
    diff_dst_in_ = Converter(c, plain);
    diff_src_out_ = Converter(c, plain);
    keep_.resize(dst.shape.count());
  }

  void forward(const OpContext& x) override {
    if (!train_) {
      const memory::desc d = desc_of(*x.src[0]);
      return copy_floats(x.dst->data, x.src[0]->data, d.get_size() / sizeof(float));
    }
    const float* in = src_in_.get(*x.src[0]);
    float* out = x.dst->data;
    const float scale = p_ < 1.0f ? 1.0f / (1.0f - p_) : 0.0f;
    const auto n = static_cast<std::ptrdiff_t>(keep_.size());
    const std::uint64_t seed = x.seed, step = x.step;
    const int node = x.node;
    const float p = p_;
    std::uint8_t* keep = keep_.data();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const bool k = dropout_keep(seed, node, step, static_cast<std::uint64_t>(i), p);
      keep[i] = k;
      out[i] = k ? in[i] * scale : 0.0f;
    }
  }

  BackwardReads backward_reads() const override { return {false, false}; }  // its own mask

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    if (!train_) return;
    const float* g = diff_dst_in_.get(*x.diff_dst);
    float* out = diff_src_out_.target(*ds);
    const float scale = p_ < 1.0f ? 1.0f / (1.0f - p_) : 0.0f;
    const auto n = static_cast<std::ptrdiff_t>(keep_.size());
    const std::uint8_t* keep = keep_.data();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) out[i] = keep[i] ? g[i] * scale : 0.0f;
    diff_src_out_.finish(*ds);
  }

 private:
  bool train_;
  float p_;
  Copier copier_;
  Converter src_in_, diff_dst_in_, diff_src_out_;
  std::vector<std::uint8_t> keep_;
};

class SoftmaxXentOp final : public Op {
 public:
  SoftmaxXentOp(const ContextPtr& c, const Node& node, Inputs src, Tensor& dst) {
    dst.shape = batch_shape(node, src);
    dst.layout = nullptr;
    const Shape& s = src[0]->shape;
    n_ = s.n;
    classes_ = static_cast<int>(s.per_sample());
    src_in_ = Converter(c, plain_desc(s));
    diff_src_out_ = Converter(c, plain_desc(s));
  }

  void forward(const OpContext& x) override {
    if (!x.labels) throw RuntimeError("softmax cross-entropy: no labels");
    labels_.assign(x.labels, x.labels + n_);
    for (int i = 0; i < n_; ++i)
      if (labels_[i] < 0 || labels_[i] >= classes_)
        throw RuntimeError("softmax cross-entropy: label " + std::to_string(labels_[i]) +
                           " of sample " + std::to_string(i) + " is outside [0, " +
                           std::to_string(classes_) + ")");
    const float* logits = src_in_.get(*x.src[0]);
    float* prob = x.dst->data;
    double loss = 0.0;
    std::int64_t correct = 0;
    for (int i = 0; i < n_; ++i) {
      const float* z = logits + std::size_t(i) * classes_;
      float* p = prob + std::size_t(i) * classes_;
      int best = 0;
      for (int k = 1; k < classes_; ++k)
        if (z[k] > z[best]) best = k;
      double sum = 0.0;
      for (int k = 0; k < classes_; ++k) {
        p[k] = std::exp(z[k] - z[best]);
        sum += p[k];
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int k = 0; k < classes_; ++k) p[k] *= inv;
      const int label = labels_[i];
      loss += std::log(sum) - (double(z[label]) - z[best]);
      correct += best == label;
    }
    if (x.loss) *x.loss = static_cast<float>(loss / n_);
    if (x.correct) *x.correct = correct;
  }

  BackwardReads backward_reads() const override { return {false, true}; }  // the probabilities

  void backward(const OpContext& x) override {
    Tensor* ds = x.diff_src.empty() ? nullptr : x.diff_src[0];
    if (!ds) return;
    float* out = diff_src_out_.target(*ds);
    const float* prob = x.dst->data;
    const float inv_n = 1.0f / static_cast<float>(n_);
    const std::size_t count = std::size_t(n_) * classes_;
    for (std::size_t i = 0; i < count; ++i) out[i] = prob[i] * inv_n;
    for (int i = 0; i < n_; ++i) out[std::size_t(i) * classes_ + labels_[i]] -= inv_n;
    diff_src_out_.finish(*ds);
  }

 private:
  int n_ = 0, classes_ = 0;
  std::vector<std::int32_t> labels_;  // of the last forward, for backward
  Converter src_in_, diff_src_out_;
};

}  // namespace

std::unique_ptr<Op> make_add(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                             bool relu) {
  return std::make_unique<AddOp>(c, node, src, mode, dst, relu);
}

std::unique_ptr<Op> make_flatten(const ContextPtr& c, const Node& node, Inputs src, Mode, Tensor& dst) {
  return std::make_unique<FlattenOp>(c, node, src, dst);
}

std::unique_ptr<Op> make_dropout(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst) {
  return std::make_unique<DropoutOp>(c, node, src, mode, dst);
}

std::unique_ptr<Op> make_softmax_xent(const ContextPtr& c, const Node& node, Inputs src, Mode,
                                      Tensor& dst) {
  return std::make_unique<SoftmaxXentOp>(c, node, src, dst);
}

}  // namespace hpcnn::dnnl_impl
