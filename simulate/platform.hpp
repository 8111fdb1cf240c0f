// Simulated platforms for hpcnn-simulate (SimGrid's XML, DTD 4.1): a cluster of nodes joined by
// a fat tree, a dragonfly, a 3-D torus or one flat switch, with a link speed and latency per hop,
// and the hostfile that places ranks on its nodes; and the link fitted from a measured
// hpcnn-allreduce (latency and bandwidth of the user's own network). No SimGrid code: text only.
#pragma once

#include <string>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

enum class Topology { FatTree, Dragonfly, Torus, Flat };
Topology parse_topology(const std::string& name);  // fat-tree | dragonfly | torus | flat; UsageError otherwise
const char* topology_name(Topology t);

struct Link {
  double latency_s = 1e-6;     // per hop (a fat tree's route crosses 2 or 4 links, a flat one 2)
  double bandwidth_bps = 25e9 / 8;  // bytes per second, each direction
};

struct PlatformSpec {
  Topology topology = Topology::FatTree;
  int nodes = 1;           // nodes the run uses (the platform may have a few more)
  int ranks_per_node = 1;  // ranks placed on each node (cores of the node)
  Link link;
  double loopback_bandwidth_bps = 100e9;  // between the ranks of one node
  double loopback_latency_s = 2e-7;
};

struct Platform {
  std::string name;      // "fat-tree 64 nodes, 25 Gb/s, 1 us"
  std::string xml;       // the platform file
  std::string hostfile;  // "node-0:R" lines, one per node used
  int hosts = 0;         // nodes in the platform (>= spec.nodes)
  std::string topo_parameters;  // SimGrid's topo_parameters ("" for flat)
};

// The platform of `spec`: the smallest of its kind with at least spec.nodes nodes.
Platform make_platform(const PlatformSpec& spec);
// A hostfile for `nodes` of the given host names, `ranks_per_node` ranks each (a user's platform).
std::string hostfile_for(const std::vector<std::string>& hosts, int nodes, int ranks_per_node);

// The link of the user's network from a measured hpcnn-allreduce (ring, 2 ranks on 2 hosts, at
// least two sizes): its time is 2 latencies + the bytes once each way + the adds of half the
// message, a line over the sizes fitted by relative error, so a message's latency is half the
// line's intercept, half of that per link of the two a flat switch's route crosses, and the
// bandwidth is the slope's, less the adds (add_s_per_float, measured on the node). Throws
// UsageError naming what the points lack.
struct FittedLink {
  Link link;  // as measured: a route of two links (host - switch - host)
  int points = 0;
  double smallest_bytes = 0, largest_bytes = 0;
  double worst_fit_error = 0;  // the line's largest relative distance from a measured size
};
FittedLink fit_link(const std::vector<Record>& allreduce_points, double add_s_per_float, const std::string& what);

// The fitted link on a platform whose typical route crosses `route_hops` links: a message's
// measured latency, which the endpoints (NICs, MPI) make more than the switches, is spread over
// that route's links, so a route through the fabric takes the measured latency, not a multiple of
// it (a route within one leaf switch, fewer links, takes less). The bandwidth is the fitted one.
Link link_over_route(const FittedLink& fitted, double route_hops);

}  // namespace hpcnn
