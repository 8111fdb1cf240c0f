// The executor's memory plan (engine/memory_plan.hpp, NetworkOptions::memory_plan): the packing
// itself, and training with the plan against training without it on every model and backend, which
// must give the same numbers bit for bit on the CPU (a buffer reused while its value is still needed
// changes them). Links backend_selection.cpp: --gpu runs the GPU variants instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backend_selection.hpp"
#include "engine/memory_plan.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/synthetic_data.hpp"

using namespace hpcnn;

namespace {

// ---- the packing ----

TEST(PlanMemory, BuffersLiveTogetherNeverShareBytes) {
  const std::vector<BufferLifetime> b = {{1000, 0, 3}, {5000, 2, 5}, {3000, 4, 9}, {700, 6, 7}, {4000, 8, 9}};
  const MemoryPlan plan = plan_memory(b);
  EXPECT_EQ(check_plan(b, plan), "");
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(plan.offsets[i] % kPlanAlign, 0u);
  EXPECT_GE(plan.arena_bytes, live_bytes_bound(b));
  EXPECT_LT(plan.arena_bytes, plan.unplanned_bytes);  // dead buffers were reused
}

TEST(PlanMemory, AChainNeedsOnlyTwoNeighbours) {
  // Each buffer is live while the next one is written: any two neighbours overlap in time.
  std::vector<BufferLifetime> b;
  for (int i = 0; i < 20; ++i) b.push_back({1 << 20, i, i + 1});
  const MemoryPlan plan = plan_memory(b);
  EXPECT_EQ(check_plan(b, plan), "");
  EXPECT_EQ(plan.arena_bytes, 2u << 20);
  EXPECT_EQ(live_bytes_bound(b), 2u << 20);
}

TEST(PlanMemory, CheckFindsBuffersThatShareBytesWhileLive) {
  const std::vector<BufferLifetime> b = {{1024, 0, 4}, {1024, 4, 6}};  // both live at step 4
  MemoryPlan plan;
  plan.offsets = {0, 0};
  plan.arena_bytes = 1024;
  EXPECT_NE(check_plan(b, plan).find("share bytes"), std::string::npos);
  plan.offsets = {0, 1024};
  plan.arena_bytes = 2048;
  EXPECT_EQ(check_plan(b, plan), "");
  plan.arena_bytes = 1500;  // the second one would stick out of the arena
  EXPECT_NE(check_plan(b, plan).find("outside the arena"), std::string::npos);
}

// ---- whole networks: plan on against plan off ----

struct PlanCase {
  std::string model;
  int image;
  Activation act = Activation::Relu;
};

std::string case_name(const PlanCase& c) {
  std::string s = c.model + "_" + std::to_string(c.image) + (c.act == Activation::Tanh ? "_tanh" : "");
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// Every model of the zoo at a small input (the reference backend runs them all), and LeNet-5 with
// tanh (whose backward reads the op's output instead of its input).
std::vector<PlanCase> plan_cases() {
  std::vector<PlanCase> out;
  for (const ModelInfo& m : models())
    out.push_back({m.name, m.native_image_size > 0 ? m.native_image_size : std::max(m.min_image_size, 16)});
  out.push_back({"lenet5", 32, Activation::Tanh});
  return out;
}

// What two training steps leave behind: losses, the last step's gradients (parameters, input),
// the logits, the batch-norm running statistics.
struct Trained {
  std::vector<float> losses, grads, dinput, logits, buffers;
  ActivationMemory memory;
};

// The options both comparisons run with: batch 3, fusion and plan as given.
NetworkOptions plan_options(Mode mode, bool fuse, bool plan, unsigned seed) {
  NetworkOptions o;
  o.batch = 3;
  o.seed = seed;
  o.mode = mode;
  o.input_grad = mode == Mode::Train;
  o.fuse_relu = fuse;
  o.memory_plan = plan;
  return o;
}

Trained train(const test::BackendVariant& v, const Graph& graph, bool fuse, bool plan) {
  auto backend = test::make_variant(v);
  const NetworkOptions o = plan_options(Mode::Train, fuse, plan, 21);
  Network net(*backend, graph, o);
  SyntheticData data(graph.input_shape(), 10, o.batch, 31);
  Trained t;
  for (int step = 0; step < 2; ++step) {  // the second step sees new parameters and stale buffers
    net.set_input(data.images(step), data.labels(step));
    t.losses.push_back(net.forward());
    net.backward();
    std::vector<float> p = net.get_params();
    const std::vector<float> g = net.get_grads();
    for (std::size_t k = 0; k < p.size(); ++k) p[k] -= 0.05f * g[k];
    net.set_params(p);
  }
  t.grads = net.get_grads();
  t.dinput = net.read_input_grad();
  t.logits = net.read_output(graph.nodes().back().inputs[0]);
  t.buffers = net.get_buffers();
  t.memory = net.activation_memory();
  return t;
}

double rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return a.size() == b.size() ? std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12) : INFINITY;
}

