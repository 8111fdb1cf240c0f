// The executor on every backend: whole models against the reference backend (forward loss and
// logits, every parameter gradient), gradient buckets, and training that learns.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>

#include "engine/backend.hpp"
#include "kernels/registry.hpp"
#include "engine/buckets.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "base/rng.hpp"
#include "harness/synthetic_data.hpp"
#include "backend_selection.hpp"

using namespace hpcnn;

namespace {

// ||a - b||_2 / ||b||_2 (with a floor). Whole networks are compared in this norm, not element by
// element: a ReLU input within rounding distance of zero may take the other side on another
// backend and flip one gradient element entirely, which is correct behaviour for both. Single
// layers are compared element by element in test_backends.
double rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12);
}

std::vector<std::string> non_reference_backends() {
  std::vector<std::string> out;
  for (const test::BackendVariant& v : test::variants_under_test()) out.push_back(v.name);
  return out;
}

std::vector<std::string> all_backends() {
  std::vector<std::string> out;
  for (const test::BackendVariant& v : test::variants_under_test(true)) out.push_back(v.name);
  return out;
}

// A backend by variant name ("reference", "dnnl", "cuda_bf16", ...).
std::unique_ptr<Backend> make_test_backend(const std::string& name) {
  return test::make_variant(test::find_variant(name));
}

struct ModelCase {
  std::string model;
  int image;  // small inputs keep the reference backend fast
};

}  // namespace

class ModelVsReference : public ::testing::TestWithParam<std::tuple<std::string, ModelCase>> {};

