// The median of a sample, once for every layer: the middle value, or the mean of the two middle
// values; NaN for an empty sample (it has no median, and NaN shows where one was used).
#pragma once

#include <vector>

namespace hpcnn {

double median(std::vector<double> sample);

}  // namespace hpcnn
