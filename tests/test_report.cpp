// hpcnn-summary's reporting: --where/--by, the table presets' row expansion (ops),
// --compare (an injected 10% regression is flagged, an unchanged file passes, a baseline without
// a current run is reported), gnuplot scripts and --plot, end to end through the binary.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/errors.hpp"
#include "analysis/report.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"
#include "analysis/table_presets.hpp"
#include "analysis/verdict.hpp"

namespace fs = std::filesystem;
using namespace hpcnn;

namespace {

Record row(const std::string& model, std::int64_t batch, double img_per_s) {
  Record r;
  r.set("suite", "hpcnn-train");
  r.set("model", model);
  r.set("backend", "reference");
  r.set("batch", batch);
  r.set("img_per_s", img_per_s);
  r.set("iter_median_s", static_cast<double>(batch) / img_per_s);
  r.set("status", "ok");
  r.set("reproducer", "hpcnn-train --batch " + std::to_string(batch));
  return r;
}

class ReportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hpcnn-test-report-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A committed result file under DIR/sub holding the rows; returns its directory.
  std::string write(const std::string& sub, const std::vector<Record>& rows) {
    const std::string d = dir_ + "/" + sub;
    ResultWriter w(d, "hpcnn-train");
    for (const Record& r : rows) w.add_point({r, {}, PointStatus::Ok, {}});
    Provenance p;
    p.command_line = "test";
    w.commit(p);
    return d;
  }
  // Runs hpcnn-summary with the arguments; returns the exit status, output in `out`.
  int summary(const std::string& args, std::string* out = nullptr) {
    const std::string log = dir_ + "/summary.out";
    const std::string cmd = std::string(HPCNN_BUILDDIR) + "/hpcnn-summary " + args + " > " + log + " 2>&1";
    const int st = std::system(cmd.c_str());
    if (out) {
      std::FILE* f = std::fopen(log.c_str(), "r");
      out->clear();
      char buf[4096];
      std::size_t n;
      while (f && (n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
      if (f) std::fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string dir_;
};

}  // namespace

TEST(Report, WhereAndBy) {
  std::vector<Record> rows = {row("resnet18", 64, 10), row("lenet5", 8, 300), row("resnet18", 16, 20)};
  const auto where = parse_where("model=resnet18");
  EXPECT_TRUE(row_matches(rows[0], where));
  EXPECT_FALSE(row_matches(rows[1], where));
  EXPECT_TRUE(row_matches(rows[2], parse_where("batch=16.0,model=resnet18")));  // numbers as numbers
  EXPECT_FALSE(row_matches(rows[2], parse_where("threads=1")));                  // missing field
  EXPECT_THROW(parse_where("nosuchfield=1"), UsageError);
  EXPECT_THROW(parse_where("model"), UsageError);
  sort_rows(rows, {"model", "batch"});
  EXPECT_EQ(rows[0].text("model"), "lenet5");
  EXPECT_EQ(rows[1].text("batch"), "16");  // numerically, not "16" > "64" by accident
  EXPECT_EQ(rows[2].text("batch"), "64");
}

TEST(Report, ToleranceParsing) {
  EXPECT_DOUBLE_EQ(parse_tolerance("5%"), 0.05);
  EXPECT_DOUBLE_EQ(parse_tolerance("0.1"), 0.1);
  EXPECT_THROW(parse_tolerance("five"), UsageError);
  EXPECT_THROW(parse_tolerance("-1%"), UsageError);
}

// The verdicts of the rows, as "settings metric VERDICT" lines in order.
std::vector<Verdict> verdicts_of(const std::vector<PointVerdict>& v) {
  std::vector<Verdict> out;
  for (const PointVerdict& p : v) out.push_back(p.verdict);
  return out;
}

TEST(Verdict, FlagsRegressionsOnly) {
  const std::vector<Record> base = {row("lenet5", 8, 100), row("lenet5", 16, 200)};
  Tolerances tol;  // floor 5%, no spread in these rows: the floor is the band
  // Unchanged: nothing flagged.
  auto v = compare_points(base, base, {}, tol);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(verdicts_of(v), (std::vector<Verdict>{Verdict::Ok, Verdict::Ok}));
  EXPECT_EQ(v[0].band_source, "floor (1 run)");
  // 10% slower at batch 16: flagged with both figures; 4% slower at batch 8: inside the band.
  v = compare_points(base, {row("lenet5", 8, 96), row("lenet5", 16, 180)}, {}, tol);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(verdicts_of(v), (std::vector<Verdict>{Verdict::Ok, Verdict::Regression}));
  EXPECT_NE(v[1].settings.find("batch=16"), std::string::npos) << v[1].settings;
  EXPECT_DOUBLE_EQ(*v[1].reference, 200);
  EXPECT_DOUBLE_EQ(*v[1].now, 180);
  EXPECT_DOUBLE_EQ(*v[1].ratio(), 0.9);
  EXPECT_NE(v[1].message().find("180"), std::string::npos) << v[1].message();
  // Times: lower is better.
  v = compare_points(base, {row("lenet5", 8, 90), row("lenet5", 16, 200)}, {"iter_median_s"}, tol);
  EXPECT_EQ(verdicts_of(v), (std::vector<Verdict>{Verdict::Regression, Verdict::Ok}));
  // Faster is never a regression.
  v = compare_points(base, {row("lenet5", 8, 150), row("lenet5", 16, 300)}, {}, tol);
  EXPECT_EQ(verdicts_of(v), (std::vector<Verdict>{Verdict::Faster, Verdict::Faster}));
  // A point missing on either side is a failure of its own.
  v = compare_points(base, {row("lenet5", 8, 100), row("resnet18", 8, 5)}, {}, tol);
  EXPECT_EQ(verdicts_of(v), (std::vector<Verdict>{Verdict::Ok, Verdict::MissingNow, Verdict::MissingReference}));
  EXPECT_NE(v[1].settings.find("batch=16"), std::string::npos);
  EXPECT_NE(v[2].settings.find("resnet18"), std::string::npos);
  // GPU precision is a key setting: a bf16 reference is not compared with an fp32 run.
  auto with_precision = [](Record r, const char* p) {
    r.set("precision", std::string(p));
    return r;
  };
  v = compare_points({with_precision(row("resnet50", 64, 3000), "bf16")}, {with_precision(row("resnet50", 64, 1000), "fp32")},
                     {}, tol);
  EXPECT_EQ(verdicts_of(v), (std::vector<Verdict>{Verdict::MissingNow, Verdict::MissingReference}));
  EXPECT_NE(v[0].settings.find("precision=bf16"), std::string::npos) << v[0].settings;
}

// The settings every row shares are said once; a row keeps only what sets it apart, in its order.
TEST(Report, SettingsSharedByEveryRowOnce) {
  const SettingsSplit s = split_settings({"suite=hpcnn-train model=lenet5 batch=8 data=/a b",
                                          "suite=hpcnn-train model=resnet18 batch=8 data=/a b",
                                          "suite=hpcnn-train model=lenet5 batch=16 data=/a b"});
  EXPECT_EQ(s.common, "suite=hpcnn-train data=/a b");  // a value with a blank stays whole
  EXPECT_EQ(s.own, (std::vector<std::string>{"model=lenet5 batch=8", "model=resnet18 batch=8", "model=lenet5 batch=16"}));
  // A pair missing from one row is not common; a row of common pairs only reads "-".
  const SettingsSplit t = split_settings({"suite=a x=1", "suite=a", "suite=a x=2"});
  EXPECT_EQ(t.common, "suite=a");
  EXPECT_EQ(t.own, (std::vector<std::string>{"x=1", "-", "x=2"}));
  // One row: nothing is said to be common.
  EXPECT_EQ(split_settings({"suite=a x=1"}).common, "");
  EXPECT_EQ(split_settings({"suite=a x=1"}).own, std::vector<std::string>{"suite=a x=1"});
}

// The verdict table: the shared settings above it, failures at the top.
TEST(Verdict, TableSaysSharedSettingsOnceAndFailuresFirst) {
  const std::vector<Record> base = {row("lenet5", 8, 100), row("lenet5", 16, 200), row("lenet5", 32, 300)};
  const auto v = compare_points(base, {row("lenet5", 8, 100), row("lenet5", 16, 200), row("lenet5", 32, 150)}, {}, Tolerances{});
  const std::string table = verdict_table(v);
  EXPECT_EQ(table.rfind("settings of every row: suite=hpcnn-train model=lenet5 backend=reference", 0), 0u) << table;
  const std::size_t header = table.find("\nsettings "), regression = table.find("batch=32"), ok = table.find("batch=8");
  ASSERT_NE(header, std::string::npos) << table;
  EXPECT_LT(header, regression) << table;
  EXPECT_LT(regression, ok) << table;
  EXPECT_EQ(table.find("model=lenet5", header), std::string::npos) << "a shared setting repeated in a row:\n" << table;
}

TEST(Verdict, BandFromTheReferenceSpread) {
  Tolerances tol;
  // Iterations spread p5..p95 = 0.08..0.12 s about a 0.1 s median: +-20%, wider than the 5% floor.
  Record ref = row("lenet5", 8, 80);
  ref.set("iter_median_s", 0.1);
  ref.set("iter_p5_s", 0.08);
  ref.set("iter_p95_s", 0.12);
  // Time +20% is throughput -1/6 (16.7%): -15% is inside.
  auto v = compare_points({ref}, {row("lenet5", 8, 68)}, {}, tol);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NEAR(v[0].band, 0.2 / 1.2, 1e-12);
  EXPECT_EQ(v[0].band_source, "p5-p95 (1 run)");
  EXPECT_EQ(v[0].verdict, Verdict::Ok);
  v = compare_points({ref}, {row("lenet5", 8, 60)}, {}, tol);  // -25%
  EXPECT_EQ(v[0].verdict, Verdict::Regression);
  // A spread wider than the median (p95 = 4x p5) still flags a 10x drop.
  ref.set("iter_p5_s", 0.05);
  ref.set("iter_p95_s", 0.5);
  v = compare_points({ref}, {row("lenet5", 8, 8)}, {}, tol);
  EXPECT_LT(v[0].band, 1.0);
  EXPECT_EQ(v[0].verdict, Verdict::Regression);
  // A narrow spread does not go below the floor.
  ref.set("iter_p5_s", 0.099);
  ref.set("iter_p95_s", 0.101);
  v = compare_points({ref}, {row("lenet5", 8, 77)}, {}, tol);  // -3.75%
  EXPECT_NEAR(v[0].band, 0.05, 1e-12);
  EXPECT_EQ(v[0].band_source, "floor (1 run)");
  EXPECT_EQ(v[0].verdict, Verdict::Ok);
  tol.floor = 0.01;
  EXPECT_EQ(compare_points({ref}, {row("lenet5", 8, 77)}, {}, tol)[0].verdict, Verdict::Regression);
  // Per-metric override wins over the data.
  tol.per_metric["img_per_s"] = 0.5;
  v = compare_points({ref}, {row("lenet5", 8, 41)}, {}, tol);
  EXPECT_EQ(v[0].band_source, "override (1 run)");
  EXPECT_EQ(v[0].verdict, Verdict::Ok);
  // The band of one run comes from that run alone.
  const auto band = spread_band(ref, "img_per_s");
  ASSERT_TRUE(band);
  EXPECT_EQ(band->second, "p5-p95");
}

TEST(Verdict, StatusProblemsFailEvenWhenFast) {
  const Tolerances tol;
  const Record ref = row("lenet5", 8, 100);
  auto fast = [](const char* field, Value value) {
    Record r = row("lenet5", 8, 500);
    r.set(field, std::move(value));
    return r;
  };
  for (const Record& now : {fast("status", std::string("failed")), fast("status", std::string("diverged")),
                            fast("wrong", std::int64_t{3}), fast("phase_check", std::string("failed"))}) {
    const auto v = compare_points({ref}, {now}, {}, tol);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].verdict, Verdict::Status) << v[0].message();
    EXPECT_TRUE(is_failure(v[0].verdict));
  }
  // A failed point without its figure is still a status failure, not a missing metric.
  Record failed;
  failed.set("suite", "hpcnn-train");
  failed.set("model", "lenet5");
  failed.set("backend", "reference");
  failed.set("batch", std::int64_t{8});
  failed.set("status", "failed");
  failed.set("status_reason", "out of memory");
  const auto v = compare_points({ref}, {failed}, {}, tol);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::Status);
  EXPECT_NE(v[0].detail.find("out of memory"), std::string::npos) << v[0].detail;
}