// Forward loss and logits, and every parameter gradient, of one training step at batch 4 (enough
// values per batch-norm channel to keep the normalization well conditioned).
TEST_P(ModelVsReference, ForwardAndBackwardMatch) {
  const auto& [backend_name, mc] = GetParam();
  // ResNet-50 at batch 4 normalizes its last stages over 16 values per channel (2x2 pixels x 4
  // images): batch norm there amplifies rounding about 25x more than in ResNet-18 (measured on an
  // H100: fp32 logits 7e-5 vs 2.6e-6). At TF32/BF16 rounding that amplified error is of order 1
  // (logits 5e-2 / 4e-1), which cannot be told from a wiring error; their wiring is the fp32
  // variants' (same code, same NHWC layout), and every layer is checked at TF32/BF16 in test_backends.
  if (mc.model.starts_with("resnet50") && test::find_variant(backend_name).settings.precision != Precision::Fp32)
    GTEST_SKIP() << "resnet50 at reduced precision: batch-4 batch norm amplifies rounding to order 1 (see comment)";
  ModelConfig cfg;
  cfg.input = {1, 3, mc.image, mc.image};
  const Graph graph = build_model(mc.model, cfg);
  const int batch = 4;
  SyntheticData data(cfg.input, cfg.classes, batch, 11);
  auto run = [&](const std::string& name, std::vector<float>& logits, std::vector<float>& grads) {
    auto backend = make_test_backend(name);
    NetworkOptions o;
    o.batch = batch;
    o.seed = 5;
    Network net(*backend, graph, o);
    net.set_input(data.images(0), data.labels(0));
    const float loss = net.forward();
    logits = net.read_output(graph.nodes().back().inputs[0]);
    net.backward();
    grads = net.get_grads();
    return loss;
  };
  // The reference result of a model is computed once and shared by every backend's test: the
  // reference backend is by far the slowest part of this test.
  struct Reference {
    float loss = 0;
    std::vector<float> logits, grads;
  };
  static std::map<std::string, Reference> cache;
  const std::string key = mc.model + "@" + std::to_string(mc.image);
  if (!cache.count(key)) {
    Reference r;
    r.loss = run("reference", r.logits, r.grads);
    cache[key] = std::move(r);
  }
  const Reference& ref = cache[key];
  const float ref_loss = ref.loss;
  const std::vector<float>& ref_logits = ref.logits;
  const std::vector<float>& ref_grads = ref.grads;
  std::vector<float> logits, grads;
  const float loss = run(backend_name, logits, grads);
  // fp32 with different summation orders through up to 50 layers. Forward: relative L2 error 1e-3
  // for the logits. Backward: 5e-2 for the whole gradient and 1e-1 per parameter tensor, because a
  // ReLU input within rounding distance of zero may fall on the other side on another backend
  // (measured: 2 of 32768 inputs of resnet50's last ReLU, giving 2.4e-2); the integration errors
  // this test exists for (layouts, gradient accumulation, parameter offsets) give errors of order 1.
  // Every layer is compared element by element in test_backends.
  // TF32 / BF16 variants multiply these by their stated model_factor (backend_selection.cpp).
  const double f = test::find_variant(backend_name).model_factor;
  const double tol = 1e-3 * f, grad_tol = std::min(5e-2 * f, 0.5), param_tol = std::min(1e-1 * f, 0.8);
  const double e_logits = rel_error(logits, ref_logits), e_grads = rel_error(grads, ref_grads);
  std::printf("[ rule ] %s %s: ||x - ref||2 / ||ref||2: logits %.2e <= %.0e, gradients %.2e <= %.0e;"
              " loss %.6f vs %.6f\n", backend_name.c_str(), mc.model.c_str(), e_logits, tol, e_grads,
              grad_tol, loss, ref_loss);
  RecordProperty("worst_logit_error", std::to_string(e_logits));
  RecordProperty("worst_gradient_error", std::to_string(e_grads));
  EXPECT_NEAR(loss, ref_loss, tol * std::max(1.0f, std::fabs(ref_loss)));
  EXPECT_LE(e_logits, tol);
  EXPECT_LE(e_grads, grad_tol);
  // Per parameter tensor too, so a small layer's error is not hidden by a large one.
  double worst = 0;
  std::string worst_name;
  for (const ParamSpec& p : graph.params()) {
    std::vector<float> a(grads.begin() + static_cast<long>(p.offset), grads.begin() + static_cast<long>(p.offset + p.count));
    std::vector<float> b(ref_grads.begin() + static_cast<long>(p.offset), ref_grads.begin() + static_cast<long>(p.offset + p.count));
    const double e = rel_error(a, b);
    EXPECT_LE(e, param_tol) << graph.node(p.node).name;
    if (e > worst) {
      worst = e;
      worst_name = graph.node(p.node).name;
    }
  }
  std::printf("[ rule ] %s %s: worst parameter tensor %s %.2e <= %.0e\n", backend_name.c_str(),
              mc.model.c_str(), worst_name.c_str(), worst, param_tol);
  RecordProperty("worst_parameter_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(
    AllModels, ModelVsReference,
    ::testing::Combine(::testing::ValuesIn(non_reference_backends()),
                       ::testing::Values(ModelCase{"lenet5", 32}, ModelCase{"alexnet", 64},
                                         ModelCase{"resnet18", 64}, ModelCase{"resnet50", 64},
                                         ModelCase{"resnet18-cifar", 16},
                                         ModelCase{"resnet50-cifar", 16})),
    [](const auto& info) {
      std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param).model;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ModelVsReference);

TEST(Buckets, ContiguousCoverEverythingAndRespectTheLimit) {
  const Graph graph = build_model("resnet18", ModelConfig{});
  for (double mb : {0.0, 0.5, 1.0, 4.0, 25.0}) {
    GradientBuckets buckets(graph, mb * 1024 * 1024);
    std::size_t next = 0;
    for (const Bucket& b : buckets.buckets()) {
      EXPECT_EQ(b.offset, next);
      next += b.count;
      // Only a bucket holding a single parameter tensor may exceed the limit.
      if (mb > 0 && b.count * sizeof(float) > mb * 1024 * 1024) {
        int tensors = 0;
        for (const ParamSpec& p : graph.params()) tensors += p.offset >= b.offset && p.offset < b.offset + b.count;
        EXPECT_EQ(tensors, 1);
      }
    }
    EXPECT_EQ(next, graph.param_count());
    if (mb == 0.0) {
      EXPECT_EQ(buckets.size(), 1u);
    }
  }
}

// When a bucket is reported, its gradients must already be final.
TEST(Buckets, ReportedOnlyWhenTheirGradientsAreFinal) {
  ModelConfig cfg;
  cfg.input = {1, 3, 16, 16};
  const Graph graph = build_model("resnet18-cifar", cfg);
  GradientBuckets buckets(graph, 256 * 1024);
  ASSERT_GT(buckets.size(), 4u);
  auto backend = make_backend("reference");
  NetworkOptions o;
  o.batch = 2;
  Network net(*backend, graph, o);
  SyntheticData data(cfg.input, cfg.classes, 2, 3);
  net.set_input(data.images(0), data.labels(0));
  net.forward();
  std::vector<std::vector<float>> at_report(buckets.size());
  std::vector<int> order;
  net.backward(&buckets, [&](int b) {
    order.push_back(b);
    const Bucket& bk = buckets.buckets()[static_cast<std::size_t>(b)];
    std::vector<float> all = net.get_grads();
    at_report[static_cast<std::size_t>(b)].assign(all.begin() + static_cast<long>(bk.offset),
                                                  all.begin() + static_cast<long>(bk.offset + bk.count));
  });
  ASSERT_EQ(order.size(), buckets.size());
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int>(i));
  const std::vector<float> final_grads = net.get_grads();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Bucket& bk = buckets.buckets()[b];
    for (std::size_t k = 0; k < bk.count; ++k)
      ASSERT_EQ(at_report[b][k], final_grads[bk.offset + k]) << "bucket " << b;
  }
}

class TrainingLearns : public ::testing::TestWithParam<std::string> {};

// lenet5 on the learnable synthetic task: SGD lr 0.01, momentum 0.9, batch 32, 100 steps over 8
// fixed batches must lower the mean loss of the last 5 steps below 1/4 of the first 5.
TEST_P(TrainingLearns, Lenet5LossDropsByFactorFour) {
  auto backend = make_test_backend(GetParam());
  ModelConfig cfg;
  const Graph graph = build_model("lenet5", cfg);
  NetworkOptions o;
  o.batch = 32;
  o.seed = 3;
  Network net(*backend, graph, o);
  SyntheticData data(cfg.input, cfg.classes, o.batch, 21, 8);
  auto velocity = backend->alloc_floats(net.param_count());
  SgdParams sgd;
  sgd.lr = 0.01f;
  sgd.momentum = 0.9f;
  std::vector<float> losses;
  for (int step = 0; step < 100; ++step) {
    net.set_input(data.images(step), data.labels(step));
    losses.push_back(net.forward());
    net.backward();
    backend->sgd_step(net.params(), net.grads(), velocity.get(), net.param_count(), sgd);
  }
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) {
    first += losses[static_cast<std::size_t>(i)] / 5;
    last += losses[losses.size() - 1 - static_cast<std::size_t>(i)] / 5;
  }
  std::printf("[ rule ] %s: loss(last 5) < loss(first 5) / 4; first %.4f last %.4f\n", GetParam().c_str(), first, last);
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, first / 4);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, TrainingLearns, ::testing::ValuesIn(all_backends()));

