// Shared helpers for op-level tests (test_gradients, test_backends): deterministic host data, one
// node run on any backend (upload, forward, backward, download), central finite differences and a
// stated error rule. Header-only; independent of GoogleTest so a test decides what to assert.
//
// Typical use:
//   test::OpProblem p = test::make_problem(OpKind::Conv, attr, {{2, 3, 5, 5}});  // random data
//   test::OpResult ref = test::run_op(*reference, p);
//   test::OpResult got = test::run_op(*dnnl, p);
//   test::ErrorStats e = test::compare(got.dst, ref.dst, /*atol=*/1e-5, /*rtol=*/1e-4);
//   EXPECT_TRUE(e.ok()) << e.describe("dst");
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend.hpp"
#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "base/bf16.hpp"
#include "base/rng.hpp"
#include "engine/tensor.hpp"

namespace hpcnn::test {

// ---------------------------------------------------------------------------------------------
// Deterministic host data
// ---------------------------------------------------------------------------------------------

// n values uniform in [lo, hi), a pure function of (seed, stream).
// Rounds every value to the nearest BF16 (round to nearest even), kept as float.
inline void round_to_bf16(std::vector<float>& v) {
  for (float& x : v) x = hpcnn::round_to_bf16(x);
}

inline std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo = -1.0f,
                                        float hi = 1.0f, std::uint64_t stream = 0) {
  Rng rng(seed, stream);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(lo, hi);
  return v;
}

// n distinct values (i - n/2 + 1/2) * spacing in a seeded random order: no ties closer than
// `spacing` and no value within spacing/2 of zero, so ReLU and max pooling stay differentiable
// under finite-difference steps smaller than spacing/2.
inline std::vector<float> spaced_vector(std::size_t n, std::uint64_t seed, float spacing = 0.05f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = (static_cast<float>(i) - static_cast<float>(n) / 2.0f + 0.5f) * spacing;
  Rng rng(seed, 7);
  for (std::size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);  // Fisher-Yates
  return v;
}

// Number of parameters a node of this kind has for these input shapes (canonical layouts in
// graph.hpp: weight then bias, or scale then shift).
inline std::size_t param_count_for(OpKind kind, const OpAttr& a, const std::vector<Shape>& in) {
  switch (kind) {
    case OpKind::Conv:
      return std::size_t(a.out_channels) * in.at(0).c * a.kh * a.kw + (a.bias ? a.out_channels : 0);
    case OpKind::FullyConnected:
      return std::size_t(a.out_channels) * in.at(0).per_sample() + (a.bias ? a.out_channels : 0);
    case OpKind::BatchNorm:
      return 2 * std::size_t(in.at(0).c);
    default:
      return 0;
  }
}

// A one-layer node: inputs are nodes 0..k-1 (so the node id is k), out is the per-sample shape.
inline Node make_node(OpKind kind, const OpAttr& attr, const std::vector<Shape>& in,
                      std::string name = "op") {
  Node node;
  node.kind = kind;
  node.name = std::move(name);
  node.attr = attr;
  std::vector<Shape> per_sample = in;
  for (Shape& s : per_sample) s.n = 1;
  node.out = infer_shape(kind, attr, per_sample, node.name);
  for (std::size_t i = 0; i < in.size(); ++i) node.inputs.push_back(static_cast<int>(i));
  node.param_offset = 0;
  node.param_count = param_count_for(kind, attr, in);
  return node;
}

// ---------------------------------------------------------------------------------------------
// One op problem and its results (everything host-side, plain NCHW)
// ---------------------------------------------------------------------------------------------

struct OpProblem {
  OpKind kind = OpKind::Relu;
  OpAttr attr;
  Mode mode = Mode::Train;
  std::vector<Shape> in;                 // full input shapes, batch included
  std::vector<std::vector<float>> src;   // one host vector per input (in[i].count() values)
  std::vector<float> weights;            // canonical parameters (param_count_for values)
  std::vector<std::int32_t> labels;      // SoftmaxCrossEntropy: in[0].n labels
  std::vector<float> diff_dst;           // gradient w.r.t. dst; empty: backward is not run.
                                         // SoftmaxCrossEntropy ignores its values (its backward is
                                         // the gradient of the mean loss) but needs it non-empty.
  std::vector<bool> need_diff_src;       // per input; empty means "all inputs" (false -> nullptr)
  std::uint64_t seed = 42, step = 0;     // dropout mask
  int node = 0;                          // OpContext::node; 0 means "the node id, in.size()"
  // BatchNorm: running statistics the op starts from (C values each); empty means PyTorch's
  // initial mean 0 / variance 1. A network keeps them in its buffers; here OpRun owns them.
  std::vector<float> running_mean, running_var;

