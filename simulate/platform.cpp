#include "simulate/platform.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "base/errors.hpp"
#include "base/median.hpp"

namespace hpcnn {

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

int next_power_of_two(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

std::string text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A two-level fat tree with full bisection: d hosts per leaf switch, d spines, as many leaves as
// the nodes need (SimGrid: "levels;down;up;link counts").
std::pair<int, std::string> fat_tree(int nodes) {
  const int d = std::max(2, next_power_of_two(static_cast<int>(std::ceil(std::sqrt(static_cast<double>(nodes))))));
  const int leaves = ceil_div(nodes, d);
  return {d * leaves, "2;" + std::to_string(d) + "," + std::to_string(leaves) + ";1," + std::to_string(d) + ";1,1"};
}

// Dragonfly: 4 nodes per router, up to 4 routers per chassis and 4 chassis per group, then groups.
std::pair<int, std::string> dragonfly(int nodes) {
  const int n = std::min(4, nodes), r = std::min(4, ceil_div(nodes, n)), c = std::min(4, ceil_div(nodes, n * r));
  const int g = ceil_div(nodes, n * r * c);
  return {g * c * r * n, std::to_string(g) + ",2;" + std::to_string(c) + ",2;" + std::to_string(r) + ",1;" + std::to_string(n)};
}

// A 3-D torus as close to a cube as the node count allows.
std::pair<int, std::string> torus(int nodes) {
  const int z = std::max(1, static_cast<int>(std::ceil(std::cbrt(static_cast<double>(nodes)) - 1e-9)));
  const int y = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(nodes) / z) - 1e-9)));
  const int x = ceil_div(nodes, y * z);
  return {x * y * z, std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z)};
}

}  // namespace

Topology parse_topology(const std::string& name) {
  static const std::map<std::string, Topology> names = {
      {"fat-tree", Topology::FatTree}, {"dragonfly", Topology::Dragonfly}, {"torus", Topology::Torus}, {"flat", Topology::Flat}};
  const auto it = names.find(name);
  if (it == names.end()) throw UsageError("--topology: '" + name + "' is not fat-tree, dragonfly, torus or flat");
  return it->second;
}

const char* topology_name(Topology t) {
  switch (t) {
    case Topology::FatTree: return "fat-tree";
    case Topology::Dragonfly: return "dragonfly";
    case Topology::Torus: return "torus";
    case Topology::Flat: return "flat";
  }
  return "?";
}

Platform make_platform(const PlatformSpec& spec) {
  if (spec.nodes < 1 || spec.ranks_per_node < 1) throw UsageError("a platform needs at least one node and one rank per node");
  Platform p;
  const char* topology = nullptr;
  switch (spec.topology) {
    case Topology::FatTree: std::tie(p.hosts, p.topo_parameters) = fat_tree(spec.nodes), topology = "FAT_TREE"; break;
    case Topology::Dragonfly: std::tie(p.hosts, p.topo_parameters) = dragonfly(spec.nodes), topology = "DRAGONFLY"; break;
    case Topology::Torus: std::tie(p.hosts, p.topo_parameters) = torus(spec.nodes), topology = "TORUS"; break;
    case Topology::Flat: p.hosts = spec.nodes; break;
  }
  const double gbps = spec.link.bandwidth_bps * 8e-9, lat_us = spec.link.latency_s * 1e6;
  p.name = std::string(topology_name(spec.topology)) + " " + std::to_string(spec.nodes) + " nodes x " +
           std::to_string(spec.ranks_per_node) + " ranks, " + text("%.4g", gbps) + " Gb/s, " + text("%.3g", lat_us) + " us";
  std::string cluster = "    <cluster id=\"hpcnn\" prefix=\"node-\" radical=\"0-" + std::to_string(p.hosts - 1) +
                        "\" suffix=\"\" speed=\"1Tf\" core=\"" + std::to_string(spec.ranks_per_node) + "\" bw=\"" +
                        text("%.17gBps", spec.link.bandwidth_bps) + "\" lat=\"" + text("%.17gs", spec.link.latency_s) + "\"";
  if (topology) cluster += " topology=\"" + std::string(topology) + "\" topo_parameters=\"" + p.topo_parameters + "\"";
  if (spec.ranks_per_node > 1)
    cluster += " loopback_bw=\"" + text("%.17gBps", spec.loopback_bandwidth_bps) + "\" loopback_lat=\"" +
               text("%.17gs", spec.loopback_latency_s) + "\"";
  p.xml = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
          "  <!-- hpcnn-simulate: " + p.name + " -->\n  <zone id=\"world\" routing=\"Full\">\n" + cluster +
          "/>\n  </zone>\n</platform>\n";
  std::vector<std::string> hosts;
  for (int i = 0; i < spec.nodes; ++i) hosts.push_back("node-" + std::to_string(i));
  p.hostfile = hostfile_for(hosts, spec.nodes, spec.ranks_per_node);
  return p;
}