class InferenceWeights : public ::testing::TestWithParam<std::string> {};

// Backends may keep converted weights between inference passes; new parameters must still be used.
TEST_P(InferenceWeights, SetParamsTakesEffectAndRepeatedPassesAgree) {
  auto backend = make_test_backend(GetParam());
  const Graph graph = build_model("resnet18-cifar", [] {
    ModelConfig c;
    c.input = {1, 3, 16, 16};
    c.loss = false;
    return c;
  }());
  NetworkOptions o;
  o.batch = 2;
  o.mode = Mode::Infer;
  o.seed = 4;
  SyntheticData data(graph.input_shape(), 10, 2, 8);
  Network a(*backend, graph, o);
  a.set_input(data.images(0), nullptr);
  a.forward();
  const std::vector<float> first = a.read_output(graph.output());
  a.forward();
  EXPECT_EQ(a.read_output(graph.output()), first) << "a repeated inference pass changed";
  // New parameters through set_params, and through params() + params_changed().
  NetworkOptions o2 = o;
  o2.seed = 9;
  Network b(*backend, graph, o2);
  b.set_input(data.images(0), nullptr);
  b.forward();
  const std::vector<float> expect = b.read_output(graph.output());
  ASSERT_NE(expect, first);
  a.set_params(b.get_params());
  a.forward();
  EXPECT_EQ(a.read_output(graph.output()), expect) << "set_params ignored by a cached weight copy";
  const std::vector<float> original = Network(*backend, graph, o).get_params();
  backend->copy_to_device(a.params(), original.data(), original.size() * sizeof(float));
  a.params_changed();
  a.forward();
  EXPECT_EQ(a.read_output(graph.output()), first) << "params_changed ignored";
}

INSTANTIATE_TEST_SUITE_P(AllBackends, InferenceWeights, ::testing::ValuesIn(all_backends()));

// The executor's backward wiring checked against finite differences of the loss, for a small
// residual network: an output read by two consumers (gradients accumulated), outputs read only by
// an Add (their gradient buffer is the Add's, network.cpp), a 1x1 projection shortcut. tanh keeps
// the loss smooth, so central differences with step 1e-2 are accurate to ~1e-4 relative.
// Rule per tensor: |g - fd| <= 2e-3 * max|fd| + 5e-3 * |fd|.
class NetworkGradients : public ::testing::TestWithParam<std::string> {};

TEST_P(NetworkGradients, ResidualNetworkMatchesFiniteDifferences) {
  if (test::find_variant(GetParam()).settings.precision != Precision::Fp32)
    GTEST_SKIP() << "finite differences need fp32 arithmetic";
  Graph g({1, 3, 6, 6});
  const int a = g.tanh(g.batch_norm(g.conv(g.input(), 4, 3, 1, 1, true)));
  const int b = g.batch_norm(g.conv(a, 4, 3, 1, 1, false));
  const int skip = g.conv(g.input(), 4, 1, 1, 0, false);
  const int t = g.tanh(g.add(b, skip));
  const int out = g.add(t, a);  // `a` feeds the conv and this add
  g.softmax_cross_entropy(g.fully_connected(g.global_avg_pool(out), 3));
  g.finalize();
  auto backend = make_test_backend(GetParam());
  NetworkOptions o;
  o.batch = 2;
  o.input_grad = true;
  o.seed = 21;
  Network net(*backend, g, o);
  SyntheticData data(g.input_shape(), 3, 2, 5);
  std::vector<float> input(data.images(0), data.images(0) + g.input_shape().per_sample() * 2);
  const std::int32_t* labels = data.labels(0);
  net.set_input(input.data(), labels);
  net.forward();
  net.backward();
  const std::vector<float> grads = net.get_grads(), dinput = net.read_input_grad();
  std::vector<float> params = net.get_params();
  const double eps = 1e-2;
  auto loss_at = [&](const std::vector<float>& p, const std::vector<float>& x) {
    net.set_params(p);
    net.set_input(x.data(), labels);
    return static_cast<double>(net.forward());
  };
  auto compare = [&](const char* what, const std::vector<float>& analytic, std::vector<float>& values, bool is_input) {
    std::vector<double> fd(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float keep = values[i];
      values[i] = keep + static_cast<float>(eps);
      const double up = is_input ? loss_at(params, values) : loss_at(values, input);
      values[i] = keep - static_cast<float>(eps);
      const double down = is_input ? loss_at(params, values) : loss_at(values, input);
      values[i] = keep;
      fd[i] = (up - down) / (2 * eps);
    }
    double scale = 0, worst = 0;
    for (double f : fd) scale = std::max(scale, std::fabs(f));
    for (std::size_t i = 0; i < fd.size(); ++i) {
      const double allowed = 2e-3 * scale + 5e-3 * std::fabs(fd[i]);
      worst = std::max(worst, std::fabs(analytic[i] - fd[i]) / allowed);
      EXPECT_LE(std::fabs(analytic[i] - fd[i]), allowed) << what << "[" << i << "] analytic " << analytic[i] << " fd " << fd[i];
    }
    std::printf("[ rule ] %s %s: |g - fd| <= 2e-3 max|fd| + 5e-3 |fd|; worst error/allowed %.3f (max|fd| %.3g)\n",
                GetParam().c_str(), what, worst, scale);
  };
  compare("parameters", grads, params, false);
  compare("input", dinput, input, true);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, NetworkGradients, ::testing::ValuesIn(all_backends()));

