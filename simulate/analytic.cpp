#include "simulate/analytic.hpp"

#include <cmath>

#include "base/errors.hpp"
#include "collectives/exchange.hpp"

namespace hpcnn {

double route_hops(Topology topology, int nodes) {
  switch (topology) {
    case Topology::Flat: return 2;
    case Topology::FatTree: return nodes <= 2 ? 2 : 4;
    case Topology::Dragonfly: return nodes <= 4 ? 2 : 5;
    case Topology::Torus: return 1 + 0.75 * std::cbrt(static_cast<double>(nodes));
  }
  return 2;
}

double analytic_exchange_seconds(const std::string& scheme, int workers, int servers,
                                 const std::vector<double>& bucket_bytes, const AnalyticNetwork& net) {
  const ExchangeInfo& info = find_exchange(scheme);
  if (!info.bucket_seconds) throw UsageError("no alpha-beta model of the exchange '" + scheme + "'");
  const LinkCost cost{net.latency_s, net.seconds_per_byte, net.add_s_per_float / sizeof(float)};
  double total = 0;
  for (const double n : bucket_bytes) total += info.bucket_seconds(workers, servers, n, cost);
  return total;
}

}  // namespace hpcnn
