// The range of values a tensor took over some batches: what int8 post-training quantization
// derives its activation scales from (engine/calibration.hpp measures it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <string>

namespace hpcnn {

struct ValueRange {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  bool empty() const { return min > max; }
  float abs_max() const { return empty() ? 0.0f : std::max(-min, max); }
  void add(const float* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      min = std::min(min, v[i]);
      max = std::max(max, v[i]);
    }
  }
};

// For each Conv and FullyConnected node, by node name: the range of the node's input; and for
// every node whose output a Conv, FullyConnected or Add reads, and every residual sum (an Add, the
// ReLU after one), under output_range_key(its name): the range of that output (what a producer
// stores its output quantized with, for all its readers).
using ActivationRanges = std::map<std::string, ValueRange>;

inline std::string output_range_key(const std::string& node_name) { return node_name + ":output"; }

}  // namespace hpcnn