// ---- ReLU fusion (NetworkOptions::fuse_relu, Backend::make_op_with_relu) ----

// Every pattern the executor fuses, and the gradient-buffer sharing around it: conv+ReLU,
// BN+ReLU whose ReLU output is read only by an Add (its gradient buffer is the Add's: the fused
// op must not mask it in place), Add+ReLU whose inputs share the Add's gradient (masked in place),
// a ReLU output read by three consumers, FC+ReLU.
static Graph fusion_patterns_graph() {
  Graph g({1, 3, 8, 8});
  const int r1 = g.relu(g.conv(g.input(), 8, 3, 1, 1, true));
  const int r2 = g.relu(g.batch_norm(g.conv(r1, 8, 3, 1, 1, false)));
  const int b2 = g.batch_norm(g.conv(r1, 8, 1, 1, 0, false));
  const int r3 = g.relu(g.add(r2, b2));
  const int r4 = g.relu(g.add(r3, r1));
  const int f = g.relu(g.fully_connected(g.global_avg_pool(r4), 16));
  g.softmax_cross_entropy(g.fully_connected(f, 5));
  g.finalize();
  return g;
}

class Fusion : public ::testing::TestWithParam<std::string> {};

// Fused against unfused on the same backend: in fp32 the same arithmetic up to summation order
// (1e-4); at TF32/BF16 a fused kernel (cuDNN's BN+ReLU, a folded conv) may round an element
// differently, which the network carries like any rounding: the whole-network bound.
static double same_tol(double model_factor) { return model_factor == 1.0 ? 1e-4 : 1e-3 * model_factor; }

// Against the reference, gradients carry every rounding of the forward and backward passes: fp32
// stays within 1e-3; at TF32/BF16 they get the whole-model gradient bound of ModelVsReference (a
// BF16 input gradient through four layers is about 9e-2 off, the unfused network's as much).
static double reference_grad_tol(double model_factor) {
  return model_factor == 1.0 ? 1e-3 : std::min(5e-2 * model_factor, 0.5);
}

// The fused network computes what the unfused one does (same backend), and what the reference
// computes; dnnl and cuda fuse every candidate, the other backends none (the reference is the
// unfused oracle). A fused node's own output is refused by read_output.
TEST_P(Fusion, FusedMatchesUnfusedAndReference) {
  const std::string name = GetParam();
  const Graph g = fusion_patterns_graph();
  SyntheticData data(g.input_shape(), 5, 4, 17);
  struct Run {
    std::vector<float> logits, grads, dinput;
    std::size_t fused = 0;
  };
  const int logits_node = g.nodes().back().inputs[0];
  auto run = [&](const std::string& backend_name, bool fuse) {
    auto backend = make_test_backend(backend_name);
    NetworkOptions o;
    o.batch = 4;
    o.seed = 3;
    o.input_grad = true;
    o.fuse_relu = fuse;
    o.memory_plan = false;  // reads a fused ReLU's output after the step (test_memory_plan: the plan)
    Network net(*backend, g, o);
    Run r;
    for (int step = 0; step < 2; ++step) {  // twice: in-place masking must not leak into the next step
      net.set_input(data.images(step), data.labels(step));
      net.forward();
      net.backward();
    }
    r.logits = net.read_output(logits_node);
    r.grads = net.get_grads();
    r.dinput = net.read_input_grad();
    r.fused = net.fused_relus().size();
    if (r.fused) {
      EXPECT_THROW(net.read_output(g.node(net.fused_relus()[0]).inputs[0]), std::logic_error);
      EXPECT_NO_THROW(net.read_output(net.fused_relus()[0]));
    }
    return r;
  };
  const Run fused = run(name, true), unfused = run(name, false), ref = run("reference", false);
  const bool fuses = name.starts_with("dnnl") || name.starts_with("cuda");
  EXPECT_EQ(fused.fused, fuses ? 5u : 0u) << name << " fused " << fused.fused << " of the graph's 5 candidate ReLUs";
  EXPECT_EQ(unfused.fused, 0u);
  const double f = test::find_variant(name).model_factor;
  const double e_same = std::max({rel_error(fused.logits, unfused.logits), rel_error(fused.grads, unfused.grads),
                                  rel_error(fused.dinput, unfused.dinput)});
  const double e_ref_logits = rel_error(fused.logits, ref.logits);
  const double e_ref_grads = std::max(rel_error(fused.grads, ref.grads), rel_error(fused.dinput, ref.dinput));
  std::printf("[ rule ] %s: %zu ReLUs fused; fused vs unfused %.2e <= %.0e (worst of logits, parameter and input "
              "gradients); fused vs reference: logits %.2e <= %.0e, gradients %.2e <= %.0e (relative L2)\n",
              name.c_str(), fused.fused, e_same, same_tol(f), e_ref_logits, 1e-3 * f, e_ref_grads,
              reference_grad_tol(f));
  EXPECT_LE(e_same, same_tol(f));
  EXPECT_LE(e_ref_logits, 1e-3 * f);
  EXPECT_LE(e_ref_grads, reference_grad_tol(f));
}

