// Per-iteration series of bounded size. Every suite keeps the time of every timed iteration (or
// call, or work quantum) of every rank; a 3-microsecond allreduce timed for seconds has a hundred
// thousand of them per rank, and a year of nightly files would take gigabytes. Beyond
// kSeriesKeptPerRank values per rank a series is stored instead as its log-bucketed histogram, as
// HdrHistogram keeps latencies: 64 buckets per doubling of the time (each bucket 1.09% wide, so any
// value is known to within 0.55% of its bucket's geometric middle), the exact sum of every rank's
// values, and the histogram of the slowest rank per iteration (what a synchronous job waits for).
// The mean (exactly), any percentile and the stall share can still be computed from it. A point's
// own statistics (iter_median_s, stall_share, ...) are computed from the whole series before it is
// bounded.
//
// For a series NAME the histogram is five arrays (docs/RESULTS.md):
//   NAME_bucket  [buckets][2]  each occupied bucket's lower and upper edge, in NAME's unit
//   NAME_count   [ranks][buckets]  how many of the rank's values fall in each bucket
//   NAME_slowest_count  [buckets]  the same for the slowest rank of every iteration
//   NAME_sum     [ranks]  the exact sum of the rank's values
//   NAME_slowest_sum  [1]  the exact sum over iterations of the slowest rank's value
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "results/result_file.hpp"

namespace hpcnn {

inline constexpr std::size_t kSeriesKeptPerRank = 10000;
inline constexpr int kBucketsPerDoubling = 64;

// The per-iteration series that are bounded (iter_time_s, call_time_s, quantum_time_s, the
// training phases, ...), and the five array names of NAME's histogram in the order above.
const std::vector<std::string>& bounded_series_names();
std::vector<std::string> histogram_array_names(const std::string& series);

// Every bounded series of the point with more than `keep` values per rank, of finite values >= 0,
// replaced by its histogram arrays. Other arrays are left as they are.
void bound_series(ResultPoint& point, std::size_t keep = kSeriesKeptPerRank);

// A series read back, whole or from its histogram.
struct SeriesView {
  std::size_t ranks = 0;
  std::vector<std::size_t> count;  // values per rank
  std::vector<double> sum;         // exact, per rank
  double slowest_sum = 0;          // exact: the slowest rank of every iteration, summed
  bool exact = true;               // false: the values below are their buckets' geometric middles

  // Per rank and for the slowest rank per iteration: every value in iteration order (a whole
  // series), or every value as its bucket's geometric middle (within 0.55%) in ascending order.
  std::vector<std::vector<double>> values;
  std::vector<double> slowest;

  double mean(std::size_t rank) const { return count[rank] ? sum[rank] / static_cast<double>(count[rank]) : 0.0; }
};

// The series NAME of the point as it was stored: whole ([ranks][n], or [n] for one rank) or as its
// histogram. Empty when the point has neither or its arrays disagree in shape.
std::optional<SeriesView> read_series(const ResultPoint& point, const std::string& name);

}  // namespace hpcnn
