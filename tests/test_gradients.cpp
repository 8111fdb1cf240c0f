// The reference backend checked against itself and against hand-computed numbers:
//   * every layer kind's backward against central finite differences of L = sum(dst * R)
//     (L = the loss for softmax cross-entropy), at op level;
//   * forward values of small problems worked out by hand, so the oracle itself is pinned;
//   * SGD and Adam steps against values computed by hand (PyTorch formulas) for three steps.
//
// Finite-difference rule, per gradient tensor g with FD estimate f:
//   |g_i - f_i| <= kFdAtolScale * max_j |f_j| + kFdRtol * |f_i|
// i.e. a relative error of 0.2 % with a floor of 0.1 % of the tensor's largest gradient. Inputs of
// ReLU and max pooling are spaced 0.05 apart (and away from 0), so the FD step of 0.01 never
// crosses a kink or a tie.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/cpu_backend.hpp"
#include "base/rng.hpp"
#include "kernels/reference/reference_backend.hpp"
#include "op_test_util.hpp"
#include "kernels/registry.hpp"

namespace hpcnn {
namespace {

constexpr double kFdRtol = 2e-3;
constexpr double kFdAtolScale = 1e-3;
constexpr double kFdEps = 1e-2;

// Worst FD ratio (error / allowed) seen per layer kind, printed at the end of the run.
std::map<std::string, double>& worst_by_layer() {
  static std::map<std::string, double> m;
  return m;
}

class WorstErrorPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("finite-difference rule: |analytic - fd| <= %g * max|fd| + %g * |fd|, eps %g\n",
                kFdAtolScale, kFdRtol, kFdEps);
    for (const auto& [layer, ratio] : worst_by_layer())
      std::printf("  %-24s worst error / allowed = %.3g\n", layer.c_str(), ratio);
  }
};
[[maybe_unused]] const auto* const kPrinter = ::testing::AddGlobalTestEnvironment(new WorstErrorPrinter);

std::unique_ptr<Backend> reference() { return make_reference_backend(); }

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Runs forward + backward and finite differences for one problem and compares every gradient.
void check_gradients(const std::string& label, const test::OpProblem& p, double eps = kFdEps) {
  SCOPED_TRACE(label);
  auto be = reference();
  test::OpRun run(*be, p);
  const test::OpResult analytic = run.run();
  // Backward OVERWRITES its outputs: a second call must give the same gradients.
  run.backward();
  for (std::size_t i = 0; i < p.in.size(); ++i)
    if (p.wants_diff_src(i)) {
      EXPECT_EQ(run.diff_src(i), analytic.diff_src[i]) << label << ": backward accumulated into diff_src[" << i << "]";
    }
  EXPECT_EQ(run.diff_weights(), analytic.diff_weights) << label << ": backward accumulated into diff_weights";

  const test::FiniteDifferences fd = test::finite_differences(*be, p, eps);
  auto check = [&](const std::vector<float>& got, const std::vector<double>& ref, const std::string& what) {
    ASSERT_FALSE(ref.empty()) << what;
    const double atol = std::max(kFdAtolScale * max_abs(ref), 1e-7);
    const test::ErrorStats e = test::compare(got, ref, atol, kFdRtol);
    std::printf("  %-40s %s\n", (label + " " + what).c_str(), e.describe("").c_str() + 2);
    EXPECT_TRUE(e.ok()) << label << " " << e.describe(what);
    // Gradients that are all ~0 would make the check vacuous.
    EXPECT_GT(max_abs(ref), 1e-4) << label << " " << what << ": gradient is identically zero";
    double& worst = worst_by_layer()[op_kind_name(p.kind)];
    worst = std::max(worst, e.max_ratio);
  };
  for (std::size_t i = 0; i < p.in.size(); ++i) {
    if (!p.wants_diff_src(i)) {
      EXPECT_TRUE(analytic.diff_src[i].empty());
      continue;
    }
    check(analytic.diff_src[i], fd.diff_src[i], "diff_src[" + std::to_string(i) + "]");
  }
  if (!p.weights.empty()) check(analytic.diff_weights, fd.diff_weights, "diff_weights");
}

