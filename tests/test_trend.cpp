// History and trends (hpcnn-summary --trend N, src/analysis/trend.cpp): the robust
// statistics on known values; the detector's rates on many synthetic histories with noise of this
// machine's size (an injected step and a slow drift caught, pure noise quiet); and end to end a
// synthetic history of result files written by the project's writer, in which --trend flags
// exactly the stepped and the drifting point, in the table, the exit status and the JUnit file,
// and draws the trend plot.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "base/errors.hpp"
#include "analysis/report.hpp"
#include "results/result_file.hpp"
#include "base/median.hpp"
#include "analysis/trend.hpp"

namespace fs = std::filesystem;
using namespace hpcnn;

namespace {

// Run-to-run noise of a shared 2-core machine: about 30% between two runs, i.e. a normal
// multiplicative noise of 12% per run (two runs then differ by more than 30% one time in ten).
constexpr double kNoise = 0.12;

// A standard normal number from the generator (Box-Muller on its raw 32-bit output, so the
// series are the same with every standard library).
double normal(std::mt19937& gen) {
  const double u1 = (gen() + 0.5) / 4294967296.0, u2 = (gen() + 0.5) / 4294967296.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

enum class Shape { Noise, Step, Drift };

// Throughput of night i of `nights`: 1000 images/s with noise; Step: the last 3 nights at half
// (a node that lost half its cores); Drift: 2% less every night from night 10 on (38% by night 29).
double throughput(Shape shape, int i, int nights, std::mt19937& gen) {
  double level = 1000.0;
  if (shape == Shape::Step && i >= nights - 3) level *= 0.5;
  if (shape == Shape::Drift && i >= 10) level *= 1.0 - 0.02 * (i - 9);
  return level * std::max(0.3, 1.0 + kNoise * normal(gen));
}

Record point(const std::string& model, double img_per_s) {
  Record r;
  r.set("suite", "hpcnn-train");
  r.set("model", model);
  r.set("backend", "dnnl");
  r.set("batch", std::int64_t{32});
  r.set("img_per_s", img_per_s);
  r.set("status", "ok");
  return r;
}

std::string night_time(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-%02d-%02dT02:00:00Z", 1 + i / 28, 1 + i % 28);
  return buf;
}

// The verdict of one synthetic series of `nights` runs, judged with --trend 15 (the drift test then
// takes all 30 runs: with 12% noise a window of 20 runs catches this drift only 3 times in 4).
Verdict judge(Shape shape, std::uint32_t seed, int nights = 30) {
  std::mt19937 gen(seed);
  std::vector<TrendRun> runs;
  for (int i = 0; i < nights; ++i) runs.push_back({night_time(i), {point("m", throughput(shape, i, nights, gen))}});
  TrendSettings s;
  s.window = 15;
  const auto trends = trend_points(runs, {}, s);
  EXPECT_EQ(trends.size(), 1u);

  return trends.empty() ? Verdict::Ok : trends.front().verdict;
}

}  // namespace

TEST(TrendStats, KnownValues) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));  // no median: NaN, never a made-up 0
  // |x - 3| = 2 1 0 1 7 -> MAD 1.
  EXPECT_NEAR(mad_sigma({1, 2, 3, 4, 10}), 1.4826, 1e-12);
  EXPECT_DOUBLE_EQ(theil_sen_slope({1, 3, 5, 7, 100}), 2);  // the outlier does not move it
  // A strictly rising series of 10: S = 45, var = 10*9*25/18 = 125, z = 44 / sqrt(125).
  std::vector<double> up;
  for (int i = 0; i < 10; ++i) up.push_back(i);
  EXPECT_NEAR(mann_kendall_z(up), 44 / std::sqrt(125.0), 1e-12);
  EXPECT_DOUBLE_EQ(mann_kendall_z({5, 5, 5, 5}), 0);
}

TEST(TrendDetector, StatusAndTooShortHistories) {
  TrendSettings s;
  s.window = 10;
  std::vector<TrendRun> runs;
  for (int i = 0; i < 2; ++i) runs.push_back({night_time(i), {point("m", 1000)}});
  auto t = trend_points(runs, {}, s);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].verdict, Verdict::Ok);  // too short to judge: nothing flagged
  EXPECT_FALSE(t[0].nights.back().center);
  for (int i = 2; i < 12; ++i) runs.push_back({night_time(i), {point("m", 1000 + i)}});
  Record bad = point("m", 5000);
  bad.set("status", "failed");
  runs.push_back({night_time(12), {bad}});
  t = trend_points(runs, {}, s);
  EXPECT_EQ(t[0].verdict, Verdict::Status) << t[0].detail;
  // Times decide the order, not the order of the files.
  std::swap(runs.front(), runs.back());
  t = trend_points(runs, {}, s);
  EXPECT_EQ(t[0].nights.back().time, night_time(12));
  EXPECT_EQ(t[0].verdict, Verdict::Status);
}

