// Option parsing, sweeps and statistics of the shared harness.
#include <gtest/gtest.h>

#include <vector>

#include "engine/errors.hpp"
#include "harness/model_suite.hpp"
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