OpAttr window(int kh, int kw, int sh, int sw, int ph, int pw) {
  OpAttr a;
  a.kh = kh;
  a.kw = kw;
  a.sh = sh;
  a.sw = sw;
  a.ph = ph;
  a.pw = pw;
  return a;
}

OpAttr conv_attr(int out, int k, int s, int pad, bool bias) {
  OpAttr a = window(k, k, s, s, pad, pad);
  a.out_channels = out;
  a.bias = bias;
  return a;
}

// ------------------------------------------------------------------------------------------
// Finite-difference gradient checks, every layer kind
// ------------------------------------------------------------------------------------------

TEST(Gradients, Conv) {
  check_gradients("conv 3x3 s2 p1 bias", test::make_problem(OpKind::Conv, conv_attr(4, 3, 2, 1, true), {{2, 3, 7, 7}}, 11));
  check_gradients("conv 1x1 no bias", test::make_problem(OpKind::Conv, conv_attr(3, 1, 1, 0, false), {{2, 4, 5, 5}}, 12));
  OpAttr a = window(3, 2, 1, 2, 1, 0);
  a.out_channels = 2;
  a.bias = true;
  check_gradients("conv 3x2 s1x2 p1x0 bias", test::make_problem(OpKind::Conv, a, {{1, 2, 6, 5}}, 13));
  check_gradients("conv 5x5 s1 p2", test::make_problem(OpKind::Conv, conv_attr(2, 5, 1, 2, true), {{1, 2, 5, 5}}, 14));
}

TEST(Gradients, ConvSkipsMissingDiffSrc) {
  test::OpProblem p = test::make_problem(OpKind::Conv, conv_attr(2, 3, 1, 1, true), {{2, 2, 4, 4}}, 15);
  p.need_diff_src = {false};
  check_gradients("conv without diff_src", p);
}

TEST(Gradients, FullyConnected) {
  OpAttr a;
  a.out_channels = 5;
  a.bias = true;
  check_gradients("fc from 2x3x3, bias", test::make_problem(OpKind::FullyConnected, a, {{3, 2, 3, 3}}, 21));
  a.out_channels = 3;
  a.bias = false;
  check_gradients("fc from 6x1x1, no bias", test::make_problem(OpKind::FullyConnected, a, {{4, 6, 1, 1}}, 22));
}

TEST(Gradients, BatchNormTrain) {
  check_gradients("bn 4x3x3x3", test::make_problem(OpKind::BatchNorm, {}, {{4, 3, 3, 3}}, 31));
  check_gradients("bn 2x5x2x2", test::make_problem(OpKind::BatchNorm, {}, {{2, 5, 2, 2}}, 32));
  check_gradients("bn 6x4x1x1 (after fc)", test::make_problem(OpKind::BatchNorm, {}, {{6, 4, 1, 1}}, 33));
}

TEST(Gradients, Relu) {
  check_gradients("relu", test::make_problem(OpKind::Relu, {}, {{2, 3, 4, 4}}, 41));
}

TEST(Gradients, Tanh) {
  test::OpProblem p = test::make_problem(OpKind::Tanh, {}, {{2, 3, 4, 4}}, 42);
  for (float& x : p.src[0]) x *= 2.0f;  // reach the curved part
  check_gradients("tanh", p);
}

TEST(Gradients, MaxPool) {
  check_gradients("maxpool 3x3 s2 p1", test::make_problem(OpKind::MaxPool, window(3, 3, 2, 2, 1, 1), {{2, 2, 7, 7}}, 51));
  check_gradients("maxpool 2x2 s2", test::make_problem(OpKind::MaxPool, window(2, 2, 2, 2, 0, 0), {{1, 3, 4, 4}}, 52));
  check_gradients("maxpool 3x3 s1 (overlap)", test::make_problem(OpKind::MaxPool, window(3, 3, 1, 1, 0, 0), {{1, 2, 5, 5}}, 53));
}

