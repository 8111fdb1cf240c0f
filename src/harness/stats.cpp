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

}  // namespace hpcnn