// Stalls are in the delivered figure, not a status problem: a point whose stalls took a quarter of
// its time is judged on its rate, and the verdict names them against the reference's range.
TEST(Verdict, StallsAreJudgedInTheDeliveredRateAndNamed) {
  const Tolerances tol;
  auto with_stalls = [](double img_per_s, double share) {
    Record r = row("lenet5", 8, img_per_s);
    r.set("outlier_iters", std::int64_t{share > 0 ? 40 : 0});
    r.set("stall_share", share);
    return r;
  };
  const Record ref = with_stalls(100, 0.01);
  auto v = compare_points({ref}, {with_stalls(73, 0.31)}, {}, tol);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::Regression) << v[0].message();
  EXPECT_NE(v[0].why.find("27% lower"), std::string::npos) << v[0].why;
  EXPECT_NE(v[0].why.find("stalls took 31% of the time (reference 1-1%)"), std::string::npos) << v[0].why;
  // A fast point with stalls passes (faster), naming them; stalls no larger than the reference's are not named.
  v = compare_points({ref}, {with_stalls(130, 0.2)}, {}, tol);
  EXPECT_EQ(v[0].verdict, Verdict::Faster);
  EXPECT_NE(v[0].why.find("stalls took 20%"), std::string::npos) << v[0].why;
  v = compare_points({ref}, {with_stalls(60, 0.02)}, {}, tol);
  EXPECT_EQ(v[0].verdict, Verdict::Regression);
  EXPECT_EQ(v[0].why.find("stalls"), std::string::npos) << v[0].why;
  // Several reference runs: the range over the runs' figures' rounds.
  std::vector<Record> refs;
  for (int k = 0; k < 4; ++k) {
    Record r = with_stalls(100 + k, 0.005 + 0.005 * k);
    r.set("run", "night-" + std::to_string(k));
    refs.push_back(r);
  }
  std::vector<Record> now;
  for (int k = 0; k < 3; ++k) {
    Record r = with_stalls(74 + k, 0.3);
    r.set("run", "slow-" + std::to_string(k));
    now.push_back(r);
  }
  v = compare_points(refs, now, {}, tol);
  EXPECT_EQ(v[0].verdict, Verdict::Regression) << v[0].message();
  EXPECT_NE(v[0].why.find("(reference 0.5-2%)"), std::string::npos) << v[0].why;
}

