// Every registered backend except "reference" against the reference backend, op by op: forward and
// backward of every layer kind in several configurations, with inputs in plain NCHW and (for 4-D
// activations) in the backend's own preferred layout. A backend gets all of these by registering.
//
// Error rule (stated once, printed per case): |got - ref| <= tol * max|ref| element-wise, tol per
// case: 1e-6 where the result is exact up to rounding of one operation, 1e-5 for reductions, 2e-5
// for a convolution large enough to run as Winograd (observed worst cases are 5-10x below). The
// bound is relative to the largest reference magnitude, so tiny entries of a large tensor do not
// need a meaningless relative accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "engine/backend.hpp"
#include "kernels/registry.hpp"
#include "backend_selection.hpp"
#include "op_test_util.hpp"

namespace hpcnn {
namespace {

using test::OpProblem;
using test::OpResult;

// ---- runner with chosen input layouts ----------------------------------------------------------

// The layout a backend gives an activation of shape s when a convolution produces it (its
// "native" layout, e.g. nChw16c for oneDNN); nullptr for backends that keep everything plain.
std::shared_ptr<const void> native_layout(Backend& be, const Shape& s) {
  OpAttr a;
  a.out_channels = s.c;
  Tensor in, out;
  in.shape = Shape{s.n, 4, s.h, s.w};
  Node node = test::make_node(OpKind::Conv, a, {in.shape});
  const Tensor* srcs[] = {&in};
  auto op = be.make_op(node, srcs, Mode::Train, out);
  return out.layout;
}

// One forward + backward like test::run_op, but input i arrives in layouts[i]; diff_src[i] takes
// src[i]'s layout and diff_dst dst's layout, as the executor does.
OpResult run_with_layouts(Backend& be, const OpProblem& p,
                          const std::vector<std::shared_ptr<const void>>& layouts) {
  const Node node = p.make();
  const std::size_t k = p.in.size();
  std::vector<Tensor> src(k), diff_src(k);
  std::vector<const Tensor*> src_ptrs;
  std::vector<Tensor*> diff_ptrs;
  for (std::size_t i = 0; i < k; ++i) {
    src[i].shape = p.in[i];
    src[i].layout = layouts[i];
    be.allocate(src[i]);
    be.write_plain(src[i], p.src[i].data());
    src_ptrs.push_back(&src[i]);
  }
  Tensor dst;
  auto op = be.make_op(node, src_ptrs, p.mode, dst);
  be.allocate(dst);
  const std::size_t np = test::param_count_for(p.kind, p.attr, p.in);
  std::shared_ptr<float> w, dw;
  if (np) {
    w = be.alloc_floats(np);
    dw = be.alloc_floats(np);
    be.copy_to_device(w.get(), p.weights.data(), np * sizeof(float));
  }
  std::shared_ptr<std::int32_t> labels;
  if (!p.labels.empty()) {
    labels = be.alloc_ints(p.labels.size());
    be.copy_to_device(labels.get(), p.labels.data(), p.labels.size() * sizeof(std::int32_t));
  }
  const test::RunningStats stats(be, p);
  OpResult r;
  OpContext ctx;
  stats.set(ctx);
  ctx.src = src_ptrs;
  ctx.dst = &dst;
  ctx.weights = w.get();
  ctx.labels = labels.get();
  ctx.loss = &r.loss;
  ctx.correct = &r.correct;
  ctx.seed = p.seed;
  ctx.step = p.step;
  ctx.node = p.node_id();
  op->forward(ctx);
  be.synchronize();
  r.dst_shape = dst.shape;
  r.dst.resize(dst.shape.count());
  be.read_plain(dst, r.dst.data());
  stats.read(r);
  if (p.diff_dst.empty() || p.mode != Mode::Train) return r;

  Tensor diff_dst;
  diff_dst.shape = dst.shape;
  diff_dst.layout = dst.layout;
  be.allocate(diff_dst);
  be.write_plain(diff_dst, p.diff_dst.data());
  for (std::size_t i = 0; i < k; ++i) {
    if (!p.wants_diff_src(i)) {
      diff_ptrs.push_back(nullptr);
      continue;
    }
    diff_src[i].shape = src[i].shape;
    diff_src[i].layout = src[i].layout;
    be.allocate(diff_src[i]);
    // Poison: backward must overwrite, not accumulate.
    std::vector<float> junk(src[i].shape.count(), 1234.5f);
    be.write_plain(diff_src[i], junk.data());
    diff_ptrs.push_back(&diff_src[i]);
  }
  if (np) {
    std::vector<float> junk(np, -777.0f);
    be.copy_to_device(dw.get(), junk.data(), np * sizeof(float));
  }
  ctx.diff_src = diff_ptrs;
  ctx.diff_dst = &diff_dst;
  ctx.diff_weights = dw.get();
  op->backward(ctx);
  be.synchronize();
  for (std::size_t i = 0; i < k; ++i) {
    std::vector<float> h;
    if (diff_ptrs[i]) {
      h.resize(src[i].shape.count());
      be.read_plain(diff_src[i], h.data());
    }
    r.diff_src.push_back(std::move(h));
  }
  if (np) {
    r.diff_weights.resize(np);
    be.copy_to_host(r.diff_weights.data(), dw.get(), np * sizeof(float));
  }
  return r;
}

// ---- cases -------------------------------------------------------------------------------------

struct Case {
  std::string name;
  std::function<OpProblem()> make;
  double tol = 1e-5;
};

OpAttr conv_attr(int oc, int k, int s, int pad, bool bias) {
  OpAttr a;
  a.out_channels = oc;
  a.kh = a.kw = k;
  a.sh = a.sw = s;
  a.ph = a.pw = pad;
  a.bias = bias;
  return a;
}

OpAttr pool_attr(int k, int s, int pad) { return conv_attr(0, k, s, pad, false); }

Case make_case(std::string name, OpKind kind, OpAttr a, std::vector<Shape> in, double tol,
               Mode mode = Mode::Train, std::function<void(OpProblem&)> tweak = {}) {
  return {std::move(name),
          [=] {
            OpProblem p = test::make_problem(kind, a, in, 7, true, mode);
            if (tweak) tweak(p);
            return p;
          },
          tol};
}

std::vector<Case> all_cases() {
  std::vector<Case> c;
  const auto no_input_grad = [](OpProblem& p) { p.need_diff_src = {false}; };
  // Convolutions.
  c.push_back(make_case("conv3x3_s1_p1_bias_rgb", OpKind::Conv, conv_attr(16, 3, 1, 1, true),
                        {{4, 3, 8, 8}}, 1e-5));
  c.push_back(make_case("conv3x3_first_layer_no_input_grad", OpKind::Conv,
                        conv_attr(16, 3, 1, 1, false), {{4, 3, 8, 8}}, 1e-5, Mode::Train,
                        no_input_grad));
  c.push_back(make_case("conv3x3_s2_p1_nobias", OpKind::Conv, conv_attr(32, 3, 2, 1, false),
                        {{4, 16, 9, 9}}, 1e-5));
  c.push_back(make_case("conv1x1_nobias", OpKind::Conv, conv_attr(16, 1, 1, 0, false),
                        {{2, 32, 7, 7}}, 1e-5));
  c.push_back(make_case("conv1x1_s2_downsample", OpKind::Conv, conv_attr(32, 1, 2, 0, false),
                        {{2, 16, 8, 8}}, 1e-5));
  c.push_back(make_case("conv5x5_lenet", OpKind::Conv, conv_attr(16, 5, 1, 0, true),
                        {{3, 6, 14, 14}}, 1e-5));
  // LeNet-5's conv1: 6 output channels, which oneDNN runs channels-last (blocked would pad to 16).
  c.push_back(make_case("conv5x5_lenet_first_layer", OpKind::Conv, conv_attr(6, 5, 1, 0, true),
                        {{3, 3, 12, 12}}, 1e-5, Mode::Train, no_input_grad));
  c.push_back(make_case("conv11x11_s4_p2_alexnet", OpKind::Conv, conv_attr(8, 11, 4, 2, true),
                        {{2, 3, 35, 35}}, 1e-5));
  // AlexNet's first layer at full width: on AVX2 oneDNN has only its gemm fallback for it, which
  // the dnnl backend runs channels-last (tests/dnnl_avx2_path.sh runs these cases on that path).
  c.push_back(make_case("conv11x11_s4_p5_alexnet_first_layer", OpKind::Conv, conv_attr(64, 11, 4, 5, true),
                        {{2, 3, 32, 32}}, 1e-5, Mode::Train, no_input_grad));
  c.push_back(make_case("conv11x11_s4_p5_alexnet_infer", OpKind::Conv, conv_attr(64, 11, 4, 5, true),
                        {{2, 3, 32, 32}}, 1e-5, Mode::Infer));
  c.push_back(make_case("conv3x3_odd_channels", OpKind::Conv, conv_attr(5, 3, 1, 1, true),
                        {{2, 7, 6, 6}}, 1e-5));
  // Large enough that oneDNN may pick Winograd (its transforms round differently: looser bound).
  c.push_back(make_case("conv3x3_resnet_block", OpKind::Conv, conv_attr(64, 3, 1, 1, false),
                        {{32, 64, 16, 16}}, 2e-5));
  // A 3x3 kernel larger than its map (ResNet's last stage: 2x2 and 1x1, and the 4x4 -> 2x2
  // downsample): on AVX2 oneDNN has no JIT backward-weights kernel for these, and the dnnl
  // backend computes the weight gradient as one GEMM over the batch (conv_batch_gemm.hpp).
  c.push_back(make_case("conv3x3_map2x2_bias", OpKind::Conv, conv_attr(64, 3, 1, 1, true), {{4, 64, 2, 2}}, 1e-5));
  c.push_back(make_case("conv3x3_map1x1", OpKind::Conv, conv_attr(64, 3, 1, 1, false), {{4, 64, 1, 1}}, 1e-5));
  c.push_back(make_case("conv3x3_s2_map4x4", OpKind::Conv, conv_attr(64, 3, 2, 1, false), {{4, 32, 4, 4}}, 1e-5));
  c.push_back(make_case("conv3x3_infer", OpKind::Conv, conv_attr(16, 3, 1, 1, true),
                        {{2, 16, 6, 6}}, 1e-5, Mode::Infer));
  // Batch normalization (train: batch statistics, running statistics updated; infer: given
  // running statistics, make_problem's random ones, not the initial 0 / 1).
  c.push_back(make_case("bn_train", OpKind::BatchNorm, {}, {{4, 16, 5, 5}}, 1e-5));
  c.push_back(make_case("bn_train_c3", OpKind::BatchNorm, {}, {{8, 3, 4, 4}}, 1e-5));
  c.push_back(make_case("bn_train_wide", OpKind::BatchNorm, {}, {{8, 64, 8, 8}}, 1e-5));
  c.push_back(make_case("bn_infer", OpKind::BatchNorm, {}, {{4, 16, 5, 5}}, 1e-5, Mode::Infer));
  // Activations.
  c.push_back(make_case("relu", OpKind::Relu, {}, {{2, 16, 6, 6}}, 1e-6));
  c.push_back(make_case("tanh", OpKind::Tanh, {}, {{2, 6, 5, 5}}, 1e-5));
  // Pooling.
  c.push_back(make_case("maxpool3x3_s2_p1", OpKind::MaxPool, pool_attr(3, 2, 1), {{2, 16, 9, 9}}, 1e-6));
  c.push_back(make_case("maxpool2x2_s2", OpKind::MaxPool, pool_attr(2, 2, 0), {{2, 6, 8, 8}}, 1e-6));
  c.push_back(make_case("maxpool3x3_s2_alexnet", OpKind::MaxPool, pool_attr(3, 2, 0), {{2, 16, 15, 15}}, 1e-6));
  c.push_back(make_case("avgpool3x3_s2_p1_incl_pad", OpKind::AvgPool, pool_attr(3, 2, 1),
                        {{2, 16, 9, 9}}, 1e-5));
  c.push_back(make_case("avgpool2x2_s2", OpKind::AvgPool, pool_attr(2, 2, 0), {{2, 6, 10, 10}}, 1e-5));
  c.push_back(make_case("global_avgpool", OpKind::GlobalAvgPool, {}, {{2, 32, 4, 4}}, 1e-5));
  // ResNet's global pooling after a 1x1 map: dnnl reads a plain 1x1 input as channels-last.
  c.push_back(make_case("global_avgpool_1x1_infer", OpKind::GlobalAvgPool, {}, {{4, 64, 1, 1}}, 1e-6, Mode::Infer));
  c.push_back(make_case("maxpool_infer", OpKind::MaxPool, pool_attr(3, 2, 1), {{2, 16, 9, 9}}, 1e-6,
                        Mode::Infer));
  // LRN: AlexNet's constants, and strong ones so the normalization matters.
  OpAttr lrn;
  lrn.lrn_size = 5;
  c.push_back(make_case("lrn_alexnet", OpKind::Lrn, lrn, {{2, 16, 5, 5}}, 1e-5));
  c.push_back(make_case("lrn_alexnet_c64", OpKind::Lrn, lrn, {{4, 64, 8, 8}}, 1e-5));
  lrn.lrn_alpha = 0.5f;
  lrn.lrn_beta = 0.75f;
  lrn.lrn_k = 2.0f;
  c.push_back(make_case("lrn_strong", OpKind::Lrn, lrn, {{2, 20, 4, 4}}, 1e-5));
  c.push_back(make_case("lrn_strong_c64", OpKind::Lrn, lrn, {{4, 64, 6, 6}}, 1e-5));
  lrn.lrn_size = 3;
  c.push_back(make_case("lrn_size3_infer", OpKind::Lrn, lrn, {{2, 16, 4, 4}}, 1e-5, Mode::Infer));
  // Dropout (fixed seed, node and step: masks must agree bit for bit).
  OpAttr drop;
  drop.dropout_p = 0.5f;
  const auto drop_ctx = [](OpProblem& p) {
    p.seed = 1234;
    p.step = 3;
    p.node = 5;
  };
  c.push_back(make_case("dropout", OpKind::Dropout, drop, {{4, 16, 4, 4}}, 1e-6, Mode::Train, drop_ctx));
  drop.dropout_p = 0.2f;
  c.push_back(make_case("dropout_fc", OpKind::Dropout, drop, {{8, 50, 1, 1}}, 1e-6, Mode::Train, drop_ctx));
  c.push_back(make_case("dropout_infer", OpKind::Dropout, drop, {{4, 16, 4, 4}}, 1e-6, Mode::Infer));
  // Fully connected.
  OpAttr fc;
  fc.out_channels = 10;
  fc.bias = true;
  c.push_back(make_case("fc_4d_input", OpKind::FullyConnected, fc, {{4, 16, 3, 3}}, 1e-5));
  fc.out_channels = 7;
  fc.bias = false;
  c.push_back(make_case("fc_2d_nobias", OpKind::FullyConnected, fc, {{4, 20, 1, 1}}, 1e-5));
  fc.bias = true;
  c.push_back(make_case("fc_infer", OpKind::FullyConnected, fc, {{4, 20, 1, 1}}, 1e-5, Mode::Infer));
  // Add, flatten, loss.
  c.push_back(make_case("add", OpKind::Add, {}, {{2, 16, 5, 5}, {2, 16, 5, 5}}, 1e-6));
  c.push_back(make_case("add_one_grad", OpKind::Add, {}, {{2, 16, 5, 5}, {2, 16, 5, 5}}, 1e-6,
                        Mode::Train, [](OpProblem& p) { p.need_diff_src = {false, true}; }));
  c.push_back(make_case("flatten", OpKind::Flatten, {}, {{2, 16, 3, 3}}, 1e-6));
  c.push_back(make_case("softmax_xent", OpKind::SoftmaxCrossEntropy, {}, {{8, 10, 1, 1}}, 1e-5));
  return c;
}

// ---- the parametrized suite --------------------------------------------------------------------

enum class Inputs { Plain, Native };

struct Param {
  std::string backend;
  Case c;
  Inputs inputs;
};

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const test::BackendVariant& v : test::variants_under_test()) {
    for (const Case& c : all_cases()) {
      out.push_back({v.name, c, Inputs::Plain});
      out.push_back({v.name, c, Inputs::Native});
    }
  }
  return out;
}