// CPU backends: bit-identical (the same kernels on the same values; only the addresses differ).
// GPU backends: cuDNN's algorithms that sum with atomics give other roundings run to run, which
// batch norm over few values and the second step amplify; so the plan may differ from no plan by
// as much as a repeated run without it differs from the first (`again`), and at least by the
// rounding of one fp32 step times the variant's factor.
void expect_same(const char* what, const std::vector<float>& on, const std::vector<float>& off,
                 const std::vector<float>& again, const test::BackendVariant& v, bool gpu) {
  if (!gpu) {
    ASSERT_EQ(on.size(), off.size()) << what;
    std::size_t first = on.size();
    for (std::size_t k = 0; k < on.size() && first == on.size(); ++k)
      if (std::memcmp(&on[k], &off[k], sizeof(float)) != 0) first = k;
    EXPECT_EQ(first, on.size()) << what << " differs with the memory plan, first at [" << first
                                << "]: " << (first < on.size() ? on[first] : 0) << " vs "
                                << (first < off.size() ? off[first] : 0);
    return;
  }
  const double planned = rel_error(on, off), rerun = rel_error(again, off);
  const double bound = std::max(1e-5 * v.model_factor, 2 * rerun);
  std::printf("[ rule ] %s: plan vs no plan %.2e <= %.2e (no plan run twice: %.2e)\n", what, planned, bound, rerun);
  EXPECT_LE(planned, bound) << what;
}

class PlanVsNoPlan : public ::testing::TestWithParam<std::tuple<std::string, PlanCase, bool>> {};

TEST_P(PlanVsNoPlan, TrainingGivesTheSameNumbers) {
  const auto& [variant, pc, fuse] = GetParam();
  // The reference backend (slow: 30 s for one ResNet-50 case here) fuses nothing, so its fused
  // network is its unfused one; and its ResNet-50 plan is ResNet-18's kind of plan (the same
  // operations, residual blocks of another shape), checked on the faster CPU backends.
  if (variant == "reference" && fuse) GTEST_SKIP() << "the reference backend fuses nothing: same as unfused";
  if (variant == "reference" && pc.model.rfind("resnet50", 0) == 0)
    GTEST_SKIP() << "ResNet-50's plan checked on the faster CPU backends";
  const test::BackendVariant& v = test::find_variant(variant);
  ModelConfig cfg;
  cfg.input = {1, 3, pc.image, pc.image};
  cfg.act = pc.act;
  const Graph graph = build_model(pc.model, cfg);
  const Trained on = train(v, graph, fuse, true), off = train(v, graph, fuse, false);
  const bool gpu = test::gpu_mode();
  std::optional<Trained> rerun;  // the GPU's repeated run without the plan; the CPU compares bits
  if (gpu) rerun = train(v, graph, fuse, false);
  const Trained& again = rerun ? *rerun : off;
  expect_same("losses", on.losses, off.losses, again.losses, v, gpu);
  expect_same("parameter gradients", on.grads, off.grads, again.grads, v, gpu);
  expect_same("input gradient", on.dinput, off.dinput, again.dinput, v, gpu);
  expect_same("logits", on.logits, off.logits, again.logits, v, gpu);
  expect_same("batch-norm statistics", on.buffers, off.buffers, again.buffers, v, gpu);
  // The plan allocates less than a buffer each (training keeps every gradient otherwise), and
  // without it the executor allocates exactly a buffer each.
  EXPECT_LT(on.memory.planned_bytes, on.memory.unplanned_bytes);
  EXPECT_GE(on.memory.planned_bytes, on.memory.bound_bytes);
  EXPECT_EQ(off.memory.planned_bytes, off.memory.unplanned_bytes);
  std::printf("%-10s %-16s fusion %-3s: planned %.2f MiB of %.2f (live bound %.2f)\n", variant.c_str(),
              case_name(pc).c_str(), fuse ? "on" : "off", on.memory.planned_bytes / 1048576.0,
              on.memory.unplanned_bytes / 1048576.0, on.memory.bound_bytes / 1048576.0);
}