TEST(Gradients, AvgPool) {
  check_gradients("avgpool 3x3 s2 p1", test::make_problem(OpKind::AvgPool, window(3, 3, 2, 2, 1, 1), {{2, 2, 7, 7}}, 61));
  check_gradients("avgpool 2x2 s2", test::make_problem(OpKind::AvgPool, window(2, 2, 2, 2, 0, 0), {{1, 3, 4, 4}}, 62));
}

TEST(Gradients, GlobalAvgPool) {
  check_gradients("global avgpool", test::make_problem(OpKind::GlobalAvgPool, {}, {{2, 3, 4, 5}}, 71));
}

TEST(Gradients, Lrn) {
  OpAttr a;
  a.lrn_size = 3;
  a.lrn_alpha = 0.5f;  // large alpha so the cross-channel term matters
  a.lrn_beta = 0.75f;
  a.lrn_k = 1.0f;
  check_gradients("lrn size 3 alpha 0.5", test::make_problem(OpKind::Lrn, a, {{2, 6, 3, 3}}, 81));
  a.lrn_size = 5;
  a.lrn_alpha = 1.0f;
  a.lrn_beta = 0.6f;
  a.lrn_k = 2.0f;
  check_gradients("lrn size 5 alpha 1", test::make_problem(OpKind::Lrn, a, {{2, 7, 2, 2}}, 82));
  a.lrn_size = 5;
  a.lrn_alpha = 1e-4f;  // AlexNet
  a.lrn_beta = 0.75f;
  a.lrn_k = 2.0f;
  check_gradients("lrn size 5 alexnet", test::make_problem(OpKind::Lrn, a, {{1, 8, 3, 3}}, 83));
}

TEST(Gradients, Dropout) {
  OpAttr a;
  a.dropout_p = 0.5f;
  test::OpProblem p = test::make_problem(OpKind::Dropout, a, {{2, 3, 4, 4}}, 91);
  p.seed = 1234;
  p.step = 3;
  check_gradients("dropout p 0.5", p);
  a.dropout_p = 0.2f;
  check_gradients("dropout p 0.2", test::make_problem(OpKind::Dropout, a, {{2, 3, 4, 4}}, 92));
}

TEST(Gradients, Add) {
  check_gradients("add", test::make_problem(OpKind::Add, {}, {{2, 3, 3, 3}, {2, 3, 3, 3}}, 101));
  test::OpProblem p = test::make_problem(OpKind::Add, {}, {{2, 3, 3, 3}, {2, 3, 3, 3}}, 102);
  p.need_diff_src = {false, true};
  check_gradients("add, first diff_src missing", p);
}

TEST(Gradients, Flatten) {
  check_gradients("flatten", test::make_problem(OpKind::Flatten, {}, {{2, 3, 2, 2}}, 111));
}

TEST(Gradients, SoftmaxCrossEntropy) {
  test::OpProblem p = test::make_problem(OpKind::SoftmaxCrossEntropy, {}, {{4, 10, 1, 1}}, 121);
  for (float& x : p.src[0]) x *= 3.0f;
  check_gradients("softmax cross-entropy 4x10", p);
  check_gradients("softmax cross-entropy 7x3", test::make_problem(OpKind::SoftmaxCrossEntropy, {}, {{7, 3, 1, 1}}, 122));
}

// ------------------------------------------------------------------------------------------
// Forward values worked out by hand
// ------------------------------------------------------------------------------------------

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " [" << i << "]";
}

test::OpProblem hand_problem(OpKind kind, const OpAttr& a, std::vector<Shape> in,
                             std::vector<std::vector<float>> src, std::vector<float> weights = {},
                             Mode mode = Mode::Train) {
  test::OpProblem p;
  p.kind = kind;
  p.attr = a;
  p.mode = mode;
  p.in = std::move(in);
  p.src = std::move(src);
  p.weights = std::move(weights);
  return p;
}

