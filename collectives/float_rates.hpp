// The node's rates for the exchange's memory work: the schemes sum received gradients into their
// buffers (add_floats) and copy them (copy_floats), and at large messages these rates, not the
// network, can set an exchange's speed. hpcnn-train and hpcnn-scale record them with every point
// (node_add_gbps, node_copy_gbps), so that a simulation or an estimate made elsewhere charges the
// measured node's rates, not those of the machine it runs on.
#pragma once

namespace hpcnn {

// GB/s of floats: 4-byte elements of one operand per second (an add reads two and writes one, a
// copy reads one and writes one).
struct FloatRates {
  double add_gbps = 0;
  double copy_gbps = 0;
};

// add_floats and copy_floats over 16 MiB (beyond the caches, as gradient buckets are), one thread,
// best of 5 passes each. About 30 ms.
FloatRates measure_float_rates();

// measure_float_rates() once per process: the first call measures, later ones return that figure.
const FloatRates& node_float_rates();

}  // namespace hpcnn