// --at: the delivered figure as recorded, the median and the 5th-percentile iteration's from the
// median figure (or, for the allreduce, from the mean call time).
TEST(Verdict, RatesAtDeliveredMedianOrP5) {
  Record r = row("lenet5", 8, 80);  // delivered: mean iteration 0.1 s
  r.set("img_per_s_median", 100.0);  // median iteration 0.08 s
  r.set("iter_median_s", 0.08);
  r.set("iter_mean_s", 0.1);
  r.set("iter_p5_s", 0.04);
  Record a;
  a.set("suite", "hpcnn-allreduce");
  a.set("busbw_gbs", 10.0);
  a.set("time_avg_us", 200.0);
  a.set("iter_median_s", 100e-6);
  a.set("iter_p5_s", 50e-6);
  for (RateAt at : {RateAt::Delivered, RateAt::Median, RateAt::P5}) {
    std::vector<Record> rows{r, a};
    rates_at(rows, at);
    const double img = at == RateAt::Delivered ? 80 : at == RateAt::Median ? 100 : 200;
    const double bus = at == RateAt::Delivered ? 10 : at == RateAt::Median ? 20 : 40;
    EXPECT_NEAR(*rows[0].number("img_per_s"), img, 1e-9) << rate_at_name(at);
    EXPECT_NEAR(*rows[1].number("busbw_gbs"), bus, 1e-9) << rate_at_name(at);
  }
  EXPECT_EQ(parse_rate_at("delivered"), RateAt::Delivered);
  EXPECT_THROW(parse_rate_at("mean"), UsageError);
}

