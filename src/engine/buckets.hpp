// Gradient buckets: the contiguous gradient buffer split into ranges in the order backward
// produces them, each ending on a parameter boundary. Collectives exchange one bucket at a time.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/graph.hpp"

namespace hpcnn {

struct Bucket {
  std::size_t offset = 0;  // floats into the gradient buffer
  std::size_t count = 0;   // floats
  int last_node = 0;       // the bucket is complete once backward of this node has run
};

class GradientBuckets {
 public:
  // bucket_bytes <= 0: one bucket with every gradient. A parameter larger than bucket_bytes gets
  // a bucket of its own.
  GradientBuckets(const Graph& graph, double bucket_bytes);
  const std::vector<Bucket>& buckets() const { return buckets_; }
  std::size_t size() const { return buckets_.size(); }
  // Buckets completed by backward of `node` (possibly none), in increasing order.
  const std::vector<int>& completed_by(int node) const { return completed_by_.at(static_cast<std::size_t>(node)); }

 private:
  std::vector<Bucket> buckets_;
  std::vector<std::vector<int>> completed_by_;
};

}  // namespace hpcnn