  Node make() const { return make_node(kind, attr, in); }
  int node_id() const { return node != 0 ? node : static_cast<int>(in.size()); }
  bool wants_diff_src(std::size_t i) const { return need_diff_src.empty() || need_diff_src.at(i); }
};

// A problem with seeded random data: inputs uniform in [-1, 1) (spaced_vector for ReLU/MaxPool
// so the gradient check avoids kinks), weights uniform in +-1/sqrt(fan_in), BN scale in
// [0.5, 1.5), labels uniform in [0, classes), diff_dst uniform in [-1, 1) (or empty: no backward).
inline OpProblem make_problem(OpKind kind, const OpAttr& attr, std::vector<Shape> in,
                              std::uint64_t seed = 1, bool with_backward = true,
                              Mode mode = Mode::Train) {
  OpProblem p;
  p.kind = kind;
  p.attr = attr;
  p.mode = mode;
  p.in = std::move(in);
  p.seed = seed;
  const bool spaced = kind == OpKind::Relu || kind == OpKind::MaxPool;
  for (std::size_t i = 0; i < p.in.size(); ++i)
    p.src.push_back(spaced ? spaced_vector(p.in[i].count(), seed + 100 * i)
                           : random_vector(p.in[i].count(), seed, -1.0f, 1.0f, 100 + i));
  const std::size_t np = param_count_for(kind, attr, p.in);
  if (kind == OpKind::BatchNorm) {
    const std::size_t c = np / 2;
    p.weights = random_vector(c, seed, 0.5f, 1.5f, 200);
    auto shift = random_vector(c, seed, -0.5f, 0.5f, 201);
    p.weights.insert(p.weights.end(), shift.begin(), shift.end());
  } else if (np > 0) {
    const Shape& s = p.in[0];
    const double fan_in = kind == OpKind::Conv ? double(s.c) * attr.kh * attr.kw : double(s.per_sample());
    const float bound = static_cast<float>(1.0 / std::sqrt(fan_in));
    p.weights = random_vector(np, seed, -bound, bound, 202);
  }
  if (kind == OpKind::BatchNorm) {
    // Away from the initial 0 / 1, so an op that ignores the given statistics in inference (or
    // restarts from 0 / 1 in training) differs from the reference.
    const std::size_t c = np / 2;
    p.running_mean = random_vector(c, seed, -0.5f, 0.5f, 205);
    p.running_var = random_vector(c, seed, 0.5f, 2.0f, 206);
  }
  if (kind == OpKind::SoftmaxCrossEntropy) {
    Rng rng(seed, 203);
    for (int i = 0; i < p.in[0].n; ++i)
      p.labels.push_back(static_cast<std::int32_t>(rng.next() % static_cast<std::uint64_t>(p.in[0].c)));
  }
  if (with_backward) {
    const Shape out = infer_shape(kind, attr, p.in, "op");
    p.diff_dst = random_vector(out.count(), seed, -1.0f, 1.0f, 204);
  }
  return p;
}

struct OpResult {
  Shape dst_shape;
  std::vector<float> dst;
  std::vector<std::vector<float>> diff_src;  // per input; empty for inputs not asked for
  std::vector<float> diff_weights;           // empty without parameters or backward
  float loss = 0.0f;                         // SoftmaxCrossEntropy only
  std::int64_t correct = 0;
  std::vector<float> running_mean, running_var;  // BatchNorm: after forward (updated in Train)
};

// ---------------------------------------------------------------------------------------------
// Running statistics of a BatchNorm problem on a device (what a Network's buffers hold)
// ---------------------------------------------------------------------------------------------

