// The statistics of acceptance verdicts (analysis/significance.hpp) and of references made of
// several runs (analysis/reference_runs.hpp): the t distribution against tabled values, Holm's
// adjustment, the run-level test, its false-alarm and detection rates on simulated nights, the
// verdicts of --compare with several runs (REGRESSION, UNSTABLE, ok), and the checks that refuse
// a reference mixing builds or machines or lacking runs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "analysis/reference_runs.hpp"
#include "analysis/significance.hpp"
#include "analysis/verdict.hpp"

using namespace hpcnn;

namespace {

Record point(const std::string& model, double img_per_s, std::int64_t iters = 100) {
  Record r;
  r.set("suite", "hpcnn-train");
  r.set("model", model);
  r.set("backend", "dnnl");
  r.set("batch", std::int64_t{32});
  r.set("iters", iters);
  r.set("img_per_s", img_per_s);
  r.set("iter_median_s", 32.0 / img_per_s);
  r.set("status", "ok");
  return r;
}

std::vector<Record> runs_of(const std::string& model, const std::vector<double>& figures, std::int64_t iters = 100) {
  std::vector<Record> rows;
  for (double x : figures) rows.push_back(point(model, x, iters));
  return rows;
}

}  // namespace

TEST(Significance, StudentTMatchesTables) {
  // Two-sided 95% critical values: the upper tail beyond them is 2.5%.
  EXPECT_NEAR(student_t_upper_tail(12.706, 1), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(2.776, 4), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(2.228, 10), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(1.960, 1e7), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(3.169, 10), 0.005, 1e-4);
  EXPECT_DOUBLE_EQ(student_t_upper_tail(0, 5), 0.5);
  EXPECT_NEAR(student_t_upper_tail(-2.776, 4), 0.975, 1e-4);
  EXPECT_NEAR(student_t_quantile_upper(0.025, 4), 2.776, 1e-3);
  EXPECT_NEAR(student_t_quantile_upper(0.005, 10), 3.169, 1e-3);
  EXPECT_NEAR(student_t_quantile_upper(0.975, 4), -2.776, 1e-3);
  EXPECT_NEAR(incomplete_beta(0.5, 2, 3), 0.6875, 1e-12);  // 11/16
  EXPECT_NEAR(incomplete_beta(0.3, 1, 1), 0.3, 1e-12);      // the uniform distribution
}

TEST(Significance, HolmAdjustment) {
  const std::vector<double> adjusted = holm_adjusted({0.01, 0.04, 0.03, 0.005});
  // Sorted 0.005 x4, 0.01 x3, 0.03 x2, 0.04 x1, each at least the one before.
  ASSERT_EQ(adjusted.size(), 4u);
  EXPECT_NEAR(adjusted[0], 0.03, 1e-12);
  EXPECT_NEAR(adjusted[1], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[2], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[3], 0.02, 1e-12);
  EXPECT_EQ(holm_adjusted({0.9, 0.8})[0], 1.0);  // never above 1
  EXPECT_TRUE(holm_adjusted({}).empty());
}

TEST(Significance, RunComparison) {
  const std::vector<double> ref = {100, 102, 98, 101, 99};
  auto c = compare_runs(ref, {80}, true);
  ASSERT_TRUE(c);
  EXPECT_NEAR(c->ratio, 0.8, 0.002);
  EXPECT_EQ(c->reference_runs, 5u);
  EXPECT_EQ(c->df, 4);
  EXPECT_LT(c->p_worse, 1e-3);
  EXPECT_GT(c->p_better, 0.99);
  EXPECT_LT(c->ratio_high, 0.9);
  EXPECT_GT(c->ratio_low, 0.7);
  // Inside the noise: not significant.
  c = compare_runs(ref, {99}, true);
  EXPECT_GT(c->p_worse, 0.2);
  EXPECT_LT(c->ratio_low, 1.0);
  EXPECT_GT(c->ratio_high, 0.99);
  // Times: higher is worse.
  c = compare_runs({1.0, 1.02, 0.98, 1.01}, {1.3}, false);
  EXPECT_LT(c->p_worse, 1e-3);
  // The smallest detectable change grows with the spread.
  const auto narrow = compare_runs(ref, {100}, true)->detectable_change(0.01);
  const auto wide = compare_runs({100, 120, 80, 110, 90}, {100}, true)->detectable_change(0.01);
  ASSERT_TRUE(narrow && wide);
  EXPECT_GT(*wide, 4 * *narrow);
  // A rate's detectable change is a drop: 1 - exp(-(t_alpha + t_0.2) se), smaller than the rise
  // exp(z) - 1 a time has at the same distance.
  const auto drop = compare_runs(ref, {100}, true), rise = compare_runs(ref, {100}, false);
  const double z = (student_t_quantile_upper(0.01, drop->df) + student_t_quantile_upper(0.2, drop->df)) * drop->standard_error;
  EXPECT_NEAR(*drop->detectable_change(0.01), -std::expm1(-z), 1e-12);
  EXPECT_NEAR(*rise->detectable_change(0.01), std::expm1(z), 1e-12);
  // One run each side: no spread, no test.
  c = compare_runs({100}, {90}, true);
  EXPECT_FALSE(c->has_spread());
  EXPECT_FALSE(c->detectable_change(0.05));
  // Identical runs: any change is real (a deterministic figure), none is none.
  c = compare_runs({0.9, 0.9, 0.9}, {0.85}, true);
  EXPECT_EQ(c->p_worse, 0.0);
  c = compare_runs({0.9, 0.9, 0.9}, {0.9}, true);
  EXPECT_EQ(c->p_worse, 1.0);
  EXPECT_FALSE(compare_runs({}, {1}, true));
  EXPECT_FALSE(compare_runs({-1, 0}, {1}, true));  // no positive figure
}

