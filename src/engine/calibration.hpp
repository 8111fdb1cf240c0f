// Post-training int8 calibration: over a few batches of an fp32 inference network that holds the
// model's parameters (and batch-norm statistics), the range of every Conv's and FullyConnected's
// input, of every output a Conv, FullyConnected or Add reads, and of every residual sum
// (value_range.hpp). A backend computing in int8 (Precision::Int8) takes the ranges through
// BackendSettings::calibration and quantizes with the scales they give.
#pragma once

#include <functional>

#include "engine/network.hpp"
#include "engine/value_range.hpp"

namespace hpcnn {

// The options of the fp32 network calibrate() runs: inference, every value materialized (no
// fusion, no memory plan), so that each layer's input can be read after the forward.
NetworkOptions calibration_options(int batch, std::uint64_t seed);

// Runs `batches` forwards of `net` (made with calibration_options), feed(net, k) setting batch k's
// input first, and returns the ranges over them (ActivationRanges).
ActivationRanges calibrate(Network& net, int batches, const std::function<void(Network&, int)>& feed);

}  // namespace hpcnn
