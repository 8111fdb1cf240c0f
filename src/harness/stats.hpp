// Order statistics of a sample of timings (median and spread are what the suites report).
#pragma once

#include <vector>

#include "base/stalls.hpp"  // find_outliers, stall_share: the suites record both

namespace hpcnn {

struct Stats {
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, p5 = 0, p95 = 0;
  int count = 0;
};

// Percentiles by linear interpolation between closest ranks (numpy's default); stddev is the
// sample standard deviation (n - 1). An empty sample gives all zeros.
Stats compute_stats(std::vector<double> sample);
double percentile(const std::vector<double>& sorted, double q);  // q in [0, 100]

// Two-sided 95% confidence interval of the mean of `sample` (Student t with n - 1 degrees of
// freedom); {mean, mean} for fewer than two values.
struct Interval {
  double low = 0, high = 0;
};
Interval mean_confidence_95(const std::vector<double>& sample);
double student_t_975(int dof);  // 97.5% quantile of Student's t (dof >= 1)

}  // namespace hpcnn