// Simulated nights: 12 points, each a log-normal figure with 2% run-to-run spread; the reference
// has 5 runs of every point. An unchanged system must fail at most about alpha of its nights; a
// 25% slowdown of one point (a rate 20% lower) must be caught nearly always (the t test's power is
// 99.6% there; at 4% spread it would be 62%: docs/ACCEPTANCE.md's table).
TEST(Significance, FalseAlarmsAndDetectionOnSimulatedNights) {
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> noise(0.0, 0.02);
  const int points = 12, reference_runs = 5, nights = 2000;
  auto night_fails = [&](double slowdown) {
    std::vector<Record> ref, now;
    for (int p = 0; p < points; ++p) {
      const std::string model = "m" + std::to_string(p);
      for (int k = 0; k < reference_runs; ++k) ref.push_back(point(model, 1000 * std::exp(noise(rng))));
      now.push_back(point(model, 1000 * std::exp(noise(rng)) / (p == 0 ? 1 + slowdown : 1.0)));
    }
    for (const PointVerdict& v : compare_points(ref, now, {}, Tolerances{}))
      if (is_failure(v.verdict)) return true;
    return false;
  };
  int false_alarms = 0, caught = 0;
  for (int n = 0; n < nights; ++n) false_alarms += night_fails(0.0);
  for (int n = 0; n < nights; ++n) caught += night_fails(0.25);
  EXPECT_LE(false_alarms, nights * 0.05 * 1.25) << false_alarms << " of " << nights << " unchanged nights failed";
  EXPECT_GE(caught, nights * 0.95) << caught << " of " << nights << " slowed nights caught";
}

TEST(Verdict, SeveralRunsAreTested) {
  const std::vector<Record> ref = runs_of("lenet5", {1000, 1020, 980, 1010, 990});
  // 20% lower, far beyond the spread: a regression, significant and beyond the floor.
  auto v = compare_points(ref, runs_of("lenet5", {800}), {}, Tolerances{});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::Regression) << v[0].message();
  ASSERT_TRUE(v[0].runs);
  EXPECT_NEAR(*v[0].ratio(), 0.8, 0.002);
  EXPECT_NE(v[0].why.find("significant"), std::string::npos) << v[0].why;
  EXPECT_LT(v[0].p_adjusted, 0.05);
  EXPECT_NE(v[0].message().find("["), std::string::npos) << "the ratio's interval: " << v[0].message();
  // 3% lower: significant perhaps, but inside the 5% floor.
  v = compare_points(ref, runs_of("lenet5", {970}), {}, Tolerances{});
  EXPECT_EQ(v[0].verdict, Verdict::Ok) << v[0].message();
  // 8% lower with a 1% spread: significant and beyond the floor; with a wider floor, ok.
  const std::vector<Record> tight = runs_of("lenet5", {1000, 1010, 990, 1005, 995});
  EXPECT_EQ(compare_points(tight, runs_of("lenet5", {920}), {}, Tolerances{})[0].verdict, Verdict::Regression);
  Tolerances wide_floor;
  wide_floor.floor = 0.1;
  EXPECT_EQ(compare_points(tight, runs_of("lenet5", {920}), {}, wide_floor)[0].verdict, Verdict::Ok);
  // Faster beyond the noise.
  EXPECT_EQ(compare_points(tight, runs_of("lenet5", {1200}), {}, Tolerances{})[0].verdict, Verdict::Faster);
}