// Batch-norm scale and shift away from 1/0, and running statistics away from the initialization
// (each set of `buffer_sets` its own draws), so that a folded bias and a fused sum both matter.
static void perturb_batch_norms(const Graph& g, std::uint64_t seed, std::vector<float>& params,
                                std::initializer_list<std::vector<float>*> buffer_sets) {
  Rng rng(seed, 0);
  for (const ParamSpec& p : g.params())
    if (p.role == ParamRole::Scale || p.role == ParamRole::Shift)
      for (std::size_t k = 0; k < p.count; ++k) params[p.offset + k] = rng.uniform(-1.5f, 1.5f);
  for (const Node& n : g.nodes()) {
    if (n.kind != OpKind::BatchNorm) continue;
    const auto c = static_cast<std::size_t>(n.out.c);
    for (std::size_t k = 0; k < c; ++k)
      for (std::vector<float>* buffers : buffer_sets) {
        (*buffers)[n.buffer_offset + k] = rng.uniform(-0.5f, 0.5f);
        (*buffers)[n.buffer_offset + buffer_stride(c) + k] = rng.uniform(0.2f, 2.0f);
      }
  }
}

// Inference: every Conv -> BatchNorm folded (with its ReLU where one follows) on dnnl and cuda,
// with non-trivial batch-norm parameters and statistics; logits against the same backend
// unfused and the reference. New statistics after a pass must reach the folded weights.
TEST_P(Fusion, InferenceFoldsBatchNorm) {
  const std::string name = GetParam();
  const Graph g = fusion_patterns_graph();
  SyntheticData data(g.input_shape(), 5, 4, 19);
  std::vector<float> params, buffers_a(g.buffer_count()), buffers_b(g.buffer_count());
  {  // parameters: the training initialization, then batch-norm scale/shift away from 1/0
    auto b = make_test_backend("reference");
    NetworkOptions o;
    o.batch = 4;
    Network n(*b, g, o);
    params = n.get_params();
  }
  perturb_batch_norms(g, 7, params, {&buffers_a, &buffers_b});
  const int logits_node = g.nodes().back().inputs[0];
  struct Run {
    std::vector<float> a, b;  // logits with buffers_a, then after set_buffers(buffers_b)
    std::size_t folded = 0, relus = 0, adds = 0;
  };
  auto run = [&](const std::string& backend_name, bool fuse) {
    auto backend = make_test_backend(backend_name);
    NetworkOptions o;
    o.batch = 4;
    o.mode = Mode::Infer;
    o.fuse_relu = fuse;
    Network net(*backend, g, o);
    net.set_params(params);
    net.set_buffers(buffers_a);
    net.set_input(data.images(0), data.labels(0));
    net.forward();
    Run r;
    r.a = net.read_output(logits_node);
    net.set_buffers(buffers_b);
    net.forward();
    r.b = net.read_output(logits_node);
    r.folded = net.folded_batch_norms().size();
    r.relus = net.fused_relus().size();
    r.adds = net.fused_adds().size();
    return r;
  };
  const Run fused = run(name, true), unfused = run(name, false), ref = run("reference", false);
  const bool fuses = name.starts_with("dnnl") || name.starts_with("cuda");
  EXPECT_EQ(fused.folded, fuses ? 2u : 0u) << name << " folded " << fused.folded << " of 2 batch norms";
  EXPECT_EQ(fused.relus, fuses ? 5u : 0u) << name << " fused " << fused.relus << " of 5 ReLUs";
  // relu(bn(conv(r1)) + r2): the add may go into that convolution, over r2 (dnnl only, and not
  // where the sum would change oneDNN's kernel: these 8 channels on AVX2). Counted exactly by
  // ResidualAddWritesOverItsShortcut.
  EXPECT_LE(fused.adds, name.starts_with("dnnl") ? 1u : 0u) << name << " fused " << fused.adds << " of 1 residual add";
  EXPECT_GT(rel_error(ref.a, ref.b), 1e-2) << "the two sets of statistics should give other logits";
  const double f = test::find_variant(name).model_factor;
  const double e_same = std::max(rel_error(fused.a, unfused.a), rel_error(fused.b, unfused.b));
  const double e_ref = std::max(rel_error(fused.a, ref.a), rel_error(fused.b, ref.b));
  std::printf("[ rule ] %s inference: %zu batch norms folded, %zu ReLUs fused; logits fused vs unfused %.2e <= %.0e, "
              "vs reference %.2e <= %.0e (relative L2, both sets of statistics)\n",
              name.c_str(), fused.folded, fused.relus, e_same, same_tol(f), e_ref, 1e-3 * f);
  EXPECT_LE(e_same, same_tol(f));
  EXPECT_LE(e_ref, 1e-3 * f);
}

// ---- residual fusion (inference): Conv [-> BN] -> Add [-> ReLU] written over the shortcut ----

// The three ways a residual add meets the executor: an identity block (the last convolution adds
// onto the block's input), a downsample block whose shortcut convolution comes after the main
// branch in node order (it adds onto the main branch instead), and an add whose shortcut is read
// again after the convolution (it must not be overwritten: not fused).
struct ResidualGraph {
  Graph g{{1, 3, 8, 8}};
  int stem = 0, block = 0, logits = 0;
  int identity_add = 0, late_add = 0;  // the add over the stem; the add whose shortcut is read again
};

