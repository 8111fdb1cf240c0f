// The alpha-beta-gamma estimate of one training step's gradient exchange alone (every bucket,
// nothing overlapped), beside what a simulation or a measurement gives: Hockney's model of a
// message (latency alpha + bytes x beta), with the reductions' adds (gamma per float), summed over
// the buckets with each scheme's own cost model, part of its registry entry (ExchangeInfo's
// bucket_seconds: ring.hpp, rhd.hpp, mpi_allreduce.hpp, exchange.hpp for the parameter servers).
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
