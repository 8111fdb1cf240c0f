// The alpha-beta-gamma estimate of one training step's gradient exchange alone (every bucket,
// nothing overlapped), beside what a simulation or a measurement gives: Hockney's model of a
// message (latency alpha + bytes x beta), with the reductions' adds (gamma per float), and the
// costs Thakur, Rabenseifner and Gropp give for the algorithms (Int. J. HPC Applications 19(1),
// 2005):
//   ring   2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma                  per bucket of n bytes
//   rhd    2 log2 P alpha + 2(P-1)/P n beta + (P-1)/P n gamma  (+ a step each way beyond a power of 2)
//   mpi    2 ceil(log2 P) (alpha + n beta) + ceil(log2 P) n gamma  (binomial reduce, then broadcast:
//          what Open MPI's libnbc runs for an in-place MPI_Iallreduce)
//   ps-*   each of S servers takes a 1/S shard from W workers and sends it back: its link carries
//          W n/S each way, so 2 W n/S beta + 2 alpha + (W - 1) n/S gamma (the server's bound)
// Contention between buckets, the network's topology beyond a mean route latency, and overlap
// with backward are what the simulation adds; docs/SIMULATION.md compares the three.
#pragma once

#include <string>
#include <vector>

#include "simulate/platform.hpp"

namespace hpcnn {

struct AnalyticNetwork {
  double latency_s = 0;         // alpha: one message between two ranks (the route's hops)
  double seconds_per_byte = 0;  // beta
  double add_s_per_float = 0;   // gamma
};

// The mean number of links a route crosses in the platform (fat tree: 2 within a leaf switch, 4
// across; dragonfly 5; torus 1 + the mean distance; flat 2).
double route_hops(Topology topology, int nodes);

// One step's exchange of `bucket_bytes` over `workers` workers (and `servers` parameter servers).
double analytic_exchange_seconds(const std::string& scheme, int workers, int servers,
                                 const std::vector<double>& bucket_bytes, const AnalyticNetwork& net);

}  // namespace hpcnn
