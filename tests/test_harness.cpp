// Option parsing, sweeps and statistics of the shared harness.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <random>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <vector>

#include "base/activity.hpp"
#include "engine/backend.hpp"
#include "kernels/registry.hpp"
#include "base/errors.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/point_error.hpp"
#include "harness/synthetic_data.hpp"
#include "harness/training_loop.hpp"
#include "base/registry.hpp"
#include "suites/epoch_driver.hpp"
#include "suites/model_suite.hpp"
#include "harness/options.hpp"
#include "harness/stats.hpp"
#include "harness/sweep.hpp"

using namespace hpcnn;

namespace {
Options parse(const std::vector<const char*>& args, Mode mode = Mode::Train) {
  static std::vector<OptionSpec> specs;
  specs = model_suite_options(mode);
  std::vector<const char*> argv = {"hpcnn-train"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_options(specs, static_cast<int>(argv.size()), argv.data());
}

std::string usage_error(const std::vector<const char*>& args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(Options, DefaultsListsAndInlineValues) {
  const Options o = parse({"--batch", "32,64", "--threads=1,default", "--iters", "5"});
  EXPECT_EQ(o.values("batch"), (std::vector<std::string>{"32", "64"}));
  EXPECT_EQ(o.values("threads"), (std::vector<std::string>{"1", "default"}));
  EXPECT_EQ(o.integer("iters"), 5);
  EXPECT_EQ(o.integer("warmup"), 10);   // default
  EXPECT_EQ(o.str("backend"), "dnnl");  // default
  EXPECT_FALSE(o.flag("quiet"));
}

TEST(Options, BadValuesNameTheOptionAndTheValue) {
  EXPECT_NE(usage_error({"--batch", "0"}).find("'0'"), std::string::npos);
  EXPECT_NE(usage_error({"--batch", "0"}).find("--batch"), std::string::npos);
  EXPECT_NE(usage_error({"--threads", "-2"}).find("'-2'"), std::string::npos);
  EXPECT_NE(usage_error({"--batch", "32,x"}).find("'x'"), std::string::npos);
  EXPECT_NE(usage_error({"--batch", "32,,64"}).find("empty element"), std::string::npos);
  EXPECT_NE(usage_error({"--lr", "nan"}).find("'nan'"), std::string::npos);
  EXPECT_NE(usage_error({"--dataset", "svhn"}).find("'svhn'"), std::string::npos);
  EXPECT_NE(usage_error({"--frobnicate"}).find("'--frobnicate'"), std::string::npos);
  EXPECT_NE(usage_error({"--batch"}).find("needs a value"), std::string::npos);
  EXPECT_NE(usage_error({"--iters", "1", "--iters", "2"}).find("twice"), std::string::npos);
  EXPECT_NE(usage_error({"stray"}).find("'stray'"), std::string::npos);
  EXPECT_NE(usage_error({"--quiet=yes"}).find("takes no value"), std::string::npos);
}

TEST(Options, EffectiveSettingsEchoEveryOptionWithAValue) {
  const Options o = parse({"--model", "resnet18", "--batch", "8,16"});
  bool saw_batch = false, saw_iters = false;
  for (const auto& [k, v] : o.effective()) {
    if (k == "batch") saw_batch = v == "8,16";
    if (k == "iters") saw_iters = v == "100";
  }
  EXPECT_TRUE(saw_batch);
  EXPECT_TRUE(saw_iters);
}

TEST(Options, HelpListsEveryOption) {
  const auto specs = model_suite_options(Mode::Infer);
  const std::string help = help_text("hpcnn-infer", "summary", specs);
  for (const OptionSpec& s : specs) EXPECT_NE(help.find("--" + std::string(s.name)), std::string::npos) << s.name;
}

TEST(Sweep, CartesianProductInTableOrder) {
  const auto specs = model_suite_options(Mode::Train);
  const Options o = parse({"--model", "lenet5,resnet18", "--batch", "1,2,3", "--threads", "1,2"});
  const auto points = sweep_points(o, specs);
  ASSERT_EQ(points.size(), 12u);
  // model varies slowest (first in the table), threads fastest of these three.
  EXPECT_EQ(points[0].str("model"), "lenet5");
  EXPECT_EQ(points[0].integer("batch"), 1);
  EXPECT_EQ(points[1].integer("threads"), 2);
  EXPECT_EQ(points[2].integer("batch"), 2);
  EXPECT_EQ(points[6].str("model"), "resnet18");
  for (const auto& p : points) EXPECT_EQ(p.str("dataset"), "cifar10");
}

// Seen while writing fuzz/options_target.cpp: lists whose product is in the millions built every point
// (gigabytes) before the first ran. Now one usage error naming the lists, at the limit exactly.
TEST(Sweep, MoreThanTheLimitOfPointsIsAUsageError) {
  const auto specs = model_suite_options(Mode::Train);
  auto numbers = [](int n) {
    std::string s;
    for (int i = 1; i <= n; ++i) {
      if (i > 1) s += ',';
      s += std::to_string(i);
    }
    return s;
  };
  const std::string batches = numbers(1000), threads = numbers(100), seeds_over = numbers(101);
  const Options at_limit = parse({"--batch", batches.c_str(), "--threads", threads.c_str()});
  EXPECT_NO_THROW(check_sweep_size(at_limit, specs));
  EXPECT_EQ(sweep_points(at_limit, specs).size(), kMaxSweepPoints);
  const Options over = parse({"--batch", batches.c_str(), "--threads", seeds_over.c_str()});
  try {
    sweep_points(over, specs);
    ADD_FAILURE() << "a sweep of 101000 points was built";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("1000 --batch x 101 --threads"), std::string::npos) << e.what();
  }
  // Lists far beyond the limit are refused before their product is formed (it could overflow).
  const std::string big = numbers(70000), most_threads = numbers(4096);
  const Options overflow = parse({"--batch", big.c_str(), "--threads", most_threads.c_str(), "--lr", "0.1,0.2,0.3",
                                  "--model", "lenet5,resnet18"});
  EXPECT_THROW(check_sweep_size(overflow, specs), UsageError);
}

TEST(Stats, MedianPercentilesAndSpread) {
  const Stats s = compute_stats({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stddev, 1.5811388300841898, 1e-12);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);   // numpy.percentile([1..5], 5)
  EXPECT_DOUBLE_EQ(s.p95, 4.8);
  EXPECT_DOUBLE_EQ(compute_stats({1, 2, 3, 4}).median, 2.5);
  EXPECT_EQ(compute_stats({}).count, 0);
}

// ---- the typed point ------------------------------------------------------------------------------

TEST(Stats, OutliersArePausesNotNoise) {
  std::vector<double> noisy;
  for (int i = 0; i < 100; ++i) noisy.push_back(0.010 + 0.004 * ((i * 37) % 11) / 10.0);  // +-20% spread
  EXPECT_EQ(find_outliers(noisy).count, 0);
  std::vector<double> paused = noisy;
  paused[40] = 60.0;  // a rank stopped for a minute
  paused[41] = 0.05;  // 5x the median: descheduled
  const Outliers o = find_outliers(paused);
  EXPECT_EQ(o.count, 2);
  EXPECT_DOUBLE_EQ(o.worst, 60.0);
  // A wide but honest spread (every value within 3x the median) is not flagged.
  EXPECT_EQ(find_outliers({1, 2, 3, 1, 2, 3, 2.9}).count, 0);
  EXPECT_EQ(find_outliers({1, 100}).count, 0);  // too few to have a median to stand out from
}

// The stall share counts only what pauses cost beyond the median pace: a clean but skewed series
// (lognormal, sigma 0.5: 1 - median / mean would read 12%) reads 0, a series whose every fourth
// iteration waited 4 extra median iterations reads that time over the total.
TEST(Stats, StallShareIsThePausesTimeBeyondTheMedianPace) {
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> clean(std::log(0.01), 0.5);
  std::vector<double> skewed;
  for (int i = 0; i < 4000; ++i) skewed.push_back(clean(gen));
  EXPECT_LT(stall_share(skewed), 0.005);
  std::vector<double> stalled;
  for (int i = 0; i < 400; ++i) stalled.push_back(i % 4 == 0 ? 0.05 : 0.01);
  // 100 iterations 0.04 s beyond the median 0.01 s, over a total of 100 * 0.05 + 300 * 0.01 s.
  EXPECT_NEAR(stall_share(stalled), 100 * 0.04 / 8.0, 1e-12);
  EXPECT_NEAR(find_outliers(stalled).excess, 4.0, 1e-12);
  EXPECT_EQ(stall_share({}), 0.0);
  EXPECT_EQ(stall_share({1, 100}), 0.0);
}

TEST(Activity, NestedWaitsNameTheInnermostAndCountTheOutermost) {
  const std::uint64_t before = activity::snapshot().wait_number;
  EXPECT_FALSE(activity::snapshot().waiting);
  {
    const activity::WaitScope exchange("gradient exchange");
    {
      const activity::WaitScope step("allreduce step", 3, 7);
      const activity::WaitScope call("MPI_Waitall", -1, -1, activity::WaitKind::MpiCall);
      const activity::Snapshot s = activity::snapshot();
      EXPECT_TRUE(s.waiting);
      EXPECT_STREQ(s.operation, "allreduce step");
      EXPECT_STREQ(s.call, "MPI_Waitall");
      EXPECT_EQ(s.bucket, 3);
      EXPECT_EQ(s.peer, 7);
    }
    const activity::Snapshot s = activity::snapshot();
    EXPECT_STREQ(s.operation, "gradient exchange");
    EXPECT_STREQ(s.call, "");
    EXPECT_EQ(s.bucket, -1);
    EXPECT_EQ(s.wait_number, before + 1);  // inner scopes are the same wait
  }
  EXPECT_FALSE(activity::snapshot().waiting);
  { const activity::WaitScope again("MPI_Barrier", -1, -1, activity::WaitKind::MpiCall); }
  EXPECT_EQ(activity::snapshot().wait_number, before + 2);
}

TEST(ModelPoint, BuiltOnceFromOptionsAndSweepPoint) {
  const auto specs = model_suite_options(Mode::Train);
  const Options o = parse({"--model", "lenet5,alexnet", "--backend", "reference", "--batch", "8", "--threads", "2",
                           "--act", "tanh", "--fusion", "off", "--lr", "0.5,0.25", "--momentum", "0.7", "--iters", "7",
                           "--warmup", "3", "--seed", "9", "--optimizer", "adam"});
  const auto points = sweep_points(o, specs);
  ASSERT_EQ(points.size(), 4u);
  const ModelPoint a = model_point(PointSettings(o, points[1]), Mode::Train);  // lenet5, lr 0.25
  EXPECT_EQ(a.model, "lenet5");
  EXPECT_EQ(a.backend, "reference");
  EXPECT_EQ(a.batch, 8);
  EXPECT_EQ(a.threads, 2);
  EXPECT_EQ(a.act, Activation::Tanh);
  EXPECT_FALSE(a.fuse_relu);
  EXPECT_EQ(a.iters, 7);
  EXPECT_EQ(a.warmup, 3);
  EXPECT_EQ(a.seed, 9u);
  EXPECT_EQ(a.optimizer.kind, "adam");
  EXPECT_DOUBLE_EQ(a.lr, 0.25);
  EXPECT_FLOAT_EQ(a.optimizer.lr, 0.25f);
  EXPECT_DOUBLE_EQ(a.momentum, 0.7);
  EXPECT_EQ(a.sample.h, 32);  // cifar10
  EXPECT_EQ(a.classes, 10);
  const ModelPoint b = model_point(PointSettings(o, points[2]), Mode::Train);  // alexnet: its native 64x64
  EXPECT_EQ(b.model, "alexnet");
  EXPECT_EQ(b.sample.h, 64);
  EXPECT_DOUBLE_EQ(b.lr, 0.5);
  // Threads "default" is 0 (the library's choice); an inference point has no optimizer settings.
  const Options d = parse({"--threads", "default"}, Mode::Infer);
  const ModelPoint c = model_point(PointSettings(d, sweep_points(d, model_suite_options(Mode::Infer))[0]), Mode::Infer);
  EXPECT_EQ(c.threads, 0);
  EXPECT_EQ(c.mode, Mode::Infer);
  EXPECT_DOUBLE_EQ(c.lr, 0.0);
}

TEST(ModelPoint, OneRuleForPerRankSeeds) {
  EXPECT_EQ(rank_data_seed(1, 0), 1u);
  EXPECT_EQ(rank_data_seed(1, 3), 1u + 3u * 7919u);
  EXPECT_NE(rank_data_seed(5, 1), rank_data_seed(5, 2));
}

TEST(PointStatus, NamesAndErrorsKeepTheirStatus) {
  EXPECT_STREQ(status_name(PointStatus::Ok), "ok");
  EXPECT_STREQ(status_name(PointStatus::Failed), "failed");
  EXPECT_STREQ(status_name(PointStatus::Diverged), "diverged");
  EXPECT_STREQ(status_name(PointStatus::Skipped), "skipped");
  const PointError skipped = PointError::from(StatusError(PointStatus::Skipped, "skipped: no GPU"));
  EXPECT_EQ(skipped.status, PointStatus::Skipped);
  EXPECT_EQ(skipped.reason, "skipped: no GPU");
  // Any other exception is a failure, whatever its text says.
  const PointError failed = PointError::from(RuntimeError("diverged: but not a StatusError"));
  EXPECT_EQ(failed.status, PointStatus::Failed);
  EXPECT_TRUE(PointError{}.none());
}

// ---- the training loop ------------------------------------------------------------------------------

namespace {

// lenet5 on the reference backend, batch 4: small enough for a unit test.
struct LoopFixture {
  LoopFixture()
      : graph(build_model("lenet5", ModelConfig{})),
        backend(make_backend("reference")),
        net(*backend, graph, NetworkOptions{4, Mode::Train, 1}),
        data(Shape{1, 3, 32, 32}, 10, 4, 1),
        optimizer(*backend, net.param_count(), OptimizerSettings{}) {}
  BatchView batch(int k) const { return {data.images(k), data.labels(k), 4}; }
  Graph graph;
  std::unique_ptr<Backend> backend;
  Network net;
  SyntheticData data;
  Optimizer optimizer;
};

// The optimizer, with a judged loss that becomes NaN at one step (1-based), or an error there.
class FaultySync : public LocalUpdate {
 public:
  FaultySync(Optimizer& o, int nan_at, int throw_at) : LocalUpdate(o), nan_at_(nan_at), throw_at_(throw_at) {}
  double wait(Network&, const StepStats& local) override {
    ++step_;
    if (step_ == throw_at_) throw RuntimeError("exchange lost rank 3");
    return step_ == nan_at_ ? std::nan("") : local.loss;
  }
  void update(float* params, Network& net) override {
    ++updates;
    LocalUpdate::update(params, net);
  }
  int updates = 0;

 private:
  int step_ = 0, nan_at_, throw_at_;
};

}  // namespace

TEST(TrainingLoop, WarmupSplitAndPhasesAddUpToTheIteration) {
  LoopFixture f;
  LocalUpdate sync(f.optimizer);
  TrainingLoop loop(*f.backend, {Mode::Train, 2, 3, true, MPI_COMM_NULL}, &sync);
  const std::vector<float> before = f.net.get_params();
  const PointError e = loop.run(f.net, [&](int k) { return f.batch(k); });
  EXPECT_TRUE(e.none()) << e.reason;
  const PhaseSeries& s = loop.series();
  EXPECT_EQ(loop.iterations(), 5);
  EXPECT_EQ(s.warmup.size(), 2u);
  for (const auto* v : {&s.iter, &s.load, &s.forward, &s.backward, &s.comm_wait, &s.update}) EXPECT_EQ(v->size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const double sum = s.load[k] + s.forward[k] + s.backward[k] + s.comm_wait[k] + s.update[k];
    EXPECT_GT(s.forward[k], 0.0);
    EXPECT_GT(s.backward[k], 0.0);
    EXPECT_GT(s.update[k], 0.0);
    EXPECT_LE(sum, s.iter[k]);               // the total is read after the last phase ends
    EXPECT_LT(s.iter[k] - sum, 0.02 * s.iter[k] + 1e-4);  // ... and just after it
  }
  EXPECT_LT(s.phase_gap_max, 0.02);
  EXPECT_NE(f.net.get_params(), before);  // the updates reached the parameters
  EXPECT_TRUE(std::isfinite(loop.last_loss()));
}

TEST(TrainingLoop, InferenceRunsForwardOnly) {
  LoopFixture f;
  TrainingLoop loop(*f.backend, {Mode::Infer, 1, 2, true, MPI_COMM_NULL}, nullptr);
  const std::vector<float> before = f.net.get_params();
  EXPECT_TRUE(loop.run(f.net, [&](int k) { return f.batch(k); }).none());
  const PhaseSeries& s = loop.series();
  ASSERT_EQ(s.iter.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_GT(s.forward[k], 0.0);
    EXPECT_EQ(s.backward[k], 0.0);
    EXPECT_EQ(s.update[k], 0.0);
  }
  EXPECT_EQ(f.net.get_params(), before);
}

TEST(TrainingLoop, DivergenceStopsTheLoopWithItsReason) {
  LoopFixture f;
  FaultySync sync(f.optimizer, 3, -1);
  TrainingLoop loop(*f.backend, {Mode::Train, 1, 5, true, MPI_COMM_NULL}, &sync);
  const PointError e = loop.run(f.net, [&](int k) { return f.batch(k); });
  EXPECT_EQ(e.status, PointStatus::Diverged);
  EXPECT_EQ(e.reason, "diverged: loss nan at iteration 3 (warm-up included)");
  EXPECT_EQ(loop.divergence(), e.reason);
  EXPECT_EQ(loop.iterations(), 3);
  EXPECT_EQ(sync.updates, 2);  // no update with a non-finite loss
  EXPECT_EQ(loop.series().warmup.size(), 1u);
  EXPECT_EQ(loop.series().iter.size(), 1u);
}

TEST(TrainingLoop, DivergenceNotedWhenPartnersNeedEveryStep) {
  LoopFixture f;
  FaultySync sync(f.optimizer, 2, -1);
  TrainingLoop loop(*f.backend, {Mode::Train, 0, 4, false, MPI_COMM_NULL}, &sync);
  EXPECT_TRUE(loop.run(f.net, [&](int k) { return f.batch(k); }).none());
  EXPECT_EQ(loop.divergence(), "diverged: loss nan at iteration 2 (warm-up included)");
  EXPECT_EQ(loop.iterations(), 4);
  EXPECT_EQ(sync.updates, 4);
  EXPECT_EQ(loop.series().iter.size(), 4u);
}

TEST(TrainingLoop, AnErrorEndsTheRunAsAFailureWithoutThrowing) {
  LoopFixture f;
  FaultySync sync(f.optimizer, -1, 2);
  TrainingLoop loop(*f.backend, {Mode::Train, 0, 4, true, MPI_COMM_NULL}, &sync);
  PointError e;
  EXPECT_NO_THROW(e = loop.run(f.net, [&](int k) { return f.batch(k); }));
  EXPECT_EQ(e.status, PointStatus::Failed);
  EXPECT_EQ(e.reason, "exchange lost rank 3");
  EXPECT_EQ(loop.series().iter.size(), 1u);
}

TEST(TrainingLoop, ARankWithoutABatchStillSynchronizesAndUpdatesTheOwner) {
  LoopFixture f;
  Network other(*f.backend, f.graph, NetworkOptions{4, Mode::Train, 1});
  FaultySync sync(f.optimizer, -1, -1);
  TrainingLoop loop(*f.backend, {Mode::Train, 0, 0, true, MPI_COMM_NULL}, &sync);
  const std::vector<float> before = f.net.get_params();
  const StepResult r = loop.step(other, f.batch(0), &f.net);  // `other` computes, f.net owns
  EXPECT_EQ(r.local.images, 4);
  EXPECT_NE(f.net.get_params(), before);
  EXPECT_EQ(other.get_params(), before);
  const StepResult empty = loop.step(f.net, BatchView{}, nullptr);
  EXPECT_EQ(empty.local.images, 0);
  EXPECT_EQ(empty.local.loss, 0.0);
  EXPECT_EQ(sync.updates, 2);
}

// ---- positional and repeatable options (hpcnn-summary's FILE|DIR... and --where) -------------------

namespace {
const std::vector<OptionSpec>& files_specs() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> s = {
        {"where", OptType::String, false, "", "F=V", "filter"},
        {"format", OptType::Choice, false, "text", "NAME", "format", "text|csv"},
        {"files", OptType::String, false, "", "FILE|DIR", "inputs"},
    };
    s[0].repeatable = true;
    s[2].positional = true;
    return s;
  }();
  return specs;
}
Options parse_files(const std::vector<const char*>& args) {
  std::vector<const char*> argv = {"hpcnn-summary"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_options(files_specs(), static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST(Options, PositionalArgumentsAndRepeatableOptions) {
  const Options o = parse_files({"a.h5", "--where", "x=1", "dir", "--where=y=2", "--format", "csv", "--", "--odd"});
  EXPECT_EQ(o.values("files"), (std::vector<std::string>{"a.h5", "dir", "--odd"}));  // after "--": a file
  EXPECT_EQ(o.values("where"), (std::vector<std::string>{"x=1", "y=2"}));
  EXPECT_EQ(o.str("format"), "csv");
  EXPECT_FALSE(parse_files({"--format", "csv"}).has("files"));
  // Not repeatable: still an error; an unknown short option is not a file.
  EXPECT_THROW(parse_files({"--format", "csv", "--format", "text", "f"}), UsageError);
  EXPECT_THROW(parse_files({"-x", "f"}), UsageError);
  EXPECT_THROW(parse_files({"--files", "f"}), UsageError);  // the positional spec is no option
  // Without a positional spec, a bare word is still refused (hpcnn-train stray arguments).
  EXPECT_NE(usage_error({"stray"}).find("'stray'"), std::string::npos);
  const std::string help = help_text("hpcnn-summary", "s", files_specs());
  EXPECT_NE(help.find("usage: hpcnn-summary [options] FILE|DIR..."), std::string::npos);
  EXPECT_NE(help.find("(repeatable)"), std::string::npos);
  EXPECT_EQ(help.find("--files"), std::string::npos);
}

// ---- the registry of backends, SGEMM libraries and exchange schemes -----------------------------------

namespace {
struct Entry {
  std::string name;
  int value = 0;
};
int builtin_calls = 0;
void two_builtins(Registry<Entry>& r) {
  ++builtin_calls;
  r.add({"a", 1});
  r.add({"b", 2});
}
}  // namespace

TEST(Registry, BuiltinsOnceInOrderAndADuplicateIsAProgrammingError) {
  Registry<Entry> r("thing", two_builtins);
  EXPECT_EQ(builtin_calls, 0);  // filled on first use
  ASSERT_EQ(r.all().size(), 2u);
  EXPECT_EQ(r.all()[0].name, "a");
  EXPECT_EQ(r.names(), "a, b");
  EXPECT_EQ(r.find("b")->value, 2);
  EXPECT_EQ(r.find("c"), nullptr);
  r.all();
  EXPECT_EQ(builtin_calls, 1);
  r.add({"c", 3});
  EXPECT_EQ(r.names(), "a, b, c");
  try {
    r.add({"a", 9});
    ADD_FAILURE() << "a duplicate name was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "thing 'a' registered twice");
  }
  EXPECT_EQ(r.find("a")->value, 1);
  // The real registry: every backend is found under its own name, and the reference one is there.
  std::set<std::string> names;
  for (const BackendInfo& b : backends()) {
    names.insert(b.name);
    const BackendInfo* found = backend_registry().find(b.name);
    ASSERT_NE(found, nullptr) << b.name;
    EXPECT_EQ(found->name, b.name);
  }
  EXPECT_EQ(names.size(), backends().size());
  EXPECT_EQ(names.count("reference"), 1u);
}

// A real-data training's checkpoint (suites/epoch_driver.hpp) through its file: every field back
// as written; a checkpoint of the layout before (no "layout" entry, "epoch_batch" for the step) is
// refused in one line naming the file.
TEST(TrainingCheckpoint, EveryFieldThroughTheFile) {
  const std::string file = ::testing::TempDir() + "hpcnn-training-checkpoint-" + std::to_string(getpid()) + ".bin";
  TrainingCheckpoint a;
  a.ranks = 3;
  a.epoch = 2;
  a.epoch_step = 5;
  a.steps = 21;
  a.params = {1.5f, -2.0f};
  a.optimizer = {7, {0.25f, 0.5f}, {}};
  a.series.train_loss = {2.0, 1.0};
  a.series.wall = {3.0, 6.5};
  a.series.step_loss = {2.5, 2.25, 2.0};
  a.buffers = {0.1f, 0.2f, 0.3f};
  a.net_steps = {16, 40, 0, 0};
  a.positions = {1, 2, 3, 4, 5};
  a.phases = {0.5};
  a.file_reads = {10, 4096};
  a.write(file, "hpcnn-train --data x");
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const TrainingCheckpoint b = TrainingCheckpoint::from(Checkpoint::parse(bytes, file, "hpcnn-train --data x"), file);
  EXPECT_EQ(b.ranks, 3);
  EXPECT_EQ(b.epoch, 2);
  EXPECT_EQ(b.epoch_step, 5);
  EXPECT_EQ(b.steps, 21);
  EXPECT_EQ(b.params, a.params);
  EXPECT_EQ(b.optimizer.steps, 7);
  EXPECT_EQ(b.optimizer.first, a.optimizer.first);
  EXPECT_TRUE(b.optimizer.second.empty());
  EXPECT_EQ(b.series.train_loss, a.series.train_loss);
  EXPECT_EQ(b.series.wall, a.series.wall);
  EXPECT_EQ(b.series.step_loss, a.series.step_loss);
  EXPECT_TRUE(b.series.eval_step.empty());
  EXPECT_EQ(b.buffers, a.buffers);
  EXPECT_EQ(b.net_steps, a.net_steps);
  EXPECT_EQ(b.positions, a.positions);
  EXPECT_EQ(b.phases, a.phases);
  EXPECT_EQ(b.file_reads, a.file_reads);
  std::remove(file.c_str());
}

TEST(TrainingCheckpoint, AnOlderLayoutIsRefusedInOneLine) {
  Checkpoint old;
  old.put("epoch", std::int64_t{1});
  old.put("epoch_batch", std::int64_t{3});
  old.put("steps", std::int64_t{11});
  try {
    TrainingCheckpoint::from(old, "run/ckpt-000000.bin");
    FAIL() << "an old checkpoint was read";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("run/ckpt-000000.bin: a checkpoint of another hpcnn (layout 1"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}