std::string hostfile_for(const std::vector<std::string>& hosts, int nodes, int ranks_per_node) {
  std::string out;
  for (int i = 0; i < nodes && i < static_cast<int>(hosts.size()); ++i)
    out += hosts[static_cast<std::size_t>(i)] + ":" + std::to_string(ranks_per_node) + "\n";
  return out;
}

FittedLink fit_link(const std::vector<Record>& points, double add_s_per_float, const std::string& what) {
  // Every record of a size (a file may hold several runs or rounds of one), then their median.
  std::map<double, std::vector<double>> times_by_bytes;
  for (const Record& r : points) {
    if (r.text("suite") != "hpcnn-allreduce" || r.text("exchange") != "ring" || r.number("ranks").value_or(0) != 2) continue;
    const auto bytes = r.number("size_bytes");
    auto seconds = r.number("iter_median_s");
    if (!seconds) {
      if (const auto us = r.number("time_avg_us")) seconds = *us * 1e-6;
    }
    if (bytes && seconds && *seconds > 0) times_by_bytes[*bytes].push_back(*seconds);
  }
  std::map<double, double> time_by_bytes;
  for (const auto& [bytes, times] : times_by_bytes) time_by_bytes[bytes] = median(times);
  if (time_by_bytes.size() < 2)
    throw UsageError(what + ": the link is fitted from hpcnn-allreduce --exchange ring at 2 ranks (one per host) and at "
                            "least two --sizes; it holds " + std::to_string(time_by_bytes.size()) + " such sizes");
  // time = intercept + slope x bytes over every size, by least squares of the relative error
  // (weights 1/time^2): each size counts as much as any other, so neither the small sizes' latency
  // nor a single slow large size decides the line alone.
  std::vector<std::pair<double, double>> v(time_by_bytes.begin(), time_by_bytes.end());
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  for (const auto& [x, t] : v) {
    const double w = 1.0 / (t * t);
    s0 += w, s1 += w * x, s2 += w * x * x, t0 += w * t, t1 += w * x * t;
  }
  const double slope = (s0 * t1 - s1 * t0) / (s0 * s2 - s1 * s1);
  const double intercept = (t0 - slope * s1) / s0;
  // Per byte: the bytes cross the link once each way (2 x half the message); half the message's
  // floats are added (add_s_per_float per 4 bytes).
  const double per_byte = slope - add_s_per_float / 8.0;
  if (!(per_byte > 0))
    throw UsageError(what + ": the measured ring allreduce grows too little with its size to fit a bandwidth (slope " +
                     text("%.3g", slope) + " s/B)");
  FittedLink f;
  f.link.bandwidth_bps = 1.0 / per_byte;
  // Two messages' latency in the intercept, each crossing two links (host - switch - host).
  f.link.latency_s = std::max(1e-9, intercept / 4.0);
  f.points = static_cast<int>(v.size());
  for (const auto& [x, t] : v) f.worst_fit_error = std::max(f.worst_fit_error, std::abs(intercept + slope * x - t) / t);
  f.smallest_bytes = v.front().first, f.largest_bytes = v.back().first;
  return f;
}

Link link_over_route(const FittedLink& fitted, double route_hops) {
  if (!(route_hops >= 1)) throw std::invalid_argument("link_over_route: a route crosses at least one link");
  return Link{fitted.link.latency_s * 2 / route_hops, fitted.link.bandwidth_bps};
}

}  // namespace hpcnn