TEST(Forward, ConvSobel3x3) {
  // x = 1..9 (3x3), Sobel-x kernel [[1,0,-1],[2,0,-2],[1,0,-1]], padding 1, bias 0.5.
  test::OpProblem p = hand_problem(OpKind::Conv, conv_attr(1, 3, 1, 1, true), {{1, 1, 3, 3}},
                                   {{1, 2, 3, 4, 5, 6, 7, 8, 9}}, {1, 0, -1, 2, 0, -2, 1, 0, -1, 0.5f});
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  EXPECT_EQ(r.dst_shape, (Shape{1, 1, 3, 3}));
  expect_near_all(r.dst, {-8.5, -5.5, 9.5, -19.5, -7.5, 20.5, -20.5, -5.5, 21.5}, 1e-6, "conv");
  // Stride 2 keeps the corners only.
  p.attr.sh = p.attr.sw = 2;
  const test::OpResult r2 = test::run_op(*be, p);
  EXPECT_EQ(r2.dst_shape, (Shape{1, 1, 2, 2}));
  expect_near_all(r2.dst, {-8.5, 9.5, -20.5, 21.5}, 1e-6, "conv stride 2");
}

TEST(Forward, FullyConnectedFlattensCHW) {
  OpAttr a;
  a.out_channels = 2;
  a.bias = true;
  // x {1, 2, 1, 2} = channel 0: [1, 2], channel 1: [3, 4] -> flattened [1, 2, 3, 4].
  test::OpProblem p = hand_problem(OpKind::FullyConnected, a, {{1, 2, 1, 2}}, {{1, 2, 3, 4}},
                                   {1, 0, 0, 1, 0, 1, -1, 0, 0.5f, -0.5f});
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  EXPECT_EQ(r.dst_shape, (Shape{1, 2, 1, 1}));
  expect_near_all(r.dst, {5.5, -1.5}, 1e-6, "fc");
}

TEST(Forward, SoftmaxCrossEntropyKnownLogits) {
  test::OpProblem p = hand_problem(OpKind::SoftmaxCrossEntropy, {}, {{2, 3, 1, 1}}, {{1, 2, 3, 0, 0, 0}});
  p.labels = {2, 1};
  p.diff_dst.assign(6, 0.0f);
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  const double p0 = 0.09003057317038046, p1 = 0.24472847105479767, p2 = 0.6652409557748219;
  expect_near_all(r.dst, {p0, p1, p2, 1 / 3.0, 1 / 3.0, 1 / 3.0}, 1e-6, "softmax");
  // (-log p2 + log 3) / 2
  EXPECT_NEAR(r.loss, 0.7531091265562451, 1e-6);
  EXPECT_EQ(r.correct, 1);  // sample 0 right (arg-max 2); sample 1 wrong whatever the tie rule
  expect_near_all(r.diff_src[0], {p0 / 2, p1 / 2, (p2 - 1) / 2, 1 / 6.0, (1 / 3.0 - 1) / 2, 1 / 6.0}, 1e-6,
                  "softmax backward");
  // Large logits stay finite (log-sum-exp).
  p.src[0] = {1000, 0, -1000, 50, 60, 70};
  p.labels = {0, 0};
  const test::OpResult big = test::run_op(*be, p);
  EXPECT_TRUE(std::isfinite(big.loss));
  EXPECT_NEAR(big.loss, (0.0 + (70.0 + std::log(1 + std::exp(-10.0) + std::exp(-20.0)) - 50.0)) / 2, 1e-4);
  EXPECT_EQ(big.correct, 1);
}

TEST(Forward, SoftmaxCrossEntropyRejectsBadLabel) {
  test::OpProblem p = hand_problem(OpKind::SoftmaxCrossEntropy, {}, {{2, 3, 1, 1}}, {{1, 2, 3, 0, 0, 0}});
  p.labels = {0, 3};
  auto be = reference();
  try {
    test::run_op(*be, p);
    FAIL() << "label 3 of 3 classes was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("label 3"), std::string::npos) << e.what();
  }
  p.labels = {-1, 0};
  EXPECT_THROW(test::run_op(*be, p), std::runtime_error);
}