class RunningStats {
 public:
  RunningStats() = default;
  // Allocates C floats each for a BatchNorm problem (nothing otherwise); alloc_floats' pointers
  // are 256-byte aligned on the GPU, as the network's buffer layout guarantees.
  RunningStats(Backend& be, const OpProblem& p) : be_(&be) {
    if (p.kind != OpKind::BatchNorm) return;
    channels_ = static_cast<std::size_t>(p.in.at(0).c);
    mean_ = be.alloc_floats(channels_);
    var_ = be.alloc_floats(channels_);
    upload(p);
  }
  // Problem values (or 0 / 1 when the problem gives none) -> device.
  void upload(const OpProblem& p) {
    if (!mean_) return;
    std::vector<float> m = p.running_mean, v = p.running_var;
    if (m.empty()) m.assign(channels_, 0.0f);
    if (v.empty()) v.assign(channels_, 1.0f);
    if (m.size() != channels_ || v.size() != channels_)
      throw std::invalid_argument("RunningStats: running_mean/running_var need one value per channel");
    be_->copy_to_device(mean_.get(), m.data(), channels_ * sizeof(float));
    be_->copy_to_device(var_.get(), v.data(), channels_ * sizeof(float));
  }
  void set(OpContext& ctx) const {
    ctx.running_mean = mean_.get();
    ctx.running_var = var_.get();
  }
  void read(OpResult& r) const {
    if (!mean_) return;
    r.running_mean.resize(channels_);
    r.running_var.resize(channels_);
    be_->copy_to_host(r.running_mean.data(), mean_.get(), channels_ * sizeof(float));
    be_->copy_to_host(r.running_var.data(), var_.get(), channels_ * sizeof(float));
  }

 private:
  Backend* be_ = nullptr;
  std::size_t channels_ = 0;
  std::shared_ptr<float> mean_, var_;
};

