// History and trends (hpcnn-summary --trend N): the runs of many nights, point by point and metric
// by metric, in time order. Every night is judged against the N clean runs before it with robust
// statistics (median and MAD: a few bad nights in the window cannot move them), and the last 2N
// runs are tested for a monotonic drift (Mann-Kendall, with the Theil-Sen slope for its size), so
// a slow decline that hides in the night-to-night noise is caught as well as a step.
// No MPI, no HDF5: runs are the Records hpcnn-summary reads, with their start times.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/record.hpp"
#include "results/table.hpp"
#include "analysis/verdict.hpp"

namespace hpcnn {

struct TrendSettings {
  std::size_t window = 10;  // --trend N: a night is judged against the N clean runs before it
  double robust_z = 3.5;    // flagged beyond median -+ robust_z * 1.4826 MAD (Iglewicz-Hoaglin's 3.5)
  double drift_z = 3.3;     // Mann-Kendall |z| over the last 2N runs beyond which they drift (p < 0.0005 one-sided)
  double floor = 0.05;      // --tolerance-floor: neither a band nor a drift narrower than this fraction
};

// One run (one result file) and when it started.
struct TrendRun {
  std::string time;  // ISO 8601 UTC start time (provenance start_time)
  std::vector<Record> rows;
};

enum class NightFlag { None, Worse, Better, Status, Unjudged };

struct TrendNight {
  std::string time;
  std::optional<double> value;  // median over the point's rows of that run
  // The band the night was judged against (absolute): median of the runs before it and the
  // half-width; unset for the first runs (fewer than min_history() before it).
  std::optional<double> center, band;
  NightFlag flag = NightFlag::Unjudged;
  std::string problem;  // for Status: what is wrong
};

struct PointTrend {
  std::string suite, settings, metric;
  std::vector<TrendNight> nights;  // oldest first
  // Over the last 2N clean runs: Theil-Sen slope per run relative to their median, Mann-Kendall z,
  // and how many runs that was; unset with fewer than min_history() runs.
  std::optional<double> drift_per_run, drift_zscore;
  std::size_t drift_runs = 0;
  Verdict verdict = Verdict::Ok;  // of the latest run: Regression (step or drift), Status, Faster, Ok
  std::string detail;             // "step" / "drift -1.9%/run over 20 runs" / the status problem
  PointVerdict as_verdict() const;  // for --junit: reference = the median the latest run was judged by
};

// The fewest clean runs before a night for it to be judged, and for a drift test.
std::size_t min_history(const TrendSettings& settings);

// One trend per point (Key settings) and metric, in the order the points first appear in time.
// metrics empty: default_metrics() of each point. Runs are sorted by time (ties in the given order).
std::vector<PointTrend> trend_points(std::vector<TrendRun> runs, const std::vector<std::string>& metrics,
                                     const TrendSettings& settings);

// The statistics, exposed for the tests (the median is base/median.hpp's).
double mad_sigma(const std::vector<double>& values);  // 1.4826 * median absolute deviation
double theil_sen_slope(const std::vector<double>& values);  // per index step
double mann_kendall_z(const std::vector<double>& values);   // with the continuity correction

// The trend table's rows, one per point and metric in the order given: the key settings every row
// shares once (`common`; none with `csv`, whose rows keep all of them), each row's others in its
// settings cell. Columns: settings, metric, runs, latest, median, band, ratio, drift_per_run,
// drift_z, flagged, verdict; numbers as the text table prints them (`csv`: plain).
struct TrendRows {
  std::string common;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
TrendRows trend_rows(const std::vector<PointTrend>& trends, bool csv = false);

// The trend table: the rows above as text (under a "settings of every row" line), Markdown or CSV.
std::string trend_table(const std::vector<PointTrend>& trends, TableFormat format);

}  // namespace hpcnn