TEST(Forward, AvgPoolDividesByFullWindow) {
  // 2x2 input, 2x2 window, stride 1, padding 1 -> 3x3 output, every sum divided by 4.
  test::OpProblem p = hand_problem(OpKind::AvgPool, window(2, 2, 1, 1, 1, 1), {{1, 1, 2, 2}}, {{1, 2, 3, 4}});
  p.diff_dst.assign(9, 1.0f);
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  EXPECT_EQ(r.dst_shape, (Shape{1, 1, 3, 3}));
  expect_near_all(r.dst, {0.25, 0.75, 0.5, 1.0, 2.5, 1.5, 0.75, 1.75, 1.0}, 1e-7, "avgpool");
  // Each input cell lies in 4 windows: gradient 4 * 1/4.
  expect_near_all(r.diff_src[0], {1, 1, 1, 1}, 1e-7, "avgpool backward");
}

TEST(Forward, MaxPoolNeverSelectsPaddingAndTakesFirstTie) {
  // All-negative input with padding: a padded zero must not win.
  test::OpProblem p = hand_problem(OpKind::MaxPool, window(2, 2, 1, 1, 1, 1), {{1, 1, 2, 2}}, {{-1, -2, -3, -4}});
  p.diff_dst.assign(9, 1.0f);
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  expect_near_all(r.dst, {-1, -1, -2, -1, -1, -2, -3, -3, -4}, 0, "maxpool padding");
  expect_near_all(r.diff_src[0], {4, 2, 2, 1}, 0, "maxpool padding backward");
  // Ties: the gradient goes to the first maximum in window order.
  test::OpProblem t = hand_problem(OpKind::MaxPool, window(2, 2, 2, 2, 0, 0), {{1, 1, 2, 2}}, {{5, 5, 5, 5}});
  t.diff_dst = {3.0f};
  const test::OpResult rt = test::run_op(*be, t);
  expect_near_all(rt.dst, {5}, 0, "maxpool tie");
  expect_near_all(rt.diff_src[0], {3, 0, 0, 0}, 0, "maxpool tie backward");
}

TEST(Forward, GlobalAvgPool) {
  test::OpProblem p = hand_problem(OpKind::GlobalAvgPool, {}, {{1, 2, 2, 2}}, {{1, 2, 3, 4, -1, -1, -1, 5}});
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  EXPECT_EQ(r.dst_shape, (Shape{1, 2, 1, 1}));
  expect_near_all(r.dst, {2.5, 0.5}, 1e-7, "global avgpool");
}

TEST(Forward, LrnAcrossChannels) {
  // C = 3, size 3, alpha 1, beta 1, k 1, x = [1, 2, 3]:
  //   s = 1 + (1/3) * [1+4, 1+4+9, 4+9] = [8/3, 17/3, 16/3];  y = x / s.
  OpAttr a;
  a.lrn_size = 3;
  a.lrn_alpha = 1.0f;
  a.lrn_beta = 1.0f;
  a.lrn_k = 1.0f;
  test::OpProblem p = hand_problem(OpKind::Lrn, a, {{1, 3, 1, 1}}, {{1, 2, 3}});
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  expect_near_all(r.dst, {3.0 / 8, 6.0 / 17, 9.0 / 16}, 1e-6, "lrn");
}