// ---------------------------------------------------------------------------------------------
// OpRun: one node on one backend, with device tensors kept between calls
// ---------------------------------------------------------------------------------------------
// Inputs are uploaded in plain layout (layout == nullptr, which every backend accepts); dst takes
// the layout make_op chose; diff_dst is written in dst's layout and diff_src[i] in src[i]'s, all
// through write_plain / read_plain. Change problem() and call upload() to rerun with new data.
class OpRun {
 public:
  OpRun(Backend& backend, OpProblem problem) : be_(backend), p_(std::move(problem)) {
    node_ = p_.make();
    const std::size_t k = p_.in.size();
    src_.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      src_[i].shape = p_.in[i];
      be_.allocate(src_[i]);
      src_ptrs_.push_back(&src_[i]);
    }
    op_ = be_.make_op(node_, src_ptrs_, p_.mode, dst_);
    be_.allocate(dst_);
    const std::size_t np = param_count_for(p_.kind, p_.attr, p_.in);
    if (np > 0) {
      weights_ = be_.alloc_floats(np);
      diff_weights_ = be_.alloc_floats(np);
    }
    if (!p_.labels.empty()) labels_ = be_.alloc_ints(p_.labels.size());
    stats_ = RunningStats(be_, p_);
    if (backward_enabled()) {
      diff_dst_.shape = dst_.shape;
      diff_dst_.layout = dst_.layout;
      be_.allocate(diff_dst_);
      diff_src_.resize(k);
      for (std::size_t i = 0; i < k; ++i) {
        if (p_.wants_diff_src(i)) {
          diff_src_[i].shape = src_[i].shape;
          diff_src_[i].layout = src_[i].layout;
          be_.allocate(diff_src_[i]);
          diff_src_ptrs_.push_back(&diff_src_[i]);
        } else {
          diff_src_ptrs_.push_back(nullptr);
        }
      }
    }
    upload();
  }

  OpRun(const OpRun&) = delete;  // holds pointers into its own tensors
  OpRun& operator=(const OpRun&) = delete;

  OpProblem& problem() { return p_; }
  const Node& node() const { return node_; }
  Shape dst_shape() const { return dst_.shape; }
  bool backward_enabled() const { return !p_.diff_dst.empty() && p_.mode == Mode::Train; }

  // Host problem data -> device (inputs, weights, labels, running statistics, diff_dst).
  void upload() {
    stats_.upload(p_);
    for (std::size_t i = 0; i < src_.size(); ++i) {
      if (p_.src.at(i).size() != p_.in[i].count())
        throw std::invalid_argument("OpRun: input " + std::to_string(i) + " has the wrong size");
      be_.write_plain(src_[i], p_.src[i].data());
    }
    if (weights_) {
      const std::size_t np = param_count_for(p_.kind, p_.attr, p_.in);
      if (p_.weights.size() != np) throw std::invalid_argument("OpRun: wrong number of weights");
      be_.copy_to_device(weights_.get(), p_.weights.data(), np * sizeof(float));
    }
    if (labels_)
      be_.copy_to_device(labels_.get(), p_.labels.data(), p_.labels.size() * sizeof(std::int32_t));
    if (backward_enabled()) {
      if (p_.diff_dst.size() != dst_.shape.count())
        throw std::invalid_argument("OpRun: diff_dst has the wrong size");
      be_.write_plain(diff_dst_, p_.diff_dst.data());
    }
  }

  void forward() {
    OpContext ctx = context();
    ctx.loss = &loss_;
    ctx.correct = &correct_;
    op_->forward(ctx);
    be_.synchronize();
  }

  void backward() {
    if (!backward_enabled()) throw std::logic_error("OpRun::backward without diff_dst in train mode");
    OpContext ctx = context();
    ctx.diff_src = diff_src_ptrs_;
    ctx.diff_dst = &diff_dst_;
    ctx.diff_weights = diff_weights_.get();
    op_->backward(ctx);
    be_.synchronize();
  }

  std::vector<float> dst() { return read(dst_); }
  float loss() const { return loss_; }
  std::int64_t correct() const { return correct_; }
  std::vector<float> diff_src(std::size_t i) {
    return diff_src_ptrs_.at(i) ? read(diff_src_[i]) : std::vector<float>{};
  }
  std::vector<float> diff_weights() {
    std::vector<float> h(param_count_for(p_.kind, p_.attr, p_.in));
    if (!h.empty()) be_.copy_to_host(h.data(), diff_weights_.get(), h.size() * sizeof(float));
    return h;
  }

  // Forward (and backward when enabled) on the current problem, results read back.
  OpResult run() {
    forward();
    OpResult r;
    r.dst_shape = dst_.shape;
    r.dst = dst();
    r.loss = loss_;
    r.correct = correct_;
    stats_.read(r);
    if (backward_enabled()) {
      backward();
      for (std::size_t i = 0; i < src_.size(); ++i) r.diff_src.push_back(diff_src(i));
      if (weights_) r.diff_weights = diff_weights();
    }
    return r;
  }

 private:
  OpContext context() {
    OpContext ctx;
    ctx.src = src_ptrs_;
    ctx.dst = &dst_;
    ctx.weights = weights_.get();
    ctx.labels = labels_.get();
    ctx.seed = p_.seed;
    ctx.step = p_.step;
    ctx.node = p_.node_id();
    stats_.set(ctx);
    return ctx;
  }
  std::vector<float> read(const Tensor& t) {
    std::vector<float> h(t.shape.count());
    be_.read_plain(t, h.data());
    return h;
  }

  Backend& be_;
  OpProblem p_;
  Node node_;
  std::vector<Tensor> src_;
  std::vector<const Tensor*> src_ptrs_;
  Tensor dst_, diff_dst_;
  std::vector<Tensor> diff_src_;
  std::vector<Tensor*> diff_src_ptrs_;
  std::shared_ptr<float> weights_, diff_weights_;
  std::shared_ptr<std::int32_t> labels_;
  RunningStats stats_;
  std::unique_ptr<Op> op_;
  float loss_ = 0.0f;
  std::int64_t correct_ = 0;
};

// One forward (+ backward) of a problem on a backend.
inline OpResult run_op(Backend& backend, const OpProblem& problem) {
  OpRun r(backend, problem);
  return r.run();
}

// ---------------------------------------------------------------------------------------------
// Error rule: element i passes iff |got - ref| <= atol + rtol * |ref|
// ---------------------------------------------------------------------------------------------

