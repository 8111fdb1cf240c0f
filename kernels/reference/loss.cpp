// Reference softmax cross-entropy over logits {n, classes, 1, 1}: dst = softmax probabilities,
// loss = batch mean of -log p[label] = log-sum-exp - logit[label] (stable, in double),
// correct = number of samples whose first arg-max equals the label; backward dx = (p - onehot)/N
// (the gradient of the mean loss; diff_dst is not read).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/reference/ops.hpp"

namespace hpcnn::reference {

namespace {

class SoftmaxCrossEntropyOp final : public Op {
 public:
  explicit SoftmaxCrossEntropyOp(const OpSetup& s) : name_(s.node.name), shape_(s.in[0]) {}

  void forward(const OpContext& ctx) override {
    expect_shape(ctx.src[0], shape_, name_, "src");
    expect_shape(ctx.dst, shape_, name_, "dst");
    if (!ctx.labels) throw std::logic_error(name_ + ": no labels");
    const int batch = shape_.n, classes = shape_.c;
    labels_.assign(ctx.labels, ctx.labels + batch);
    for (int n = 0; n < batch; ++n)
      if (labels_[n] < 0 || labels_[n] >= classes)
        throw std::runtime_error(name_ + ": label " + std::to_string(labels_[n]) + " of sample " +
                                 std::to_string(n) + " is outside [0, " + std::to_string(classes) + ")");
    const float* x = ctx.src[0]->data;
    float* p = ctx.dst->data;
    double loss = 0.0;
    std::int64_t correct = 0;
    for (int n = 0; n < batch; ++n) {
      const float* z = x + std::size_t(n) * classes;
      int arg = 0;
      for (int c = 1; c < classes; ++c)
        if (z[c] > z[arg]) arg = c;
      const double zmax = z[arg];
      double sum = 0.0;
      for (int c = 0; c < classes; ++c) sum += std::exp(double(z[c]) - zmax);
      const double lse = zmax + std::log(sum);
      for (int c = 0; c < classes; ++c)
        p[std::size_t(n) * classes + c] = static_cast<float>(std::exp(double(z[c]) - lse));
      loss += lse - double(z[labels_[n]]);
      if (arg == labels_[n]) ++correct;
    }
    if (ctx.loss) *ctx.loss = static_cast<float>(loss / batch);
    if (ctx.correct) *ctx.correct = correct;
  }

  BackwardReads backward_reads() const override { return {false, true}; }  // the probabilities it wrote

  void backward(const OpContext& ctx) override {
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    if (!dx_t) return;
    expect_shape(ctx.dst, shape_, name_, "dst");
    expect_shape(dx_t, shape_, name_, "diff_src");
    if (labels_.size() != std::size_t(shape_.n))
      throw std::logic_error(name_ + ": softmax cross-entropy backward before forward");
    const int batch = shape_.n, classes = shape_.c;
    const float* p = ctx.dst->data;
    for (int n = 0; n < batch; ++n)
      for (int c = 0; c < classes; ++c) {
        const std::size_t i = std::size_t(n) * classes + c;
        dx_t->data[i] = static_cast<float>((double(p[i]) - (c == labels_[n] ? 1.0 : 0.0)) / batch);
      }
  }

 private:
  std::string name_;
  Shape shape_;
  std::vector<std::int32_t> labels_;
};

}  // namespace

std::unique_ptr<Op> make_softmax_cross_entropy(const OpSetup& s) {
  return std::make_unique<SoftmaxCrossEntropyOp>(s);
}

}  // namespace hpcnn::reference
