#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>

namespace hpcnn {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Stats compute_stats(std::vector<double> sample) {
  Stats s;
  if (sample.empty()) return s;
  std::sort(sample.begin(), sample.end());
  s.count = static_cast<int>(sample.size());
  s.min = sample.front();
  s.max = sample.back();
  s.median = percentile(sample, 50);
  s.p5 = percentile(sample, 5);
  s.p95 = percentile(sample, 95);
  double sum = 0;
  for (double x : sample) sum += x;
  s.mean = sum / static_cast<double>(sample.size());
  double ss = 0;
  for (double x : sample) ss += (x - s.mean) * (x - s.mean);
  s.stddev = sample.size() > 1 ? std::sqrt(ss / static_cast<double>(sample.size() - 1)) : 0.0;
  return s;
}

double student_t_975(int dof) {
  // Table for small dof (where it matters), then the normal approximation with a 1/dof term.
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return 0.0;
  if (dof <= 30) return table[dof - 1];
  return 1.959964 + 2.4 / static_cast<double>(dof);
}

Interval mean_confidence_95(const std::vector<double>& sample) {
  const Stats s = compute_stats(sample);
  if (s.count < 2) return {s.mean, s.mean};
  const double half = student_t_975(s.count - 1) * s.stddev / std::sqrt(static_cast<double>(s.count));
  return {s.mean - half, s.mean + half};
}

}  // namespace hpcnn
