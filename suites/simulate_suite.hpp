// hpcnn-simulate: data-parallel training of one measured node simulated on a network of any size
// with SimGrid's SMPI. Each point runs the exchange schemes' own code (collectives/, built with
// smpicxx into hpcnn-simulate-rank.so: simulate/sim_rank.cpp) as every rank of a simulated
// platform, with the node's compute taken from a measured result file, and records what
// hpcnn-scale would: images/s, efficiency against the node, phases, bytes, overlap, plus the
// platform, the alpha-beta(-gamma) estimate of the exchange, and what the simulation cost.
// docs/SIMULATION.md says how to calibrate, project and how far to trust it.
#pragma once

namespace hpcnn {

int run_simulate_suite(int argc, char** argv);

}  // namespace hpcnn
