#include "engine/buckets.hpp"

namespace hpcnn {

GradientBuckets::GradientBuckets(const Graph& graph, double bucket_bytes) {
  completed_by_.resize(graph.nodes().size());
  const double limit = bucket_bytes > 0 ? bucket_bytes / sizeof(float) : 0.0;
  Bucket current;
  bool open = false;
  // Parameters are in buffer order = the order backward produces them (graph.cpp finalize()).
  for (const ParamSpec& p : graph.params()) {
    if (open && limit > 0 && static_cast<double>(current.count + p.count) > limit) {
      buckets_.push_back(current);
      open = false;
    }
    if (!open) {
      current = Bucket{p.offset, 0, p.node};
      open = true;
    }
    current.count += p.count;
    current.last_node = p.node;
  }
  if (open) buckets_.push_back(current);
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    completed_by_[static_cast<std::size_t>(buckets_[b].last_node)].push_back(static_cast<int>(b));
}

}  // namespace hpcnn