// Over 400 synthetic histories each: the step and the drift are caught, pure noise stays quiet.
TEST(TrendDetector, CatchesStepAndDriftQuietOnNoise) {
  int noise = 0, step = 0, drift = 0;
  const int n = 400;
  for (int seed = 1; seed <= n; ++seed) {
    noise += is_failure(judge(Shape::Noise, seed));
    step += judge(Shape::Step, seed) == Verdict::Regression;
    drift += judge(Shape::Drift, seed) == Verdict::Regression;
  }
  std::printf("of %d histories with %.0f%% noise: noise flagged %d, step caught %d, drift caught %d\n", n,
              100 * kNoise, noise, step, drift);
  EXPECT_LE(noise, n / 100);
  EXPECT_GE(step, n * 95 / 100);
  EXPECT_GE(drift, n * 95 / 100);
}

namespace {

class TrendFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hpcnn-test-trend-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Runs hpcnn-summary with the arguments; returns the exit status, output in `out`.
  int summary(const std::string& args, std::string& out) {
    const std::string log = dir_ + "/summary.out";
    const std::string cmd = std::string(HPCNN_BUILDDIR) + "/hpcnn-summary " + args + " > " + log + " 2>&1";
    const int st = std::system(cmd.c_str());
    out.clear();
    std::FILE* f = std::fopen(log.c_str(), "r");
    char buf[4096];
    std::size_t k;
    while (f && (k = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, k);
    if (f) std::fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string dir_;
};

// The line of the trend table that holds `model`.
std::string line_of(const std::string& out, const std::string& model) {
  const auto at = out.find("model=" + model + " ");
  if (at == std::string::npos) return {};
  const auto begin = out.rfind('\n', at) + 1;
  return out.substr(begin, out.find('\n', at) - begin);
}

}  // namespace

// 30 nights of result files (one per night, written in shuffled order: times decide), three points:
// stepped, drifting, noise only. --trend 15 flags exactly the first two.
TEST_F(TrendFiles, SyntheticHistoryFlagsStepAndDriftOnly) {
  const int nights = 30;
  std::mt19937 gen(20261124);
  std::vector<int> order;
  for (int i = 0; i < nights; ++i) order.push_back((i * 7) % nights);  // 7 and 30 coprime: a permutation
  std::vector<std::vector<double>> values(nights);
  for (int i = 0; i < nights; ++i)
    for (Shape s : {Shape::Step, Shape::Drift, Shape::Noise}) values[i].push_back(throughput(s, i, nights, gen));
  for (int i : order) {
    ResultWriter w(dir_ + "/history", ResultWriter::Named{"night-" + std::to_string(100 + (i * 13) % 97)});
    w.add_point({point("stepped", values[i][0]), {}, PointStatus::Ok, {}});
    w.add_point({point("drifting", values[i][1]), {}, PointStatus::Ok, {}});
    w.add_point({point("noisy", values[i][2]), {}, PointStatus::Ok, {}});
    Provenance p;
    p.suite = "hpcnn-train";
    p.command_line = "synthetic";
    p.start_time = night_time(i);
    w.commit(p);
  }
  std::string out;
  const std::string xml = dir_ + "/trend.xml";
  ASSERT_EQ(summary("--trend 15 --junit " + xml + " " + dir_ + "/history", out), 1) << out;
  std::printf("%s", out.c_str());
  EXPECT_NE(line_of(out, "stepped").find("REGRESSION step"), std::string::npos) << out;
  EXPECT_NE(line_of(out, "drifting").find("REGRESSION"), std::string::npos) << out;
  EXPECT_NE(line_of(out, "drifting").find("drift -"), std::string::npos) << out;
  const std::string noisy = line_of(out, "noisy");
  EXPECT_TRUE(noisy.ends_with(" ok") || noisy.ends_with(" faster")) << out;
  EXPECT_NE(out.find("trend: 3 points and metrics, 2 failures"), std::string::npos) << out;
  // The stepped point's latest night is flagged (the window still holds the old level).
  EXPECT_NE(line_of(out, "stepped").find(night_time(nights - 1).substr(0, 10)), std::string::npos) << out;
  // JUnit: two failures, both REGRESSION.
  ASSERT_EQ(std::system(("grep -c '<failure type=\"REGRESSION\"' " + xml + " > " + dir_ + "/n.txt").c_str()), 0);
  std::FILE* f = std::fopen((dir_ + "/n.txt").c_str(), "r");
  ASSERT_NE(f, nullptr);
  char line[32] = {};
  ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);
  std::fclose(f);
  EXPECT_EQ(std::string(line), "2\n");
  // CSV: one header and one line per point, numbers plain.
  ASSERT_EQ(summary("--trend 15 --format csv --where model=noisy " + dir_ + "/history", out), 0) << out;
  EXPECT_TRUE(out.starts_with("settings,metric,runs,latest,median,band,ratio,drift_per_run,drift_z,flagged,verdict\n")) << out;
  EXPECT_NE(out.find(",img_per_s,30,"), std::string::npos) << out;
  // The plot: metric over time, band, flagged nights.
  if (std::system("command -v gnuplot > /dev/null 2>&1") == 0) {
    EXPECT_EQ(summary("--trend 15 --plot " + dir_ + "/trend.svg " + dir_ + "/history", out), 1) << out;
    ASSERT_TRUE(fs::exists(dir_ + "/trend.svg")) << out;
    EXPECT_GT(fs::file_size(dir_ + "/trend.svg"), 5000u);
  }
  // Bad usage: exit 2 with one line.
  EXPECT_EQ(summary("--trend 2 " + dir_ + "/history", out), 2) << out;
  EXPECT_NE(out.find("--trend"), std::string::npos) << out;
  EXPECT_EQ(summary("--trend 10 --compare " + dir_ + "/history " + dir_ + "/history", out), 2) << out;
}