TEST(Forward, BatchNormTrainAndInfer) {
  // One channel [1, 2, 3, 4]: mean 2.5, biased variance 1.25; scale 2, shift 1.
  test::OpProblem p = hand_problem(OpKind::BatchNorm, {}, {{1, 1, 2, 2}}, {{1, 2, 3, 4}}, {2.0f, 1.0f});
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  const double is = 1.0 / std::sqrt(1.25 + 1e-5);
  expect_near_all(r.dst, {1 - 3 * is, 1 - is, 1 + is, 1 + 3 * is}, 1e-6, "bn train");
  // Running statistics from 0 / 1 with momentum 0.1 and the unbiased variance 5/3:
  // mean 0.9 * 0 + 0.1 * 2.5, var 0.9 * 1 + 0.1 * 5/3.
  expect_near_all(r.running_mean, {0.25}, 1e-7, "bn running mean");
  expect_near_all(r.running_var, {0.9 + 0.1 * 5.0 / 3.0}, 1e-7, "bn running var");
  // Inference with fresh running statistics (mean 0, var 1).
  p.mode = Mode::Infer;
  const test::OpResult ri = test::run_op(*be, p);
  const double s = 2.0 / std::sqrt(1.0 + 1e-5);
  expect_near_all(ri.dst, {1 + s, 1 + 2 * s, 1 + 3 * s, 1 + 4 * s}, 1e-6, "bn infer");
  EXPECT_EQ(ri.running_mean, std::vector<float>{0.0f}) << "inference changed the running mean";
  // Inference with given running statistics (mean 1, var 4): y = 2 (x - 1) / sqrt(4 + eps) + 1.
  p.running_mean = {1.0f};
  p.running_var = {4.0f};
  const test::OpResult rg = test::run_op(*be, p);
  const double g = 2.0 / std::sqrt(4.0 + 1e-5);
  expect_near_all(rg.dst, {1, 1 + g, 1 + 2 * g, 1 + 3 * g}, 1e-6, "bn infer, given statistics");
}

TEST(Forward, DropoutMaskScaleAndInference) {
  OpAttr a;
  a.dropout_p = 0.25f;
  const Shape s{4, 5, 10, 10};
  test::OpProblem p = test::make_problem(OpKind::Dropout, a, {s}, 5, false);
  p.seed = 77;
  p.step = 9;
  p.node = 3;
  auto be = reference();
  const test::OpResult r = test::run_op(*be, p);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < s.count(); ++i) {
    const bool keep = dropout_keep(77, 3, 9, i, 0.25f);
    kept += keep;
    ASSERT_FLOAT_EQ(r.dst[i], keep ? p.src[0][i] / 0.75f : 0.0f) << i;
  }
  // 2000 Bernoulli(0.75) draws: mean 1500, sd ~19.4; allow 5 sd.
  EXPECT_NEAR(double(kept), 1500.0, 97.0);
  // Another step gives another mask.
  p.step = 10;
  const test::OpResult r2 = test::run_op(*be, p);
  EXPECT_NE(r.dst, r2.dst);
  p.mode = Mode::Infer;
  EXPECT_EQ(test::run_op(*be, p).dst, p.src[0]);
}

TEST(Forward, AddAndFlatten) {
  auto be = reference();
  const test::OpResult r =
      test::run_op(*be, hand_problem(OpKind::Add, {}, {{1, 1, 1, 3}, {1, 1, 1, 3}}, {{1, 2, 3}, {10, 20, 30}}));
  expect_near_all(r.dst, {11, 22, 33}, 0, "add");
  const test::OpResult f = test::run_op(*be, hand_problem(OpKind::Flatten, {}, {{2, 2, 1, 2}}, {{1, 2, 3, 4, 5, 6, 7, 8}}));
  EXPECT_EQ(f.dst_shape, (Shape{2, 4, 1, 1}));
  expect_near_all(f.dst, {1, 2, 3, 4, 5, 6, 7, 8}, 0, "flatten");
}

TEST(Forward, MakeOpRejectsBadShapes) {
  auto be = reference();
  test::OpProblem p = hand_problem(OpKind::Add, {}, {{1, 1, 1, 3}, {1, 1, 1, 3}}, {{1, 2, 3}, {1, 2, 3}});
  Node node = p.make();
  Tensor a, b, dst;
  a.shape = {1, 1, 1, 3};
  b.shape = {1, 1, 1, 4};
  const Tensor* src[] = {&a, &b};
  EXPECT_THROW(be->make_op(node, src, Mode::Train, dst), std::invalid_argument);
}

// ------------------------------------------------------------------------------------------
// Optimizer steps (CpuBackend base) against hand-computed PyTorch values
// ------------------------------------------------------------------------------------------

