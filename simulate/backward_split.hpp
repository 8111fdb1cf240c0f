// How a measured backward time is spread over a model's layers in a simulation. The gradient
// buckets start as the backward pass completes their layers, so when each layer ends decides how
// much of the exchange overlaps the backward pass.
#pragma once

#include <vector>

#include "engine/graph.hpp"

namespace hpcnn {

// Each graph node's share of `backward_s` (graph order; the input node gets none), by a roofline
// of its backward work (engine/op_cost.hpp): max(FLOPs / F, bytes / memory_bytes_per_s), with F
// the compute rate at which the layers add up to backward_s. So a memory-bound layer (activation,
// pooling, normalization, the loss) gets the time its traffic takes at the node's memory rate,
// and the compute-bound layers share the rest by FLOPs. Where the traffic alone would take longer
// than backward_s (small tensors stay in cache), the same roofline at the layers' mean compute
// rate, scaled to backward_s. memory_bytes_per_s 0: by FLOPs alone.
std::vector<double> backward_split(const Graph& graph, int batch, double backward_s, double memory_bytes_per_s);

}  // namespace hpcnn