TEST(TrendPlot, ScriptHasBandAndFlags) {
  std::vector<TrendRun> runs;
  for (int i = 0; i < 12; ++i) runs.push_back({night_time(i), {point("m", i < 10 ? 1000 : 400)}});
  TrendSettings s;
  s.window = 10;
  const auto trends = trend_points(runs, {}, s);
  const std::string script = trend_gnuplot_script(trends, "t.png");
  EXPECT_NE(script.find("filledcurves"), std::string::npos);
  EXPECT_NE(script.find("'flagged'"), std::string::npos);
  EXPECT_NE(script.find("REGRESSION step"), std::string::npos);
  EXPECT_NE(script.find(" 400\n"), std::string::npos);  // the flagged value in the flagged column
  EXPECT_THROW(trend_gnuplot_script({}, "t.png"), RuntimeError);
}

// Eight runs of one day, two points: every run drawn at a place of its own with its start time as
// the tick; the settings both points share head the page once, each panel names its own.
TEST(TrendPlot, EveryRunOfOneDayDrawnAndTitlesThatFit) {
  std::vector<TrendRun> runs;
  for (int i = 0; i < 8; ++i) {
    char time[32];
    std::snprintf(time, sizeof time, "2026-11-25T%02d:%02d:07Z", 1 + i / 3, 10 * (i % 3));
    runs.push_back({time, {point("lenet5", 1000 + i), point("resnet18", 100 + i)}});
  }
  TrendSettings s;
  s.window = 4;
  const auto trends = trend_points(runs, {}, s);
  ASSERT_EQ(trends.size(), 2u);
  const std::string script = trend_gnuplot_script(trends, "t.svg");
  for (int run = 1; run <= 8; ++run)
    EXPECT_NE(script.find("\n" + std::to_string(run) + " " + std::to_string(1000 + run - 1) + " "), std::string::npos)
        << "run " << run << " not drawn:\n" << script;
  EXPECT_NE(script.find("set xtics (\"11-25 01:00\" 1, \"11-25 01:10\" 2, \"11-25 01:20\" 3, \"11-25 02:00\" 4"),
            std::string::npos) << script;
  EXPECT_NE(script.find("Every point: suite=hpcnn-train"), std::string::npos) << script;
  EXPECT_NE(script.find("backend=dnnl batch=32"), std::string::npos) << script;
  EXPECT_NE(script.find("set title \"model=lenet5 ["), std::string::npos) << script;
  EXPECT_NE(script.find("set title \"model=resnet18 ["), std::string::npos) << script;
  // Every line of the page's heading fits its width.
  const std::size_t from = script.find("set multiplot"), to = script.find(" noenhanced", from);
  ASSERT_NE(to, std::string::npos) << script;
  std::string heading = script.substr(from, to - from);
  for (std::size_t at; (at = heading.find("\\n")) != std::string::npos;) {
    EXPECT_LE(at, 140u) << heading.substr(0, at);
    heading.erase(0, at + 2);
  }
  EXPECT_LE(heading.size(), 140u) << heading;
  // Runs of one minute: the ticks say the seconds.
  std::vector<TrendRun> quick;
  for (int i = 0; i < 4; ++i) quick.push_back({"2026-11-25T01:00:0" + std::to_string(i) + "Z", {point("lenet5", 1000)}});
  const std::string seconds = trend_gnuplot_script(trend_points(quick, {}, s), "t.svg");
  EXPECT_NE(seconds.find("set xtics (\"11-25 01:00:00\" 1, \"11-25 01:00:01\" 2"), std::string::npos) << seconds;
}
