// Work of one operator call, for the per-operator profile (--profile ops): floating-point
// operations (multiply-add = 2, as Graph::flops_forward_per_sample) and the minimum bytes moved
// (every input, output and parameter tensor read or written once, 4-byte floats). A model, not a
// measurement: it states what the op must do at least, so time / work gives a lower-bound rate.
#pragma once

#include <cstddef>

#include "engine/graph.hpp"

namespace hpcnn {

struct OpCost {
  double flops = 0;
  double bytes = 0;
};

// One call of node `node` on a batch of `batch` samples; backward = data and weight gradients.
OpCost op_forward_cost(const Graph& graph, int node, int batch);
OpCost op_backward_cost(const Graph& graph, int node, int batch);
// The optimizer step over `params` parameters (SGD with momentum: ~4 FLOPs, 4 arrays touched).
OpCost weights_update_cost(std::size_t params);

}  // namespace hpcnn
