// What one float of host arithmetic costs on the simulated node (seconds per float), set once per
// simulated rank by simulate/sim_rank.cpp: the rates the simulated copies and sums are charged at.
#pragma once

namespace hpcnn {

struct SimRates {
  double add_s = 0;   // dst[i] += src[i] (also data[i] *= f)
  double copy_s = 0;  // dst[i] = src[i]
};

// This simulated rank's rates (SMPI privatizes a rank's globals: every rank sets its own).
SimRates& sim_rates();

}  // namespace hpcnn
