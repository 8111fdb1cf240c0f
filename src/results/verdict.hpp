// The acceptance verdict of hpcnn-summary --compare: every point of a reference run set against
// the same point now, one verdict per point and metric. Points are matched on their Key fields
// (key_fields()), never on file names. A regression is a drop beyond the band the reference's own
// spread explains (95% CI of repeats, else its iteration p5..p95), never below a floor, with a
// per-metric override. Status problems (failed, diverged, skipped, wrong elements, failed phase
// check, outlier iterations) and points missing on either side are failures of their own.
// No MPI, no HDF5: rows are the Records hpcnn-summary reads (report.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

enum class Verdict { Ok, Faster, Regression, MissingNow, MissingReference, Status };
const char* verdict_name(Verdict v);  // "ok", "faster", "REGRESSION", "MISSING-now", ...
inline bool is_failure(Verdict v) { return v != Verdict::Ok && v != Verdict::Faster; }

struct Tolerances {
  double floor = 0.05;                     // --tolerance-floor: the narrowest band
  std::map<std::string, double> per_metric;  // --tolerance METRIC=FRACTION: the band, whatever the data say
  std::optional<double> all_metrics;        // --tolerance FRACTION: a fixed band for every metric
  bool ignore_outliers = false;             // --ignore-outliers: outlier iterations are not a failure
};

struct PointVerdict {
  std::string suite;     // "hpcnn-train"
  std::string settings;  // the key settings, "suite=hpcnn-train model=lenet5 ..."
  std::string metric;    // "img_per_s"
  std::optional<double> reference, now;  // medians over the rows of the point
  double band = 0;          // relative half-width: a change inside it is noise
  std::string band_source;  // "floor", "p5-p95", "ci95 (n=3)", "override"
  Verdict verdict = Verdict::Ok;
  std::string detail;  // for Status: what is wrong ("now: status failed: ...")
  std::optional<double> ratio() const;  // now / reference
  std::string message() const;          // one line with the numbers, for JUnit and the log
};

// The metric(s) checked for a point when --metric is not given: its headline figure (img_per_s,
// else busbw_gbs, else gflops) plus test_acc where the point trained on real data.
std::vector<std::string> default_metrics(const Record& row);
bool higher_is_better(const std::string& metric);  // false for times (unit s)
// What makes a point's figures untrustworthy (wrong elements, a status other than ok, a failed
// phase check, outlier iterations unless ignored), or "" when nothing does.
std::string point_problem(const Record& row, bool ignore_outliers);

// One verdict per matched point and metric, in the reference's key order, then points only now.
// metrics empty: default_metrics() of each point.
std::vector<PointVerdict> compare_points(const std::vector<Record>& reference, const std::vector<Record>& now,
                                         const std::vector<std::string>& metrics, const Tolerances& tolerances);

// The band the reference rows' own spread explains for `metric` (relative half-width) and where it
// came from; nullopt when the rows say nothing about their spread.
std::optional<std::pair<double, std::string>> spread_band(const std::vector<const Record*>& rows, const std::string& metric);

// "img_per_s=0.1" or "img_per_s=10%" -> {"img_per_s", 0.1}; "10%" -> {"", 0.1}. Throws UsageError.
std::pair<std::string, double> parse_metric_tolerance(const std::string& text);

// The verdict table: settings, metric, reference, now, ratio, band, verdict (text, aligned).
std::string verdict_table(const std::vector<PointVerdict>& verdicts);
// JUnit XML: one testcase per point and metric (classname: suite and settings, name: metric),
// a <failure> with the numbers for every failure. Written to FILE.tmp and renamed, so a reader
// never sees half a file; throws RuntimeError naming FILE when it cannot be written.
std::string junit_xml(const std::vector<PointVerdict>& verdicts);
void write_junit(const std::string& file, const std::vector<PointVerdict>& verdicts);

}  // namespace hpcnn