static ResidualGraph residual_patterns_graph() {
  ResidualGraph r;
  Graph& g = r.g;
  auto conv_bn = [&](int x, int c, int k, int stride) { return g.batch_norm(g.conv(x, c, k, stride, k / 2, false)); };
  r.stem = g.relu(conv_bn(g.input(), 16, 3, 1));
  const int y1 = g.relu(conv_bn(r.stem, 16, 3, 1));
  r.identity_add = g.add(conv_bn(y1, 16, 3, 1), r.stem);  // identity: over the stem's output
  r.block = g.relu(r.identity_add);
  const int y2 = conv_bn(r.block, 32, 3, 2);
  const int ds = conv_bn(r.block, 32, 1, 2);
  const int down = g.relu(g.add(y2, ds));  // downsample: the shortcut's conv adds onto y2
  r.late_add = g.add(conv_bn(down, 32, 3, 1), down);  // `down` is read once more below
  const int late = r.late_add;
  const int again = g.add(late, down);
  r.logits = g.fully_connected(g.global_avg_pool(again), 5);
  g.softmax_cross_entropy(r.logits);
  g.finalize();
  return r;
}


// Logits of two inference passes (the second on other images: the shortcut buffers are written
// over in place, so nothing of the first pass may leak into it), fused or not, planned or not.
TEST_P(Fusion, ResidualAddWritesOverItsShortcut) {
  const std::string name = GetParam();
  const ResidualGraph rg = residual_patterns_graph();
  const Graph& g = rg.g;
  SyntheticData data(g.input_shape(), 5, 4, 23);
  std::vector<float> params, buffers(g.buffer_count());
  {
    auto b = make_test_backend("reference");
    NetworkOptions o;
    o.batch = 4;
    Network n(*b, g, o);
    params = n.get_params();
    buffers = n.get_buffers();
  }
  perturb_batch_norms(g, 11, params, {&buffers});
  struct Run {
    std::vector<float> logits;
    std::vector<int> adds;
  };
  const auto fused = [](const Run& r, int add) { return std::find(r.adds.begin(), r.adds.end(), add) != r.adds.end(); };
  auto run = [&](const std::string& backend_name, bool fuse, bool plan) {
    auto backend = make_test_backend(backend_name);
    NetworkOptions o;
    o.batch = 4;
    o.mode = Mode::Infer;
    o.fuse_relu = fuse;
    o.memory_plan = plan;
    Network net(*backend, g, o);
    net.set_params(params);
    net.set_buffers(buffers);
    Run r;
    for (int pass = 0; pass < 2; ++pass) {
      net.set_input(data.images(pass), data.labels(pass));
      net.forward();
      const std::vector<float> l = net.read_output(rg.logits);
      r.logits.insert(r.logits.end(), l.begin(), l.end());
    }
    r.adds = net.fused_adds();
    if (fused(r, rg.identity_add) && !plan) {  // the stem's output was overwritten by the block's sum, which is kept
      EXPECT_THROW(net.read_output(rg.stem), std::logic_error);
      EXPECT_NO_THROW(net.read_output(rg.block));
    }
    return r;
  };
  const Run with = run(name, true, false), planned = run(name, true, true);
  const Run unfused = run(name, false, false), ref = run("reference", false, false);
  // dnnl fuses the adds whose shortcut is dead, except where the sum would change oneDNN's kernel
  // (which depends on its version and the instruction set): at least one of the two here.
  if (name.starts_with("dnnl")) EXPECT_GE(with.adds.size(), 1u) << name << " fused none of the 2 residual adds whose shortcut is dead";
  else EXPECT_TRUE(with.adds.empty()) << name << " fused " << with.adds.size() << " residual adds";
  EXPECT_LE(with.adds.size(), 2u);
  EXPECT_FALSE(fused(with, rg.late_add)) << "fused an add whose shortcut is read again afterwards";
  EXPECT_TRUE(unfused.adds.empty());
  EXPECT_EQ(planned.logits, with.logits) << "the memory plan changed the fused logits";
  const double f = test::find_variant(name).model_factor;
  const double e_same = rel_error(with.logits, unfused.logits), e_ref = rel_error(with.logits, ref.logits);
  std::printf("[ rule ] %s inference: %zu residual adds fused; logits fused vs unfused %.2e <= %.0e, "
              "vs reference %.2e <= %.0e (relative L2, two passes)\n",
              name.c_str(), with.adds.size(), e_same, same_tol(f), e_ref, 1e-3 * f);
  EXPECT_LE(e_same, same_tol(f));
  EXPECT_LE(e_ref, 1e-3 * f);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Fusion, ::testing::ValuesIn(all_backends()));

// ---- non-trainable buffers: batch-norm running statistics owned by the Network ----