// Runs that leave no degree of freedom (one usable figure on each side) get a defined verdict:
// judged as one run on each side, never "ok" without a reason.
TEST(Verdict, RunsWithoutDegreesOfFreedomAreJudgedAsSingleRuns) {
  Record zero = row("lenet5", 8, 100);
  zero.set("img_per_s", 0.0);
  zero.set("run", std::string("night-0"));
  Record good = row("lenet5", 8, 100);
  good.set("run", std::string("night-1"));
  Record slow = row("lenet5", 8, 50);
  slow.set("run", std::string("now"));
  const auto v = compare_points({zero, good}, {slow}, {}, Tolerances{});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::Regression) << v[0].message();
  EXPECT_FALSE(v[0].why.empty());
  EXPECT_FALSE(v[0].runs);
}

TEST(Verdict, ParsesMetricTolerances) {
  EXPECT_EQ(parse_metric_tolerance("img_per_s=10%"), (std::pair<std::string, double>{"img_per_s", 0.1}));
  EXPECT_EQ(parse_metric_tolerance("0.2"), (std::pair<std::string, double>{"", 0.2}));
  EXPECT_THROW(parse_metric_tolerance("speed=10%"), UsageError);
  EXPECT_THROW(parse_metric_tolerance("model=10%"), UsageError);
  EXPECT_THROW(parse_metric_tolerance("img_per_s=lots"), UsageError);
}

