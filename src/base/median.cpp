#include "base/median.hpp"

#include <algorithm>
#include <limits>

namespace hpcnn {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  if (n % 2) return v[mid];
  const double upper = v[mid];
  return 0.5 * (*std::max_element(v.begin(), v.begin() + static_cast<long>(mid)) + upper);
}

}  // namespace hpcnn