// Inference: the logits of two passes, and the plan's bytes. With fusion on, the dnnl backend's
// residual convolutions write over their shortcut's buffer (Epilogue::add), which the plan must
// keep alive exactly as long as either value is needed.
struct Inferred {
  std::vector<float> logits;
  ActivationMemory memory;
};

Inferred infer(const test::BackendVariant& v, const Graph& graph, bool fuse, bool plan) {
  auto backend = test::make_variant(v);
  const NetworkOptions o = plan_options(Mode::Infer, fuse, plan, 22);
  Network net(*backend, graph, o);
  SyntheticData data(graph.input_shape(), 10, o.batch, 32);
  Inferred r;
  for (int pass = 0; pass < 2; ++pass) {  // the second pass must not see the first's values
    net.set_input(data.images(pass), data.labels(pass));
    net.forward();
    const std::vector<float> l = net.read_output(graph.nodes().back().inputs[0]);
    r.logits.insert(r.logits.end(), l.begin(), l.end());
  }
  r.memory = net.activation_memory();
  return r;
}

TEST_P(PlanVsNoPlan, InferenceGivesTheSameNumbers) {
  const auto& [variant, pc, fuse] = GetParam();
  // The reference backend (slow: 22 s here for the zoo) fuses nothing; the forward-only plan is
  // checked on the other CPU backends, which do not fuse either, at a tenth of that.
  if (variant == "reference") GTEST_SKIP() << "inference plan checked on the faster CPU backends";
  const test::BackendVariant& v = test::find_variant(variant);
  ModelConfig cfg;
  cfg.input = {1, 3, pc.image, pc.image};
  cfg.act = pc.act;
  const Graph graph = build_model(pc.model, cfg);
  const Inferred on = infer(v, graph, fuse, true), off = infer(v, graph, fuse, false);
  expect_same("logits", on.logits, off.logits, off.logits, v, test::gpu_mode());  // no atomics forward
  EXPECT_GE(on.memory.planned_bytes, on.memory.bound_bytes);
  EXPECT_LE(on.memory.planned_bytes, on.memory.unplanned_bytes);
}

std::vector<std::string> variants() {
  std::vector<std::string> out;
  for (const test::BackendVariant& v : test::variants_under_test(true)) out.push_back(v.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    AllModels, PlanVsNoPlan,
    ::testing::Combine(::testing::ValuesIn(variants()), ::testing::ValuesIn(plan_cases()), ::testing::Bool()),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + case_name(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_fused" : "_unfused");
    });

// With the plan, an output whose bytes are reused is refused after the step instead of read stale;
// without it every output stays readable.
TEST(PlanReads, ReusedOutputsAreRefused) {
  const test::BackendVariant v = test::variants_under_test(true).front();  // a copy: the list is a temporary
  const Graph graph = build_model("resnet18-cifar", [] {
    ModelConfig c;
    c.input = {1, 3, 16, 16};
    return c;
  }());
  const int first_conv = graph.consumers(0).front();
  for (bool plan : {true, false}) {
    auto backend = test::make_variant(v);
    NetworkOptions o;
    o.batch = 2;
    o.memory_plan = plan;
    o.fuse_relu = false;
    Network net(*backend, graph, o);
    SyntheticData data(graph.input_shape(), 10, o.batch, 3);
    net.set_input(data.images(0), data.labels(0));
    net.forward();
    net.backward();
    if (plan) {
      EXPECT_THROW(net.read_output(first_conv), std::logic_error);
      EXPECT_THROW(net.read_output_grad(first_conv), std::logic_error);
    } else {
      EXPECT_NO_THROW(net.read_output(first_conv));
      EXPECT_NO_THROW(net.read_output_grad(first_conv));
    }
    EXPECT_NO_THROW(net.read_output(graph.nodes().back().inputs[0]));  // the logits are kept
  }
}

}  // namespace
