// Order statistics of a sample of timings (median and spread are what the suites report).
#pragma once

#include <vector>

namespace hpcnn {

struct Stats {
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, p5 = 0, p95 = 0;
  int count = 0;
};

// Percentiles by linear interpolation between closest ranks (numpy's default); stddev is the
// sample standard deviation (n - 1). An empty sample gives all zeros.
Stats compute_stats(std::vector<double> sample);
double percentile(const std::vector<double>& sorted, double q);  // q in [0, 100]

// Timed iterations that a pause made slow (a stopped or descheduled rank, a page-in storm, a
// stalled file system): longer than 3x the median AND than the median plus 10 scaled MADs, so the
// ordinary spread of a noisy machine is not flagged. A point's rates still include them; the count
// says its measurement is not clean.
struct Outliers {
  int count = 0;
  double worst = 0;  // the slowest one's time (0: none)
};
Outliers find_outliers(const std::vector<double>& sample);

// Two-sided 95% confidence interval of the mean of `sample` (Student t with n - 1 degrees of
// freedom); {mean, mean} for fewer than two values.
struct Interval {
  double low = 0, high = 0;
};
Interval mean_confidence_95(const std::vector<double>& sample);
double student_t_975(int dof);  // 97.5% quantile of Student's t (dof >= 1)

}  // namespace hpcnn
