#include "simulate/analytic.hpp"

#include <cmath>

#include "base/errors.hpp"

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
  const double p = workers, a = net.latency_s, b = net.seconds_per_byte, g = net.add_s_per_float / sizeof(float);
  double total = 0;
  for (const double n : bucket_bytes) {
    if (scheme == "ring") {
      if (workers > 1) total += 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g;
    } else if (scheme == "rhd") {
      if (workers > 1) {
        const double lg = std::floor(std::log2(p)), pof2 = std::exp2(lg);
        total += 2 * lg * a + 2 * (pof2 - 1) / pof2 * n * b + (pof2 - 1) / pof2 * n * g;
        if (pof2 < p) total += 2 * (a + n * b) + n * g;  // folding the extra ranks in and out
      }
    } else if (scheme == "mpi") {
      const double lg = std::ceil(std::log2(p));
      total += 2 * lg * (a + n * b) + lg * n * g;
    } else if (scheme == "ps-sync" || scheme == "ps-async") {
      const double s = servers > 0 ? servers : 1;
      total += 2 * p * n / s * b + 2 * a + (p - 1) * n / s * g;
    } else {
      throw UsageError("no alpha-beta model of the exchange '" + scheme + "'");
    }
  }
  return total;
}

}  // namespace hpcnn