void PrintTo(const Param& p, std::ostream* os) {
  *os << p.backend << "/" << p.c.name << (p.inputs == Inputs::Plain ? "/plain" : "/native");
}

class BackendOps : public ::testing::TestWithParam<Param> {};

double max_abs(const std::vector<float>& v) {
  double m = 0.0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// Compares one output; returns the worst |got - ref| / max|ref| and records it.
void check(const std::string& what, const std::vector<float>& got, const std::vector<float>& ref,
           double tol) {
  const double scale = std::max(max_abs(ref), 1e-30);
  const test::ErrorStats e = test::compare(got, ref, tol * scale, 0.0);
  const double worst = e.max_abs / scale;
  std::printf("  %-14s worst |got-ref|/max|ref| = %.3g (tol %.1g) %s\n", what.c_str(), worst, tol,
              e.ok() ? "ok" : "FAILED");
  ::testing::Test::RecordProperty(what + "_rel_err", std::to_string(worst));
  EXPECT_TRUE(e.ok()) << e.describe(what) << " (tol " << tol << " * max|ref| " << scale << ")";
}

TEST_P(BackendOps, MatchesReference) {
  const Param& prm = GetParam();
  OpProblem p = prm.c.make();
  auto ref_be = make_backend("reference");
  const test::BackendVariant& variant = test::find_variant(prm.backend);
  auto be = test::make_variant(variant);
  const double tol = std::max(prm.c.tol, variant.layer_tol_floor);
  // BF16 variants get inputs that BF16 represents exactly, so both sides see the same values (and
  // the same ties in max pooling); the error left is the backend's own BF16 arithmetic.
  if (variant.settings.precision == Precision::Bf16) {
    for (auto& v : p.src) test::round_to_bf16(v);
    test::round_to_bf16(p.weights);
    test::round_to_bf16(p.diff_dst);
  }
  std::vector<std::shared_ptr<const void>> layouts(p.in.size());
  if (prm.inputs == Inputs::Native) {
    bool any = false;
    for (std::size_t i = 0; i < p.in.size(); ++i) {
      // Add: second input stays plain, so mixed layouts are exercised as well.
      if (p.kind == OpKind::Add && i == 1) continue;
      layouts[i] = native_layout(*be, p.in[i]);
      any = any || layouts[i] != nullptr;
    }
    if (!any) GTEST_SKIP() << "backend keeps this input plain";
  }
  std::printf("[%s] %s, %s inputs, rule |got-ref| <= %g * max|ref|\n", prm.backend.c_str(),
              prm.c.name.c_str(), prm.inputs == Inputs::Plain ? "plain" : "native", tol);
  RecordProperty("rule", "|got-ref| <= tol * max|ref|, tol " + std::to_string(tol));
  const OpResult ref = test::run_op(*ref_be, p);
  const OpResult got = run_with_layouts(*be, p, layouts);
  ASSERT_EQ(got.dst_shape, ref.dst_shape);
  check("dst", got.dst, ref.dst, tol);
  if (p.kind == OpKind::SoftmaxCrossEntropy) {
    EXPECT_NEAR(got.loss, ref.loss, std::max(1e-5, tol) * std::max(1.0f, std::fabs(ref.loss)));
    EXPECT_EQ(got.correct, ref.correct);
  }
  ASSERT_EQ(got.diff_src.size(), ref.diff_src.size());
  for (std::size_t i = 0; i < ref.diff_src.size(); ++i) {
    ASSERT_EQ(got.diff_src[i].size(), ref.diff_src[i].size()) << "diff_src " << i;
    if (!ref.diff_src[i].empty())
      check("diff_src" + std::to_string(i), got.diff_src[i], ref.diff_src[i], tol);
  }
  if (!ref.diff_weights.empty()) check("diff_weights", got.diff_weights, ref.diff_weights, tol);
  // Batch norm: the running statistics after forward (updated in training, read-only in inference).
  ASSERT_EQ(got.running_mean.size(), ref.running_mean.size());
  if (!ref.running_mean.empty()) {
    check("running_mean", got.running_mean, ref.running_mean, tol);
    check("running_var", got.running_var, ref.running_var, tol);
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const Param& p = info.param;
  return p.backend + "_" + p.c.name + (p.inputs == Inputs::Plain ? "_plain" : "_native");
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendOps);
INSTANTIATE_TEST_SUITE_P(AllBackends, BackendOps, ::testing::ValuesIn(all_params()), param_name);

// Per-backend checks outside the op table. Running a training op twice must give the same result
// (no state leaks between steps; BN's running statistics live outside the op, in its context).
class BackendMisc : public ::testing::TestWithParam<std::string> {};

// GPU libraries may sum the weight gradient with atomics (cuDNN's non-deterministic algorithms, as
// PyTorch allows by default): there the repeated run must agree to rounding, not bit for bit.
TEST_P(BackendMisc, ConvTwiceIsStable) {
  auto be = test::make_variant(test::find_variant(GetParam()));
  const OpProblem p = test::make_problem(OpKind::Conv, conv_attr(16, 3, 1, 1, true), {{2, 16, 6, 6}}, 3);
  test::OpRun run(*be, p);
  const OpResult a = run.run();
  const OpResult b = run.run();
  EXPECT_EQ(a.dst, b.dst);
  if (!be->is_gpu()) {
    EXPECT_EQ(a.diff_weights, b.diff_weights);
    return;
  }
  check("diff_weights (run 2 vs 1)", b.diff_weights, a.diff_weights, 1e-5);
}

std::vector<std::string> non_reference_backends() {
  std::vector<std::string> v;
  for (const test::BackendVariant& b : test::variants_under_test()) v.push_back(b.name);
  return v;
}

// Layout-aware memory calls on a tensor in the backend's native layout.
TEST_P(BackendMisc, NativeLayoutMemoryCalls) {
  const test::BackendVariant& variant = test::find_variant(GetParam());
  auto be = test::make_variant(variant);
  // A BF16 layout stores 8 significant bits: a value comes back within 2^-8 of itself, relative.
  const float rel = variant.settings.precision == Precision::Bf16 ? 1.0f / 256 : 0.0f;
  const auto expect_close = [rel](const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (rel == 0.0f) ASSERT_FLOAT_EQ(got[i], want[i]) << i;
      else ASSERT_NEAR(got[i], want[i], 2 * rel * std::fabs(want[i]) + 1e-30f) << i;
    }
  };
  const Shape s{3, 20, 5, 7};  // channels not a multiple of any vector width
  const std::vector<float> a = test::random_vector(s.count(), 11), b = test::random_vector(s.count(), 12);
  Tensor x, y, z;
  x.shape = y.shape = z.shape = s;
  x.layout = y.layout = native_layout(*be, s);  // z stays plain
  be->allocate(x);
  be->allocate(y);
  be->allocate(z);
  be->write_plain(x, a.data());
  be->write_plain(y, b.data());
  be->write_plain(z, b.data());
  std::vector<float> h(s.count()), hx(s.count()), hy(s.count());
  be->read_plain(x, hx.data());
  expect_close(hx, a);
  be->read_plain(y, hy.data());
  be->accumulate(x, y);
  be->read_plain(x, h.data());
  std::vector<float> sum(s.count());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = hx[i] + hy[i];  // of the stored values
  expect_close(h, sum);
  be->set_zero(y);
  be->read_plain(y, h.data());
  EXPECT_EQ(h, std::vector<float>(s.count(), 0.0f));
  // Plain tensors keep working alongside.
  be->accumulate(z, z);
  be->read_plain(z, h.data());
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_FLOAT_EQ(h[i], 2 * b[i]) << i;
}

TEST_P(BackendMisc, ThreadsAndVersions) {
  auto be = test::make_variant(test::find_variant(GetParam()));
  const int before = be->threads();
  EXPECT_GE(before, 1);
  if (!be->is_gpu()) {
    be->set_threads(1);
    EXPECT_EQ(be->threads(), 1);
    be->set_threads(0);  // leaves the setting alone
    EXPECT_EQ(be->threads(), 1);
    be->set_threads(before);
    EXPECT_EQ(be->threads(), before);
  }
  const LibraryVersions v = be->versions();
  ASSERT_FALSE(v.empty());
  for (const auto& [lib, version] : v) {
    std::printf("  %s %s\n", lib.c_str(), version.c_str());
    EXPECT_FALSE(lib.empty());
    EXPECT_FALSE(version.empty());
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendMisc);
INSTANTIATE_TEST_SUITE_P(AllBackends, BackendMisc, ::testing::ValuesIn(non_reference_backends()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// A CPU backend that computes in bf16 refuses tf32 and, where this CPU has no bf16 kernel, bf16
// with the reason (its bf16 variant is then left out of the tests above, and this test says so);
// where it can, its bf16 variant is among those tested and names the kernel it dispatched.
TEST(CpuPrecisions, Bf16WhereTheCpuCan) {
  if (test::gpu_mode()) GTEST_SKIP() << "CPU backends are tested without --gpu";
  std::string skipped;
  bool any = false;
  for (const BackendInfo& b : backends()) {
    if (b.gpu || !b.precision_problem) continue;
    any = true;
    BackendSettings tf32, bf16;
    tf32.precision = Precision::Tf32;
    bf16.precision = Precision::Bf16;
    EXPECT_THROW(check_cpu_settings(b, tf32), SettingError) << b.name;
    if (const std::string why = b.precision_problem(Precision::Bf16); !why.empty()) {
      EXPECT_THROW(check_cpu_settings(b, bf16), SettingError) << b.name;
      skipped += b.name + "_bf16 not tested: " + why + "; ";
      continue;
    }
    EXPECT_NO_THROW(check_cpu_settings(b, bf16)) << b.name;
    const std::vector<test::BackendVariant> tested = test::variants_under_test();
    EXPECT_TRUE(std::any_of(tested.begin(), tested.end(), [&](const test::BackendVariant& v) {
      return v.name == b.name + "_bf16" && v.settings.precision == Precision::Bf16;
    })) << b.name << "_bf16 is not among the variants under test";
    bool names_kernel = false;
    for (const auto& [lib, version] : test::make_variant(test::find_variant(b.name + "_bf16"))->versions())
      names_kernel = names_kernel || lib.find("bf16") != std::string::npos;
    EXPECT_TRUE(names_kernel) << b.name << "_bf16 records no bf16 kernel among its versions";
  }
  if (!any) GTEST_SKIP() << "no CPU backend of this build computes in bf16";
  if (!skipped.empty()) GTEST_SKIP() << skipped;
}

// The bf16 variants above get inputs that bf16 holds exactly, so their results match fp32's. On
// inputs it does not hold, a convolution must show bf16's rounding (error beyond fp32's, so bf16 is
// what ran) within its bound: each product carries at most 2 * 2^-9 relative from rounding both
// factors, and the f32 sums add no more than fp32 does, so |got - ref| <= 2^-8 * sum |w x|
// <= 2^-8 * K * max|w| max|x| for K products per output; stated here as 2^-8 relative to max|ref|
// times sqrt(K) (random signs: the rounding errors add as a random walk), and at least 10x fp32's.
TEST(CpuPrecisions, Bf16RoundsItsInputs) {
  if (test::gpu_mode()) GTEST_SKIP() << "CPU backends are tested without --gpu";
  for (const BackendInfo& b : backends()) {
    if (b.gpu || !b.precision_problem) continue;
    if (const std::string why = b.precision_problem(Precision::Bf16); !why.empty()) GTEST_SKIP() << b.name << ": " << why;
    const OpProblem p = test::make_problem(OpKind::Conv, conv_attr(32, 3, 1, 1, true), {{4, 32, 8, 8}}, 11);
    auto ref_be = make_backend("reference");
    const OpResult ref = test::run_op(*ref_be, p);
    auto fp32 = test::make_variant(test::find_variant(b.name));
    auto bf16 = test::make_variant(test::find_variant(b.name + "_bf16"));
    const double k = 32 * 3 * 3, scale = max_abs(ref.dst);
    const test::ErrorStats e32 = test::compare(test::run_op(*fp32, p).dst, ref.dst, 1e-5 * scale, 0.0);
    const test::ErrorStats e16 = test::compare(test::run_op(*bf16, p).dst, ref.dst, std::ldexp(1.0, -8) * std::sqrt(k) * scale, 0.0);
    std::printf("  %s conv 32->32 3x3 (K %g): fp32 worst %.3g, bf16 worst %.3g of max|ref|\n", b.name.c_str(), k,
                e32.max_abs / scale, e16.max_abs / scale);
    EXPECT_TRUE(e32.ok()) << e32.describe("fp32 dst");
    EXPECT_TRUE(e16.ok()) << e16.describe("bf16 dst");
    EXPECT_GT(e16.max_abs, 10 * e32.max_abs) << b.name << "_bf16 shows no bf16 rounding: did it compute in fp32?";
  }
}

}  // namespace
}  // namespace hpcnn
