#include "simulate/backward_split.hpp"

#include <algorithm>
#include <cstddef>

#include "engine/op_cost.hpp"

namespace hpcnn {

namespace {

struct LayerWork {
  std::vector<double> flops, bytes;
  double total_flops = 0, total_bytes = 0;
};

LayerWork backward_work(const Graph& graph, int batch) {
  LayerWork w;
  const std::size_t n = graph.nodes().size();
  w.flops.assign(n, 0.0);
  w.bytes.assign(n, 0.0);
  for (std::size_t i = 1; i < n; ++i) {
    const OpCost c = op_backward_cost(graph, static_cast<int>(i), batch);
    w.flops[i] = c.flops, w.bytes[i] = c.bytes;
    w.total_flops += c.flops, w.total_bytes += c.bytes;
  }
  return w;
}

// Every layer's roofline time at compute rate `flops_per_s` (0: no compute term) and memory rate
// `bytes_per_s` (0: no memory term).
std::vector<double> roofline(const LayerWork& w, double flops_per_s, double bytes_per_s) {
  std::vector<double> t(w.flops.size(), 0.0);
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i] = std::max(flops_per_s > 0 ? w.flops[i] / flops_per_s : 0.0, bytes_per_s > 0 ? w.bytes[i] / bytes_per_s : 0.0);
  return t;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

std::vector<double> scaled_to(std::vector<double> t, double total) {
  const double s = sum(t);
  for (double& x : t) x = s > 0 ? x * total / s : 0.0;
  return t;
}

}  // namespace

std::vector<double> backward_split(const Graph& graph, int batch, double backward_s, double memory_bytes_per_s) {
  const LayerWork w = backward_work(graph, batch);
  if (backward_s <= 0) return std::vector<double>(w.flops.size(), 0.0);
  if (memory_bytes_per_s <= 0 || w.total_flops <= 0) return scaled_to(w.total_flops > 0 ? w.flops : w.bytes, backward_s);
  // At the mean rate the layers take at least backward_s (each layer's time is at least its
  // FLOPs' share); as F grows they tend to the traffic's time. When that is below backward_s,
  // the F between that makes them add up exactly is found by bisection (the sum falls with F).
  const double mean_rate = w.total_flops / backward_s;
  if (w.total_bytes / memory_bytes_per_s >= backward_s) return scaled_to(roofline(w, mean_rate, memory_bytes_per_s), backward_s);
  double lo = mean_rate, hi = 2 * mean_rate;
  while (sum(roofline(w, hi, memory_bytes_per_s)) > backward_s) lo = hi, hi *= 2;
  for (int k = 0; k < 100; ++k) {
    const double mid = 0.5 * (lo + hi);
    (sum(roofline(w, mid, memory_bytes_per_s)) > backward_s ? lo : hi) = mid;
  }
  return scaled_to(roofline(w, hi, memory_bytes_per_s), backward_s);
}

}  // namespace hpcnn