TEST(Verdict, WideSpreadIsUnstableUnlessTheChangeIsHuge) {
  // Runs 30% apart: no change below about 100% can be told from the noise.
  const std::vector<Record> ref = runs_of("lenet5", {1000, 1300, 700, 1200, 800}, 100);
  auto v = compare_points(ref, runs_of("lenet5", {900}), {}, Tolerances{});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::Unstable) << v[0].message();
  EXPECT_FALSE(is_failure(v[0].verdict));
  EXPECT_NE(v[0].why.find("timed iterations"), std::string::npos) << v[0].why;
  ASSERT_TRUE(v[0].detectable);
  EXPECT_GT(*v[0].detectable, 0.25);
  // A collapse is significant even against that spread.
  v = compare_points(ref, runs_of("lenet5", {50}), {}, Tolerances{});
  EXPECT_EQ(v[0].verdict, Verdict::Regression) << v[0].message();
  // The limit is a setting.
  Tolerances lenient;
  lenient.unstable_above = 10.0;
  EXPECT_EQ(compare_points(ref, runs_of("lenet5", {900}), {}, lenient)[0].verdict, Verdict::Ok);
}

TEST(Verdict, HolmAcrossPoints) {
  // Two points each 6% lower with p about 0.02: one test alone would flag them at 5%, but over
  // 40 points they are what chance gives.
  std::vector<Record> ref, now;
  for (int p = 0; p < 40; ++p) {
    const std::string m = "m" + std::to_string(p);
    for (double x : {1000.0, 1030.0, 970.0, 1015.0, 985.0}) ref.push_back(point(m, x));
    now.push_back(point(m, p < 2 ? 940 : 1000));
  }
  int regressions = 0;
  for (const PointVerdict& v : compare_points(ref, now, {}, Tolerances{})) {
    regressions += v.verdict == Verdict::Regression;
    if (v.settings.find("model=m0 ") != std::string::npos) {
      ASSERT_TRUE(v.runs);
      EXPECT_LT(v.runs->p_worse, 0.05);
      EXPECT_GT(v.p_adjusted, 0.05);
    }
  }
  EXPECT_EQ(regressions, 0);
}

TEST(Verdict, IterationsToDetect) {
  // The standard error shrinks as 1/sqrt(iterations): half the detectable change takes 4x the iterations.
  EXPECT_NEAR(iterations_to_detect(100, std::expm1(0.4), std::expm1(0.2)), 400, 1e-9);
  EXPECT_EQ(iterations_to_detect(100, 0.1, 0.25), 100);  // already below the limit
  // A rate's changes are drops: the same log distances as drops 1 - exp(-z).
  EXPECT_NEAR(iterations_to_detect(100, -std::expm1(-0.4), -std::expm1(-0.2), true), 400, 1e-9);
}

TEST(ReferenceRuns, OneBuildOneMachine) {
  ResultRun a, b;
  a.path = "ref/run-1/x.h5", b.path = "ref/run-2/x.h5";
  a.provenance.hpcnn_version = b.provenance.hpcnn_version = "0.1.0";
  a.provenance.libraries = {{"MPI", "Open MPI v4.1.4"}, {"oneDNN", "3.2.0"}, {"oneDNN_isa", "avx2"}};
  b.provenance.libraries = {{"MPI", "Open MPI v4.1.4"}, {"oneDNN_isa", "avx512_core"}};  // fewer libraries: fine
  a.provenance.machine = b.provenance.machine = "AMD EPYC (avx2), 2 CPUs";
  EXPECT_NO_THROW(check_one_origin({&a, &b}, "the reference ref"));
  b.provenance.libraries.push_back({"oneDNN", "2.6.3"});
  try {
    check_one_origin({&a, &b}, "the reference ref");
    FAIL() << "two oneDNN versions accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes builds"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("oneDNN 3.2.0 vs 2.6.3"), std::string::npos) << e.what();
  }
  b.provenance.libraries.pop_back();
  b.provenance.machine = "Intel Xeon (avx512), 2 CPUs";
  try {
    check_one_origin({&a, &b}, "the reference ref");
    FAIL() << "two machines accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes machines"), std::string::npos) << e.what();
  }
  b.provenance.machine.clear();  // an older file says nothing about its machine
  EXPECT_NO_THROW(check_one_origin({&a, &b}, "the reference ref"));
  b.provenance.configure_options = "--without-dnnl";
  EXPECT_THROW(check_one_origin({&a, &b}, "the reference ref"), UsageError);
}