// The graph lays every BatchNorm node's mean and variance out at 64-float (256-byte) multiples,
// without overlap, and counts them apart from the trainable parameters.
TEST(Buffers, LayoutIsAlignedAndDisjoint) {
  const Graph graph = build_model("resnet18", ModelConfig{});
  std::size_t end = 0, bn = 0, bn_params = 0;
  for (const Node& n : graph.nodes()) {
    if (n.kind != OpKind::BatchNorm) {
      EXPECT_EQ(n.buffer_count, 0u) << n.name;
      continue;
    }
    ++bn;
    bn_params += n.param_count;
    const auto c = static_cast<std::size_t>(n.out.c);
    const std::size_t var = n.buffer_offset + buffer_stride(c);
    EXPECT_EQ(n.buffer_offset % 64, 0u) << n.name;
    EXPECT_EQ(var % 64, 0u) << n.name;
    EXPECT_GE(var, n.buffer_offset + c) << n.name << ": variance overlaps the mean";
    EXPECT_GE(n.buffer_offset, end) << n.name << ": overlaps the previous node";
    EXPECT_EQ(n.buffer_count, var + c - n.buffer_offset) << n.name;
    end = n.buffer_offset + n.buffer_count;
  }
  EXPECT_EQ(bn, 20u);  // resnet18: stem, 16 in the blocks, 3 downsample shortcuts
  EXPECT_EQ(graph.buffer_count(), end);
  EXPECT_EQ(bn_params, 2 * 4800u);  // scale and shift of 4800 channels; buffers are not parameters
}

// After N training steps on the reference backend the running statistics are exactly the momentum
// rule applied to the batch statistics of the BN's input (read back from the conv): mean
// m <- 0.9 m + 0.1 mean_batch, var v <- 0.9 v + 0.1 var_batch * M/(M-1), from 0 / 1. The
// parameters change between steps (SGD), so every step's statistics differ.
TEST(Buffers, RunningStatisticsFollowTheMomentumRule) {
  Graph g({1, 3, 6, 6});
  const int conv = g.conv(g.input(), 4, 3, 1, 1, true);
  const int bn = g.batch_norm(conv);
  g.softmax_cross_entropy(g.fully_connected(g.global_avg_pool(g.relu(bn)), 3));
  g.finalize();
  auto backend = make_backend("reference");
  NetworkOptions o;
  o.batch = 4;
  o.seed = 6;
  o.memory_plan = false;  // reads the convolution's output after forward
  Network net(*backend, g, o);
  ASSERT_EQ(net.buffer_count(), g.buffer_count());
  const Node& node = g.node(bn);
  const std::size_t c = 4, var_at = node.buffer_offset + buffer_stride(c);
  {  // initial 0 / 1
    const std::vector<float> b = net.get_buffers();
    for (std::size_t k = 0; k < c; ++k) {
      EXPECT_EQ(b[node.buffer_offset + k], 0.0f);
      EXPECT_EQ(b[var_at + k], 1.0f);
    }
  }
  SyntheticData data(g.input_shape(), 3, o.batch, 13);
  auto velocity = backend->alloc_floats(net.param_count());
  SgdParams sgd;
  sgd.lr = 0.1f;
  std::vector<double> mean(c, 0.0), var(c, 1.0);  // the hand computation, in double
  const double m = 4.0 * 6 * 6;                    // values per channel in a batch
  for (int step = 0; step < 3; ++step) {
    net.set_input(data.images(step), data.labels(step));
    net.forward();
    const std::vector<float> x = net.read_output(conv);  // N x C x H x W
    for (std::size_t ch = 0; ch < c; ++ch) {
      double sum = 0, sq = 0;
      for (int n = 0; n < o.batch; ++n)
        for (int i = 0; i < 36; ++i) sum += x[(std::size_t(n) * c + ch) * 36 + std::size_t(i)];
      const double mu = sum / m;
      for (int n = 0; n < o.batch; ++n)
        for (int i = 0; i < 36; ++i) {
          const double d = x[(std::size_t(n) * c + ch) * 36 + std::size_t(i)] - mu;
          sq += d * d;
        }
      mean[ch] = 0.9 * mean[ch] + 0.1 * mu;
      var[ch] = 0.9 * var[ch] + 0.1 * sq / (m - 1);
    }
    net.backward();
    backend->sgd_step(net.params(), net.grads(), velocity.get(), net.param_count(), sgd);
  }
  const std::vector<float> b = net.get_buffers();
  double moved = 0;
  for (std::size_t ch = 0; ch < c; ++ch) {
    // float storage between steps: a few float roundings of values of order 1
    EXPECT_NEAR(b[node.buffer_offset + ch], mean[ch], 1e-6 * (1 + std::fabs(mean[ch]))) << "mean " << ch;
    EXPECT_NEAR(b[var_at + ch], var[ch], 1e-6 * (1 + var[ch])) << "var " << ch;
    moved = std::max({moved, std::fabs(b[node.buffer_offset + ch] - 0.0), std::fabs(b[var_at + ch] - 1.0)});
  }
  std::printf("[ rule ] running mean/var == momentum rule over the conv's batch statistics, |err| <= 1e-6 (1 + |v|);"
              " largest distance from 0 / 1: %.3g\n", moved);
  EXPECT_GT(moved, 1e-2) << "the running statistics barely left their initial values";
  // Padding between the mean and the variance stays 0.
  for (std::size_t k = node.buffer_offset + c; k < var_at; ++k) ASSERT_EQ(b[k], 0.0f) << k;
  // set_buffers round-trips, and a wrong size is refused.
  std::vector<float> changed = b;
  changed[node.buffer_offset] = 7.0f;
  net.set_buffers(changed);
  EXPECT_EQ(net.get_buffers(), changed);
  EXPECT_THROW(net.set_buffers(std::vector<float>(b.size() + 1)), std::invalid_argument);
}

