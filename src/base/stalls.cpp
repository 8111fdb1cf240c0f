#include "base/stalls.hpp"

#include <algorithm>
#include <cmath>

#include "base/median.hpp"

namespace hpcnn {

Outliers find_outliers(const std::vector<double>& sample) {
  Outliers out;
  if (sample.size() < 3) return out;  // no median to stand out from
  const double mid = median(sample);
  std::vector<double> deviations;
  deviations.reserve(sample.size());
  for (double x : sample) deviations.push_back(std::fabs(x - mid));
  const double sigma = 1.4826 * median(deviations);  // the MAD as a normal's sigma
  const double limit = std::max(3 * mid, mid + 10 * sigma);
  for (double x : sample)
    if (x > limit) {
      ++out.count;
      out.worst = std::max(out.worst, x);
      out.excess += x - mid;
    }
  return out;
}

double stall_share(const std::vector<double>& sample) {
  double total = 0;
  for (double x : sample) total += x;
  if (!(total > 0)) return 0.0;
  return find_outliers(sample).excess / total;
}

}  // namespace hpcnn