TEST(ReferenceRuns, RunCounts) {
  std::vector<Record> rows = runs_of("lenet5", {1, 2, 3});
  for (const Record& r : runs_of("resnet18", {1, 2})) rows.push_back(r);
  EXPECT_NO_THROW(check_run_counts(rows, 2, false, "ref"));
  try {
    check_run_counts(rows, 3, false, "ref");
    FAIL() << "2 runs accepted where 3 are asked for";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet18"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fewer than the 3"), std::string::npos) << e.what();
  }
  try {
    check_run_counts(rows, 1, true, "runs");
    FAIL() << "a point missing from a run accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is in 2 of its 3 runs"), std::string::npos) << e.what();
  }
}

TEST(ReferenceRuns, Stability) {
  std::vector<Record> rows = runs_of("lenet5", {1000, 1010, 990, 1005, 995}, 200);
  for (const Record& r : runs_of("resnet18", {100, 140, 70, 120, 80}, 50)) rows.push_back(r);
  const std::vector<PointStability> s = point_stability(rows, {}, Tolerances{});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].runs, 5u);
  EXPECT_FALSE(s[0].unstable);
  ASSERT_TRUE(s[0].spread && s[0].detectable);
  EXPECT_LT(*s[0].detectable, 0.1);
  EXPECT_TRUE(s[1].unstable);
  ASSERT_TRUE(s[1].stable_iters);
  EXPECT_GT(*s[1].stable_iters, 50);
  EXPECT_FALSE(s[1].stable_runs) << "a spread of about 30% cannot detect 25% with any number of runs";
}

// The detectable change is caught with 80% power: runs drawn with a lognormal spread and a drop of
// exactly that size are called significant about 80% of the time (at the cut-off alone: 50%).
TEST(Significance, DetectableChangeHasEightyPercentPower) {
  std::mt19937_64 gen(11);
  std::normal_distribution<double> noise(0.0, 0.05);
  const double alpha = 0.01;
  int caught = 0, trials = 4000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> ref;
    for (int k = 0; k < 8; ++k) ref.push_back(100 * std::exp(noise(gen)));
    // The detectable drop for this reference's spread (as a comparison would report it), applied.
    const double d = *compare_runs(ref, {100}, true)->detectable_change(alpha);
    const auto c = compare_runs(ref, {100 * (1 - d) * std::exp(noise(gen))}, true);
    caught += c->p_worse < alpha;
  }
  EXPECT_NEAR(double(caught) / trials, kPower, 0.04);
}

TEST(ReferenceRuns, RunsThatWouldSteadyAPoint) {
  std::vector<Record> rows = runs_of("lenet5", {1000, 1010, 990, 1005, 995}, 200);
  for (const Record& r : runs_of("vgg11", {100, 112, 90, 106, 94}, 50)) rows.push_back(r);
  const std::vector<PointStability> s = point_stability(rows, {}, Tolerances{});
  ASSERT_EQ(s.size(), 2u);
  ASSERT_TRUE(s[1].unstable && s[1].spread);
  // More runs of the same spread would steady it: the count found detects 25% and one run fewer does not.
  ASSERT_TRUE(s[1].stable_runs);
  const double alpha = Tolerances{}.alpha / 2, sd = std::log1p(*s[1].spread);
  EXPECT_GT(*s[1].stable_runs, 5u);
  EXPECT_EQ(runs_to_detect(sd, alpha, 0.25), s[1].stable_runs);
  const double k = static_cast<double>(*s[1].stable_runs);
  // With 80% power, as a rate's drop: (t_alpha + t_0.2) s sqrt(1 + 1/K) at most -ln(0.75).
  auto drop = [&](double runs) {
    const double t = student_t_quantile_upper(alpha, runs - 1) + student_t_quantile_upper(0.2, runs - 1);
    return -std::expm1(-t * sd * std::sqrt(1 + 1 / runs));
  };
  EXPECT_LE(drop(k), 0.25);
  EXPECT_GT(drop(k - 1), 0.25);
  EXPECT_FALSE(runs_to_detect(0.5, alpha, 0.25)) << "a 65% spread cannot detect 25% with any number of runs";
  const std::string table = stability_table(s);
  EXPECT_NE(table.find("UNSTABLE"), std::string::npos) << table;
  EXPECT_NE(table.find("stable"), std::string::npos) << table;
}