TEST(Optimizer, SgdMomentumWeightDecayThreeSteps) {
  auto be = reference();
  std::vector<float> w = {1.0f, -2.0f, 0.5f}, g = {0.5f, -0.25f, 2.0f}, v(3, 0.0f);
  SgdParams p;
  p.lr = 0.1f;
  p.momentum = 0.9f;
  p.weight_decay = 0.01f;
  // g' = g + wd w; v = 0.9 v + g'; w -= 0.1 v   (worked out in double)
  const double want[3][3] = {{0.949, -1.973, 0.2995},
                             {0.852151, -1.921727, -0.0812495},
                             {0.714134749, -1.84865957, -0.623842801}};
  for (int step = 0; step < 3; ++step) {
    be->sgd_step(w.data(), g.data(), v.data(), w.size(), p);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(w[i], want[step][i], 2e-6) << "step " << step + 1 << " [" << i << "]";
  }
}

TEST(Optimizer, AdamWeightDecayThreeSteps) {
  auto be = reference();
  std::vector<float> w = {1.0f, -2.0f, 0.5f}, g = {0.5f, -0.25f, 2.0f}, m(3, 0.0f), v(3, 0.0f);
  AdamParams p;
  p.lr = 0.01f;
  p.weight_decay = 0.1f;
  // Bias correction makes step 1 exactly lr * sign(g').
  const double want[3][3] = {{0.99, -1.99, 0.49},
                             {0.980000439, -1.98000059, 0.480000128},
                             {0.970001607, -1.97000215, 0.470000467}};
  for (int t = 1; t <= 3; ++t) {
    be->adam_step(w.data(), g.data(), m.data(), v.data(), w.size(), p, t);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(w[i], want[t - 1][i], 2e-6) << "step " << t << " [" << i << "]";
  }
  EXPECT_THROW(be->adam_step(w.data(), g.data(), m.data(), v.data(), w.size(), p, 0), std::logic_error);
}

// ------------------------------------------------------------------------------------------
// CpuBackend memory and the backend's identity
// ------------------------------------------------------------------------------------------

TEST(CpuBase, MemoryIsAlignedZeroedAndPlain) {
  auto be = reference();
  auto f = be->alloc_floats(13);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.get()) % 64, 0u);
  for (int i = 0; i < 13; ++i) EXPECT_EQ(f.get()[i], 0.0f);
  Tensor t, u;
  t.shape = u.shape = {2, 3, 1, 1};
  be->allocate(t);
  be->allocate(u);
  EXPECT_EQ(t.bytes, 6 * sizeof(float));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data) % 64, 0u);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60};
  be->write_plain(t, a.data());
  be->write_plain(u, b.data());
  be->accumulate(t, u);
  std::vector<float> out(6);
  be->read_plain(t, out.data());
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33, 44, 55, 66}));
  be->set_zero(t);
  be->read_plain(t, out.data());
  EXPECT_EQ(out, std::vector<float>(6, 0.0f));
  Tensor odd;
  odd.shape = {1, 1, 1, 1};
  odd.layout = std::make_shared<int>(1);
  EXPECT_THROW(be->allocate(odd), std::logic_error);
  // The timer measures the interval between start and stop: a 2 ms busy wait, within reason.
  auto timer = be->make_timer();
  timer->start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < until) {
  }
  timer->stop();
  EXPECT_GE(timer->seconds(), 0.0019);
  EXPECT_LT(timer->seconds(), 1.0);
}

TEST(CpuBase, ReferenceIdentity) {
  auto be = reference();
  EXPECT_EQ(be->name(), "reference");
  be->set_threads(8);
  EXPECT_EQ(be->threads(), 1);
  EXPECT_FALSE(be->versions().empty());
  EXPECT_FALSE(be->is_gpu());
  // Registered under its name, first in the registry.
  ASSERT_FALSE(backends().empty());
  EXPECT_EQ(backends().front().name, "reference");
  EXPECT_EQ(make_backend("reference")->name(), "reference");
}

}  // namespace
}  // namespace hpcnn
