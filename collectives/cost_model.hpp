// The alpha-beta-gamma cost model every exchange scheme gives in its registry entry
// (collectives/exchange.hpp), pure arithmetic types: each scheme's header declares its own model.
#pragma once

namespace hpcnn {

// What a message and a reduction cost on a network, in Hockney's model: a message of n bytes
// between two ranks takes alpha + n beta, summing n bytes of floats n gamma.
struct LinkCost {
  double latency_s = 0;         // alpha
  double seconds_per_byte = 0;  // beta
  double add_s_per_byte = 0;    // gamma
};
// A scheme's cost model: the seconds of one bucket of `bytes` exchanged over `workers` workers (and
// `servers` parameter servers), alone on the network (Thakur, Rabenseifner and Gropp, Int. J. HPC
// Applications 19(1), 2005, for the allreduce algorithms). hpcnn-simulate's analytic estimate.
using BucketCost = double (*)(int workers, int servers, double bytes, const LinkCost& net);

}  // namespace hpcnn
