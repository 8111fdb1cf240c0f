// Stalls in a series of timed iterations: the iterations a pause made slow (a descheduled or
// stopped process, a throttled CPU quota, a page-in storm, a stalled file system) and the share of
// the timed time they cost. Every layer judges them alike: the suites when they record a point,
// the result reader for files that carry only the iteration times, the verdicts.
#pragma once

#include <vector>

namespace hpcnn {

// Timed iterations longer than 3x the median AND than the median plus 10 scaled MADs, so the
// ordinary spread of a noisy machine is not counted.
struct Outliers {
  int count = 0;
  double worst = 0;   // the slowest one's time (0: none)
  double excess = 0;  // what they took beyond the median pace, summed (s)
};
Outliers find_outliers(const std::vector<double>& sample);

// The share of the series' total time that its outlier iterations took beyond the median pace:
// 0 for a clean series however skewed its ordinary spread, 0.25 when stalls cost a quarter of the
// wall time. 0 for fewer than three iterations (no median to stand out from).
double stall_share(const std::vector<double>& sample);

}  // namespace hpcnn
