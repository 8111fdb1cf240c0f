// The acceptance verdict of hpcnn-summary --compare: every point of a reference run set against
// the same point now, one verdict per point and metric. Points are matched on their Key fields
// (key_fields()), never on file names; each row of a point is one run (one result file).
//
// With several runs on a side (a reference blessed from K runs), a regression must be both
// significant and large: the run-level test of significance.hpp (Student t on the logarithms,
// p-values adjusted over the comparison by Holm, family level --alpha) and a ratio beyond the
// practical threshold (--tolerance-floor, or a --tolerance override). A point whose runs spread
// so widely that only a change beyond --unstable-above could be detected is UNSTABLE (not a pass,
// not a failure) unless its change is significant anyway. With one run on each side the band is
// the run's own iteration spread (p5..p95), never below the floor. Status problems (failed,
// diverged, skipped, wrong elements, failed phase check) and points missing on either side are
// failures of their own. Stalls are no status problem: they are in the delivered rates, and a
// verdict on a rate says what share of the time they took now and in the reference.
// No MPI, no HDF5: rows are the Records hpcnn-summary reads (report.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/record.hpp"
#include "analysis/significance.hpp"

namespace hpcnn {

enum class Verdict { Ok, Faster, Regression, Unstable, MissingNow, MissingReference, Status };
const char* verdict_name(Verdict v);  // "ok", "faster", "REGRESSION", "UNSTABLE", "MISSING-now", ...
// UNSTABLE is neither: the point cannot be judged, which the report says, and the exit status does not.
inline bool is_failure(Verdict v) { return v != Verdict::Ok && v != Verdict::Faster && v != Verdict::Unstable; }

struct Tolerances {
  double floor = 0.05;                     // --tolerance-floor: the narrowest band
  std::map<std::string, double> per_metric;  // --tolerance METRIC=FRACTION: the band, whatever the data say
  std::optional<double> all_metrics;        // --tolerance FRACTION: a fixed band for every metric
  double alpha = 0.05;           // --alpha: family-wise chance that an unchanged run is called a regression
  double unstable_above = 0.25;  // --unstable-above: a point that cannot detect a change this large is UNSTABLE
};

struct PointVerdict {
  std::string suite;     // "hpcnn-train"
  std::string settings;  // the key settings, "suite=hpcnn-train model=lenet5 ..."
  std::string metric;    // "img_per_s"
  // The point's figure on each side: the geometric mean over its runs when the runs are tested
  // (runs set), else the median over its rows.
  std::optional<double> reference, now;
  // The practical threshold: a relative change inside it is never a regression. With one run on
  // each side it is the whole band (the iteration spread, never below the floor).
  double band = 0;
  std::string band_source;  // "floor", "override", "p5-p95 (1 run)", "floor (1 run)"
  Verdict verdict = Verdict::Ok;
  std::string detail;  // for Status: what is wrong ("now: status failed: ..."); for Unstable: the spread
  std::optional<RunComparison> runs;  // the run-level test, when a side has two runs or more
  double p_adjusted = 1;              // runs' p_worse adjusted over the comparison (Holm)
  double p_better_adjusted = 1;
  std::optional<double> detectable;   // the smallest change this point can detect (Bonferroni level)
  std::optional<double> iters;        // the reference's timed iterations per run (median)
  // For a rate: the stall share of the round each run's figure came from, the largest now and the
  // reference runs' range (stall_share); unset where the rows have none.
  std::optional<double> stalls_now;
  std::optional<std::pair<double, double>> stalls_reference;
  std::string why;                    // why it passed or failed, one line
  std::optional<double> ratio() const;  // now / reference
  std::string message() const;          // one line with the numbers, for JUnit and the log
};

// The metric(s) checked for a point when --metric is not given: its headline figure (img_per_s,
// else busbw_gbs, else gflops) plus test_acc where the point trained on real data.
std::vector<std::string> default_metrics(const Record& row);
bool higher_is_better(const std::string& metric);  // false for times (unit s) and stalls
// --at: the iteration time the rates of a comparison are taken at. `delivered` (the default) is the
// figure as the suite reports it: the timed work over the timed wall time (img_per_s, gflops,
// busbw_gbs: over the mean iteration or call), so that stalls, a throttled CPU quota or a stray
// process lower it by the time they take. `median` the same work over the median iteration
// (img_per_s_median, gflops_median), `p5` over the 5th-percentile one (iter_p5_s): the speed of
// the iterations nothing outside disturbed, which a node losing CPU in slices does not lower.
enum class RateAt { Delivered, Median, P5 };
RateAt parse_rate_at(const std::string& text);  // "delivered" | "median" | "p5"; UsageError otherwise
const char* rate_at_name(RateAt at);
// How a heading says it: "delivered (work over wall time)", "median iteration", "5th-percentile iteration".
const char* rate_at_text(RateAt at);
// Rewrites the rate figures of every row (img_per_s, gflops, busbw_gbs, algbw_gbs) to `at`, where
// the row has the times to do it (a row without them keeps its figures).
void rates_at(std::vector<Record>& rows, RateAt at);

// One figure of `metric` per run among the rows of one point: the best of the rows that share a
// `run` (the rounds of a run), each row without one a run of its own.
std::vector<double> run_figures(const std::vector<const Record*>& rows, const std::string& metric);
// What makes a point's figures untrustworthy (wrong elements, a status other than ok, a failed
// phase check), or "" when nothing does.
std::string point_problem(const Record& row);

// A verdict on a rate names the stalls when they took a larger share of the time now than in any
// reference run, by at least this much (the share, stall_share, is of the round the figure came
// from): "stalls took 31% of the time (reference 0.5-2%)".
inline constexpr double kStallMention = 0.02;

// One verdict per matched point and metric, in the reference's key order, then points only now.
// metrics empty: default_metrics() of each point.
std::vector<PointVerdict> compare_points(const std::vector<Record>& reference, const std::vector<Record>& now,
                                         const std::vector<std::string>& metrics, const Tolerances& tolerances);

// The band one run's own spread explains for `metric` (relative half-width, from its iterations'
// p5..p95 or its --repeat interval) and where it came from; nullopt when it says nothing about it.
std::optional<std::pair<double, std::string>> spread_band(const Record& row, const std::string& metric);

// The iterations that would bring a point's smallest detectable change from `detectable` down to
// `limit`, if its run-to-run spread is the noise of the median over `iters` iterations (it shrinks as
// 1/sqrt(iterations)); a lower bound where the runs differ for other reasons too.
double iterations_to_detect(double iters, double detectable, double limit, bool higher_is_better = false);

// What would let an UNSTABLE point be judged, one line: its runs' spread and the change it can
// detect now, the reference runs that would detect `limit` at this spread (runs_to_detect: unset
// when no count would) and the iterations per point that would, if the spread is the iterations'.
std::string steadying_advice(std::size_t runs, double spread, double detectable, std::optional<std::size_t> stable_runs,
                             std::optional<double> iters, std::optional<double> stable_iters);

// "img_per_s=0.1" or "img_per_s=10%" -> {"img_per_s", 0.1}; "10%" -> {"", 0.1}. Throws UsageError.
std::pair<std::string, double> parse_metric_tolerance(const std::string& text);

// The verdict table's rows: failures first, then UNSTABLE points, then the rest; the key settings
// every row shares once (`common`), each row's others in its settings cell. Columns: settings,
// metric, reference, now, ratio, its interval, p, threshold, verdict, why. `verdicts[k]` is row k's.
struct VerdictRows {
  std::string common;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<const PointVerdict*> verdicts;
};
VerdictRows verdict_rows(const std::vector<PointVerdict>& verdicts);

// The verdict table as aligned text, under a "settings of every row: ..." line when rows share any.
std::string verdict_table(const std::vector<PointVerdict>& verdicts);
// JUnit XML: one testcase per point and metric (classname: suite and settings, name: metric),
// a <failure> with the numbers for every failure. Written to FILE.tmp and renamed, so a reader
// never sees half a file; throws RuntimeError naming FILE when it cannot be written.
std::string junit_xml(const std::vector<PointVerdict>& verdicts);
void write_junit(const std::string& file, const std::vector<PointVerdict>& verdicts);

}  // namespace hpcnn