TEST_F(ReportFiles, CompareEndToEnd) {
  const std::string base = write("base", {row("lenet5", 8, 100), row("lenet5", 16, 200)});
  const std::string same = write("same", {row("lenet5", 8, 100), row("lenet5", 16, 200)});
  const std::string slow = write("slow", {row("lenet5", 8, 100), row("lenet5", 16, 180)});  // injected -10%
  const std::string part = write("part", {row("lenet5", 8, 100)});
  std::string out;
  EXPECT_EQ(summary("--compare " + base + " " + same, &out), 0) << out;
  EXPECT_NE(out.find("verdict"), std::string::npos) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance-floor 5% " + slow, &out), 1) << out;
  EXPECT_NE(out.find("REGRESSION"), std::string::npos) << out;
  EXPECT_NE(out.find("200"), std::string::npos) << out;
  EXPECT_NE(out.find("180"), std::string::npos) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance-floor 15% " + slow, &out), 0) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance img_per_s=15% " + slow, &out), 0) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance 15% " + slow, &out), 0) << out;
  EXPECT_EQ(summary("--compare " + base + " " + part, &out), 1) << out;
  EXPECT_NE(out.find("MISSING-now"), std::string::npos) << out;
  EXPECT_EQ(summary("--compare " + part + " " + base, &out), 1) << out;
  EXPECT_NE(out.find("MISSING-reference"), std::string::npos) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance lots " + same, &out), 2) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance speed=5% " + same, &out), 2) << out;
  EXPECT_EQ(summary("--compare " + base + " --tolerance-floor x " + same, &out), 2) << out;
  EXPECT_EQ(summary("--junit " + dir_ + "/j.xml " + same, &out), 2) << out;
  EXPECT_EQ(summary("--compare " + base + " --junit " + dir_ + "/no/such/j.xml " + same, &out), 2) << out;
}

