// Acceptance references made of several runs (jobscripts/bless.sh, docs/ACCEPTANCE.md): what makes
// such a set of runs usable as one reference, and how steady each of its points is.
//
// A reference holds K runs of the same set: every point once per run (one row per run), all from
// one build (hpcnn version, configure options, library versions) and one machine (provenance
// `machine`). Its run-to-run spread gives each point the smallest change a single new run can be
// shown to differ by (significance.hpp); a point whose smallest detectable change is above the
// limit is UNSTABLE, and the report says how many iterations would steady it.
// No MPI, no HDF5: runs are what hpcnn-summary read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/record.hpp"
#include "results/result_file.hpp"
#include "analysis/verdict.hpp"

namespace hpcnn {

// "hpcnn 0.1.0, configure '', MPI Open MPI v4.1.4, oneDNN 3.2.0, ...": the build a run comes from.
std::string build_description(const Provenance& p);
// The first difference of build between two runs ("oneDNN 2.6.3 vs 3.2.0"), or "" when none
// (libraries only one of them names are no difference: suites use different libraries).
std::string build_difference(const Provenance& a, const Provenance& b);

// Throws UsageError (one line naming both files) when the runs of `what` (e.g. "reference
// results/reference/box/smoke") come from different builds or machines, or (naming the file) when
// one was measured with a test's fault injected (provenance fault_injection).
void check_one_origin(const std::vector<const ResultRun*>& runs, const std::string& what);

// Throws UsageError naming the first point of `rows` that has fewer than `min_runs` runs (rows),
// or, with same_count, fewer runs than another point (a run that lacks it).
void check_run_counts(const std::vector<Record>& rows, std::size_t min_runs, bool same_count, const std::string& what);

// One point and metric of a set of runs, as a single new run would be judged against them.
struct PointStability {
  std::string settings, metric;
  std::size_t runs = 0;
  double figure = 0;                  // geometric mean over the runs
  std::optional<double> spread;       // run to run: exp(standard deviation of ln figure) - 1
  std::optional<double> detectable;   // smallest change a new run is shown to differ by (Bonferroni level)
  std::optional<double> iters;        // timed iterations per run (median)
  std::optional<double> stable_iters; // iterations per run that would bring `detectable` to the limit
  std::optional<std::size_t> stable_runs;  // reference runs that would, at this spread
  bool unstable = false;
};

// Every point and metric of `rows` (metrics empty: default_metrics()); the family of tests is all
// of them, as in a comparison against this reference.
std::vector<PointStability> point_stability(const std::vector<Record>& rows, const std::vector<std::string>& metrics,
                                            const Tolerances& tolerances);
// The stability table's cells: UNSTABLE points first, the settings every row shares once
// (`common`) and each row's own; header settings, metric, runs, figure, spread, detects, iters,
// stable_iters, stable_runs, verdict (stable | UNSTABLE). `points[k]` is the point of `rows[k]`.
struct StabilityRows {
  std::string common;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<const PointStability*> points;
};
StabilityRows stability_rows(const std::vector<PointStability>& points);
// Those cells as aligned text (the shared settings on a line above), or every point as CSV
// (fractions as numbers, empty cells where there is no spread).
std::string stability_table(const std::vector<PointStability>& points);
std::string stability_csv(const std::vector<PointStability>& points);

}  // namespace hpcnn