struct ErrorStats {
  double atol = 0.0, rtol = 0.0;
  std::size_t count = 0, wrong = 0;
  double max_abs = 0.0;     // worst |got - ref|
  double max_ratio = 0.0;   // worst |got - ref| / (atol + rtol*|ref|); <= 1 passes
  std::size_t worst = 0;    // index of the element with max_ratio
  double worst_got = 0.0, worst_ref = 0.0;
  bool size_mismatch = false;

  bool ok() const { return !size_mismatch && wrong == 0; }
  std::string rule() const {
    std::ostringstream s;
    s << "|got - ref| <= " << atol << " + " << rtol << " * |ref|";
    return s.str();
  }
  std::string describe(const std::string& what) const {
    std::ostringstream s;
    if (size_mismatch) {
      s << what << ": size mismatch";
      return s.str();
    }
    s << what << ": " << (ok() ? "PASSED" : "FAILED") << " rule " << rule() << ", " << wrong << "/"
      << count << " wrong, max abs err " << max_abs << ", worst ratio " << max_ratio << " at ["
      << worst << "] got " << worst_got << " ref " << worst_ref;
    return s.str();
  }
};

template <class A, class B>
ErrorStats compare(const std::vector<A>& got, const std::vector<B>& ref, double atol, double rtol) {
  ErrorStats e;
  e.atol = atol;
  e.rtol = rtol;
  if (got.size() != ref.size()) {
    e.size_mismatch = true;
    return e;
  }
  e.count = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    const double err = std::fabs(g - r);
    const double ratio = err / (atol + rtol * std::fabs(r));
    if (!(ratio <= 1.0)) ++e.wrong;  // NaN counts as wrong
    if (i == 0 || std::isnan(ratio) || ratio > e.max_ratio) {
      e.max_ratio = std::isnan(ratio) ? INFINITY : ratio;
      e.worst = i;
      e.worst_got = g;
      e.worst_ref = r;
    }
    if (std::isnan(err) || err > e.max_abs) e.max_abs = std::isnan(err) ? INFINITY : err;
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// Central finite differences of L = sum(dst * diff_dst), or L = loss for SoftmaxCrossEntropy
// ---------------------------------------------------------------------------------------------

struct FiniteDifferences {
  std::vector<std::vector<double>> diff_src;  // per input (empty when not asked for)
  std::vector<double> diff_weights;
};

// The scalar objective of the gradient check, accumulated in double.
inline double objective(OpRun& run) {
  run.forward();
  if (run.problem().kind == OpKind::SoftmaxCrossEntropy) return static_cast<double>(run.loss());
  const std::vector<float> y = run.dst();
  const std::vector<float>& r = run.problem().diff_dst;
  double l = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * r[i];
  return l;
}

// dL/dx_j ~ (L(x_j + eps) - L(x_j - eps)) / (2 eps) for every input element and every weight.
// The problem's dropout step is kept fixed, so the mask is the same for every evaluation.
inline FiniteDifferences finite_differences(Backend& backend, const OpProblem& problem, double eps) {
  OpRun run(backend, problem);
  OpProblem& p = run.problem();
  FiniteDifferences fd;
  auto probe = [&](std::vector<float>& x, std::vector<double>& out) {
    out.assign(x.size(), 0.0);
    for (std::size_t j = 0; j < x.size(); ++j) {
      const float saved = x[j];
      // The perturbed points are rounded to float; use the actual step taken.
      const float xp = static_cast<float>(saved + eps), xm = static_cast<float>(saved - eps);
      x[j] = xp;
      run.upload();
      const double lp = objective(run);
      x[j] = xm;
      run.upload();
      const double lm = objective(run);
      x[j] = saved;
      out[j] = (lp - lm) / (static_cast<double>(xp) - static_cast<double>(xm));
    }
    run.upload();
  };
  fd.diff_src.resize(p.in.size());
  for (std::size_t i = 0; i < p.in.size(); ++i)
    if (p.wants_diff_src(i)) probe(p.src[i], fd.diff_src[i]);
  if (!p.weights.empty()) probe(p.weights, fd.diff_weights);
  return fd;
}

}  // namespace hpcnn::test