// The JUnit file as a CI reader sees it: parsed with Python's xml.etree, failures counted.
TEST_F(ReportFiles, JUnitCountsTheInjectedRegressions) {
  if (std::system("/usr/bin/python3 -c 'import xml.etree.ElementTree' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no /usr/bin/python3 to parse the JUnit file";
  const std::string base = write("base", {row("lenet5", 8, 100), row("lenet5", 16, 200), row("lenet5", 32, 300),
                                          row("resnet18", 8, 10)});
  // Two injected regressions (batch 16 and 32 at a third of their throughput), resnet18 missing.
  const std::string now = write("now", {row("lenet5", 8, 100), row("lenet5", 16, 66), row("lenet5", 32, 100)});
  const std::string xml = dir_ + "/verdicts.xml";
  std::string out;
  ASSERT_EQ(summary("--compare " + base + " --junit " + xml + " " + now, &out), 1) << out;
  const std::string count = dir_ + "/count.txt";
  const std::string py =
      "import sys, xml.etree.ElementTree as ET\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "assert root.tag == 'testsuites', root.tag\n"
      "cases = root.findall('./testsuite/testcase')\n"
      "fails = [c.find('failure') for c in cases if c.find('failure') is not None]\n"
      "kinds = sorted(f.get('type') for f in fails)\n"
      "assert int(root.get('failures')) == len(fails)\n"
      "assert all(c.get('name') and c.get('classname', '').startswith('hpcnn-train.') for c in cases)\n"
      "assert all(' now ' in f.get('message') and ' reference ' in f.get('message') for f in fails)\n"
      "print(len(cases), ' '.join(kinds))\n";
  {
    std::FILE* f = std::fopen((dir_ + "/count.py").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(py.c_str(), f);
    std::fclose(f);
  }
  ASSERT_EQ(std::system(("/usr/bin/python3 " + dir_ + "/count.py " + xml + " > " + count + " 2>&1").c_str()), 0);
  std::FILE* f = std::fopen(count.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char line[256] = {};
  ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);
  std::fclose(f);
  EXPECT_EQ(std::string(line), "4 MISSING-now REGRESSION REGRESSION\n");
  // No temporary file left beside it.
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(ReportFiles, WhereByAndTablesEndToEnd) {
  const std::string d = write("runs", {row("resnet18", 64, 10), row("lenet5", 8, 300), row("resnet18", 16, 20)});
  std::string out;
  ASSERT_EQ(summary("--format csv --columns model,batch --where model=resnet18 --by batch " + d, &out), 0) << out;
  EXPECT_EQ(out, "model,batch\nresnet18,16\nresnet18,64\n");
  EXPECT_EQ(summary("--table nosuch " + d, &out), 2) << out;
  // --plot into a folder that does not exist: a usage error, not a PNG on stdout.
  EXPECT_EQ(summary("--plot " + dir_ + "/missing/t.png " + d, &out), 2) << out;
  EXPECT_NE(out.find("does not exist"), std::string::npos) << out;
  for (const char* t : {"throughput", "breakdown", "ops", "memory", "cpu", "gpu", "allreduce", "scaling"})
    EXPECT_EQ(summary(std::string("--table ") + t + " " + d, &out), 0) << t << ": " << out;
}

// Without --table or --columns every file is shown in the table of its kind; files of several
// kinds give one table each under a "# NAME: ..." line; --plot then needs --table.
TEST_F(ReportFiles, DefaultTableFollowsWhatTheFilesHold) {
  const std::string train = write("mixed", {row("lenet5", 8, 300)});
  Record a;
  a.set("suite", "hpcnn-allreduce");
  a.set("exchange", "ring");
  a.set("ranks", std::int64_t{2});
  a.set("size_bytes", std::int64_t{1024});
  for (const char* f : {"time_avg_us", "time_min_us", "time_max_us", "algbw_gbs", "busbw_gbs"}) a.set(f, 1.5);
  a.set("wrong", std::int64_t{0});
  a.set("status", "ok");
  {
    ResultWriter w(dir_ + "/mixed", "hpcnn-allreduce");
    w.add_point({a, {}, PointStatus::Ok, {}});
    Provenance p;
    p.command_line = "test";
    w.commit(p);
    ResultWriter only(dir_ + "/ar", "hpcnn-allreduce");
    only.add_point({a, {}, PointStatus::Ok, {}});
    only.commit(p);
  }
  std::string out;
  ASSERT_EQ(summary("--format csv " + dir_ + "/ar", &out), 0) << out;
  EXPECT_EQ(out.substr(0, out.find('\n')), "exchange,ranks,size_bytes,time_avg_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong,exchange_memory,placement,status");
  EXPECT_NE(out.find("ring,2,1024,1.5,1.5,1.5,1.5,1.5,0,,,ok"), std::string::npos) << out;
  EXPECT_EQ(out.find('#'), std::string::npos);  // one kind: no heading
  ASSERT_EQ(summary("--format csv " + train, &out), 0) << out;
  EXPECT_NE(out.find("# throughput:"), std::string::npos) << out;
  EXPECT_NE(out.find("# allreduce:"), std::string::npos) << out;
  EXPECT_NE(out.find("hpcnn-train,lenet5,reference,,8"), std::string::npos) << out;
  EXPECT_NE(out.find("ring,2,1024"), std::string::npos) << out;
  // --table (or --columns) puts every file in one table again.
  ASSERT_EQ(summary("--format csv --table throughput " + train, &out), 0) << out;
  EXPECT_EQ(out.find('#'), std::string::npos) << out;
  EXPECT_EQ(summary("--format csv --table scaling " + train, &out), 0) << out;
  EXPECT_EQ(summary("--plot " + dir_ + "/mixed.png " + train, &out), 1) << out;
  EXPECT_NE(out.find("several kinds of results"), std::string::npos) << out;
}

TEST(Report, OpsPresetRows) {
  ResultRun run;
  ResultPoint p;
  p.record = row("lenet5", 8, 100);
  p.record.set("op_kinds", "convolution,convolution_backward,weights_update");
  // Two ranks: seconds per iteration.
  p.arrays.push_back({"op_time_s", "s", {2, 3}, {0.2, 0.6, 0.2, 0.4, 0.4, 0.2}});
  p.arrays.push_back({"op_calls", "", {3}, {2, 2, 1}});
  p.arrays.push_back({"op_flops", "FLOP", {3}, {1e9, 2e9, 1e6}});
  p.arrays.push_back({"op_bytes", "B", {3}, {1e6, 2e6, 5e6}});
  run.points.push_back(p);
  const TablePreset* ops = find_table_preset("ops");
  ASSERT_NE(ops, nullptr);
  const std::vector<Record> rows = preset_rows(*ops, run);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].text("op"), "convolution_backward");
  EXPECT_DOUBLE_EQ(*rows[0].number("op_time_s"), 0.3);  // mean over ranks
  EXPECT_DOUBLE_EQ(*rows[1].number("op_time_s"), 0.5);
  EXPECT_NEAR(*rows[0].number("op_share"), 30.0, 1e-9);
  EXPECT_EQ(*rows[0].number("op_calls"), 2);
  EXPECT_NEAR(*rows[1].number("op_gflops"), 2e9 * 2 / 0.5 * 1e-9, 1e-9);
  EXPECT_EQ(rows[0].text("model"), "lenet5");  // settings kept for --where/--by
  // A point without a profile gives no rows.
  run.points[0] = ResultPoint{row("lenet5", 8, 100), {}, PointStatus::Ok, {}};
  EXPECT_TRUE(preset_rows(*ops, run).empty());
}

// E6's scaling plot as a reader of ref. [1] Fig. 6 expects it: a curve per exchange, each with a
// straight linear line from its own 1-worker point (not from the baseline each run measured for
// itself), the efficiency in a panel of its own, what all curves share in the title once, the
// legend below the panels.
TEST(Report, ScalingPlotLinearLinesAndEfficiency) {
  std::vector<Record> rows;
  const double measured[2][3] = {{100, 180, 300}, {90, 150, 200}};
  const double own_baseline[3] = {100, 120, 80};  // what each run's step measured at 1 worker
  for (int e = 0; e < 2; ++e)
    for (int k = 0; k < 3; ++k) {
      Record r = row("lenet5", 16, measured[e][k]);
      r.set("suite", std::string("hpcnn-scale"));
      r.set("exchange", std::string(e == 0 ? "ring" : "ps-sync"));
      r.set("workers", std::int64_t{1} << k);
      r.set("linear_img_per_s", own_baseline[k] * double(1 << k));
      rows.push_back(r);
    }
  const std::string s = gnuplot_script("scaling", rows, "x.svg");
  // Data: x, images/s, linear, efficiency: the linear column is straight through each curve's
  // 1-worker point.
  EXPECT_NE(s.find("1 100 100 1\n2 180 200 0.9\n4 300 400 0.75\n"), std::string::npos) << s;
  EXPECT_NE(s.find("1 90 90 1\n2 150 180 0.8333333333\n4 200 360 0.5555555556\n"), std::string::npos) << s;
  EXPECT_NE(s.find("set multiplot layout 2,1 title \"Scaling: hpcnn-scale, lenet5, reference, batch 16\\n"
                   "dashed: linear scaling from each curve's 1-worker point"),
            std::string::npos) << s;
  EXPECT_NE(s.find("set key below"), std::string::npos) << s;
  // The curves are named by what differs only; every curve is drawn in both panels.
  EXPECT_NE(s.find("title \"ring\""), std::string::npos) << s;
  EXPECT_NE(s.find("title \"ps-sync\""), std::string::npos) << s;
  EXPECT_EQ(s.find("lenet5\""), std::string::npos) << s;
  std::size_t curves = 0;
  for (std::size_t at = s.find("with linespoints"); at != std::string::npos; at = s.find("with linespoints", at + 1)) ++curves;
  EXPECT_EQ(curves, 4u) << s;  // 2 curves x (images/s, efficiency)
  // Gnuplot draws it, where it is installed.
  if (std::system("command -v gnuplot > /dev/null 2>&1") == 0) {
    const fs::path dir = fs::temp_directory_path() / ("hpcnn-scaling-plot-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "scaling.svg").string();
    plot_rows("scaling", rows, file);
    EXPECT_GT(fs::file_size(file), 1000u);
    fs::remove_all(dir);
  }
}

// The per-operator profile (ref. [4] Figs 5, 7, 10): a bar per profiled point for each operator
// kind, kinds in the order of their largest time, milliseconds per iteration, repeated runs of a
// point averaged, the points named by what differs and the rest in the title.
TEST(Report, OpsPlotBarsPerPointAndKind) {
  std::vector<Record> rows;
  const auto op = [&rows](const char* backend, const char* kind, double seconds) {
    Record r = row("lenet5", 8, 100);
    r.set("backend", std::string(backend));
    r.set("op", std::string(kind));
    r.set("op_time_s", seconds);
    rows.push_back(r);
  };
  op("dnnl", "relu", 0.001), op("dnnl", "convolution", 0.004);
  op("reference", "relu", 0.002), op("reference", "convolution", 0.010);
  op("reference", "convolution", 0.012);  // a repeated run of the same point
  const std::string s = gnuplot_script("ops", rows, "x.svg");
  EXPECT_NE(s.find("\"convolution\" 4 11\n\"relu\" 1 2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("title \"Time per operator kind per iteration\\nhpcnn-train, lenet5, batch 8\""), std::string::npos) << s;
  EXPECT_NE(s.find("$d using 2:xtic(1) title \"dnnl\""), std::string::npos) << s;
  EXPECT_NE(s.find("'' using 3 title \"reference\""), std::string::npos) << s;
  EXPECT_NE(s.find("set ylabel 'ms per iteration'"), std::string::npos) << s;
}

// hpcnn-allreduce's plot: bus bandwidth against size, sizes in order, a curve per scheme and ranks.
TEST(Report, AllreducePlotBandwidthAgainstSize) {
  std::vector<Record> rows;
  for (const char* scheme : {"ring", "mpi"})
    for (std::int64_t size : {std::int64_t{1} << 20, std::int64_t{4096}}) {
      Record r;
      r.set("suite", std::string("hpcnn-allreduce"));
      r.set("exchange", std::string(scheme));
      r.set("exchange_memory", std::string("host"));
      r.set("ranks", std::int64_t{2});
      r.set("size_bytes", size);
      r.set("busbw_gbs", size == 4096 ? 0.5 : 4.0);
      rows.push_back(r);
    }
  const std::string s = gnuplot_script("allreduce", rows, "x.png");
  EXPECT_NE(s.find("4096 0.5\n1048576 4\n"), std::string::npos) << s;
  EXPECT_NE(s.find("title \"ring, 2 ranks\""), std::string::npos) << s;
  EXPECT_NE(s.find("title \"mpi, 2 ranks\""), std::string::npos) << s;
  EXPECT_NE(s.find("set logscale x 2"), std::string::npos) << s;
}

TEST(Report, GnuplotScripts) {
  std::vector<Record> rows = {row("lenet5", 8, 100), row("lenet5", 16, 180)};
  for (Record& r : rows) {
    r.set("load_s", 0.001);
    r.set("forward_s", 0.01);
    r.set("backward_s", 0.02);
    r.set("update_s", 0.001);
  }
  std::string s = gnuplot_script("throughput", rows, "x.png");
  EXPECT_NE(s.find("set output \"x.png\""), std::string::npos);
  EXPECT_NE(s.find("8 100\n16 180\n"), std::string::npos) << s;  // sorted by batch
  s = gnuplot_script("breakdown", rows, "x.svg");
  EXPECT_NE(s.find("rowstacked"), std::string::npos);
  EXPECT_NE(s.find("set terminal svg"), std::string::npos);
  rows[0].set("ranks", std::int64_t{1});
  rows[1].set("ranks", std::int64_t{2});
  rows[1].set("batch", std::int64_t{8});  // one series: the same setting on 1 and 2 ranks
  s = gnuplot_script("scaling", rows, "x.png");
  EXPECT_NE(s.find("2 180 200 0.9\n"), std::string::npos) << s;  // x, images/s, linear (2 x the 1-rank figure), efficiency
  EXPECT_THROW(gnuplot_script("memory", rows, "x.png"), UsageError);  // a table without a plot
  EXPECT_THROW(gnuplot_script("ops", rows, "x.png"), RuntimeError);  // rows without per-operator times
  EXPECT_THROW(gnuplot_script("throughput", rows, "x.pdf"), UsageError);
  // convergence: test accuracy against the epoch and against the training time, one
  // curve per exchange and worker count.
  std::vector<Record> epochs(4, row("lenet5", 8, 100));
  for (std::size_t k = 0; k < epochs.size(); ++k) {
    epochs[k].set("exchange", std::string(k < 2 ? "ring" : "ps-async"));
    epochs[k].set("workers", std::int64_t{3});
    epochs[k].set("epoch", static_cast<std::int64_t>(k % 2 + 1));
    epochs[k].set("train_time_s", 1.5 * double(k % 2 + 1) + double(k / 2));
    epochs[k].set("test_acc", 50.0 + 10.0 * double(k));
  }
  s = gnuplot_script("convergence", epochs, "x.png");
  EXPECT_NE(s.find("set multiplot layout 1,2"), std::string::npos) << s;
  EXPECT_NE(s.find("1 50\n2 60\n"), std::string::npos) << s;      // ring, per epoch
  EXPECT_NE(s.find("2.5 70\n4 80\n"), std::string::npos) << s;    // ps-async, per second
  EXPECT_NE(s.find("title \"ps-async, 3 workers\""), std::string::npos) << s;  // the curve's label
  EXPECT_NE(s.find("title \"Test accuracy: lenet5"), std::string::npos) << s;   // what all share
  EXPECT_NE(s.find("linecolor 1 dashtype 2"), std::string::npos) << s;           // ps-async dashed
  EXPECT_EQ(s.find("set arrow"), std::string::npos) << s;                         // no target given
  for (Record& r : epochs) r.set("target_accuracy", 65.0);
  s = gnuplot_script("convergence", epochs, "x.png");
  EXPECT_NE(s.find("set arrow from graph 0, first 65"), std::string::npos) << s;
}

TEST_F(ReportFiles, PlotEndToEnd) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const std::string d = write("runs", {row("lenet5", 8, 100), row("lenet5", 16, 180)});
  std::string out;
  ASSERT_EQ(summary("--plot " + dir_ + "/t.png " + d, &out), 0) << out;
  ASSERT_TRUE(fs::exists(dir_ + "/t.png"));
  EXPECT_GT(fs::file_size(dir_ + "/t.png"), 1000u);
  // gnuplot missing: a clear message and exit 1, the table still printed.
  const std::string no_gnuplot = "env PATH=/nonexistent " + std::string(HPCNN_BUILDDIR) + "/hpcnn-summary --plot " + dir_ +
                                 "/v.png " + d + " > " + dir_ + "/np.out 2>&1";
  const int st = std::system(no_gnuplot.c_str());
  EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 1);
  std::FILE* f = std::fopen((dir_ + "/np.out").c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[4096] = {};
  std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  EXPECT_NE(std::string(buf).find("gnuplot"), std::string::npos) << buf;
  EXPECT_NE(std::string(buf).find("lenet5"), std::string::npos) << buf;
}