// Every backend's running statistics after 3 training steps of resnet18-cifar at batch 4 agree
// with the reference's, and an inference network given those buffers and the trained parameters
// computes the reference inference network's logits. The reference takes the SGD steps; the other
// backend runs each step (forward + backward in Train mode) from the reference's parameters of that
// step. Letting it follow its own SGD trajectory would compare chaos, not batch norm: at batch 4
// one ReLU input within rounding of zero takes the other side (measured for openblas: step-1
// gradients 2e-3 apart), and BN over 16 values per channel amplifies that to 8e-2 at step 2 and
// 5e-1 at step 3.
class BuffersVsReference : public ::testing::TestWithParam<std::string> {};

TEST_P(BuffersVsReference, TrainedStatisticsAndInferenceMatch) {
  ModelConfig cfg;
  cfg.input = {1, 3, 16, 16};
  const Graph graph = build_model("resnet18-cifar", cfg);
  const int batch = 4, steps = 3;
  SyntheticData data(cfg.input, cfg.classes, batch, 17);
  const int logits_node = graph.nodes().back().inputs[0];
  NetworkOptions o;
  o.batch = batch;
  o.seed = 8;
  // Inference on batch `steps` (not trained on) with the given parameters and buffers.
  auto infer = [&](Backend& backend, const std::vector<float>& params, const std::vector<float>* buffers) {
    NetworkOptions io = o;
    io.mode = Mode::Infer;
    Network net(backend, graph, io);
    net.set_params(params);
    if (buffers) net.set_buffers(*buffers);
    net.set_input(data.images(steps), data.labels(steps));
    net.forward();
    return net.read_output(logits_node);
  };
  struct Reference {
    std::vector<std::vector<float>> params;  // before each step, then the final ones
    std::vector<float> buffers, logits;
  };
  static std::unique_ptr<Reference> ref;  // the reference is the slow part: computed once
  if (!ref) {
    auto backend = make_backend("reference");
    auto r = std::make_unique<Reference>();
    Network net(*backend, graph, o);
    auto velocity = backend->alloc_floats(net.param_count());
    SgdParams sgd;
    sgd.lr = 0.01f;
    sgd.momentum = 0.9f;
    for (int step = 0; step < steps; ++step) {
      r->params.push_back(net.get_params());
      net.set_input(data.images(step), data.labels(step));
      net.forward();
      net.backward();
      backend->sgd_step(net.params(), net.grads(), velocity.get(), net.param_count(), sgd);
    }
    r->params.push_back(net.get_params());
    r->buffers = net.get_buffers();
    r->logits = infer(*backend, r->params.back(), &r->buffers);
    // The logit check below can only catch a backend that ignores the buffers if they matter:
    // the same inference with the initial statistics (0 / 1) must give clearly different logits.
    const double e = rel_error(infer(*backend, r->params.back(), nullptr), r->logits);
    std::printf("[ rule ] reference: logits with initial statistics differ by %.2e (must be > 1e-1)\n", e);
    ASSERT_GT(e, 1e-1) << "trained running statistics hardly change the inference result";
    ref = std::move(r);
  }
  auto backend = make_test_backend(GetParam());
  Network net(*backend, graph, o);
  for (int step = 0; step < steps; ++step) {
    net.set_params(ref->params[static_cast<std::size_t>(step)]);
    net.set_input(data.images(step), data.labels(step));
    net.forward();
    net.backward();
  }
  const std::vector<float> buffers = net.get_buffers();
  const std::vector<float> logits = infer(*backend, ref->params.back(), &buffers);
  // fp32: the statistics are sums over the batch in another order (relative L2 1e-4 with margin:
  // measured 1e-7 on the CPU backends); the logits go through 20 layers (1e-3, as ModelVsReference).
  // Reduced precisions multiply both by their model_factor.
  const double f = test::find_variant(GetParam()).model_factor;
  const double buf_tol = 1e-4 * f, logit_tol = 1e-3 * f;
  const double e_buf = rel_error(buffers, ref->buffers), e_logits = rel_error(logits, ref->logits);
  std::printf("[ rule ] %s resnet18-cifar: ||x - ref||2 / ||ref||2: buffers %.2e <= %.0e, inference logits %.2e <= %.0e\n",
              GetParam().c_str(), e_buf, buf_tol, e_logits, logit_tol);
  ASSERT_EQ(buffers.size(), ref->buffers.size());
  EXPECT_LE(e_buf, buf_tol);
  EXPECT_LE(e_logits, logit_tol);
  // Means and variances separately, so neither hides behind the other (variances are larger).
  std::vector<float> gm, rm, gv, rv;
  for (const Node& n : graph.nodes()) {
    if (n.kind != OpKind::BatchNorm) continue;
    const auto c = static_cast<long>(n.out.c);
    const auto at = static_cast<long>(n.buffer_offset), var = at + static_cast<long>(buffer_stride(std::size_t(c)));
    gm.insert(gm.end(), buffers.begin() + at, buffers.begin() + at + c);
    rm.insert(rm.end(), ref->buffers.begin() + at, ref->buffers.begin() + at + c);
    gv.insert(gv.end(), buffers.begin() + var, buffers.begin() + var + c);
    rv.insert(rv.end(), ref->buffers.begin() + var, ref->buffers.begin() + var + c);
  }
  EXPECT_LE(rel_error(gm, rm), buf_tol) << "running means";
  EXPECT_LE(rel_error(gv, rv), buf_tol) << "running variances";
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BuffersVsReference);
INSTANTIATE_TEST_SUITE_P(AllBackends, BuffersVsReference, ::testing::ValuesIn(non_reference_backends()));
