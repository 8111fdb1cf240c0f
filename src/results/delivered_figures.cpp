#include "results/delivered_figures.hpp"

#include <algorithm>

#include "base/stalls.hpp"

namespace hpcnn {

namespace {

const Array* find_array(const ResultPoint& point, const char* name) {
  for (const Array& a : point.arrays)
    if (a.name == name) return &a;
  return nullptr;
}

// Per iteration the slowest rank of a [ranks][n] series (a one-dimensional series as it is).
std::vector<double> slowest_rank(const Array& a) {
  if (a.dims.size() == 1) return a.data;
  if (a.dims.size() != 2 || a.data.size() != a.dims[0] * a.dims[1]) return {};
  std::vector<double> out(a.dims[1], 0.0);
  for (std::size_t r = 0; r < a.dims[0]; ++r)
    for (std::size_t i = 0; i < a.dims[1]; ++i) out[i] = std::max(out[i], a.data[r * a.dims[1] + i]);
  return out;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

// A median-based rate moved to its _median field, the delivered one (the same work over the mean
// time) in its place.
void deliver(Record& r, const char* rate, const char* median_rate, double median_s, double mean_s) {
  const auto x = r.number(rate);
  if (!x || r.number(median_rate)) return;
  r.set(median_rate, *x);
  r.set(rate, *x * median_s / mean_s);
}

}  // namespace

void complete_delivered_figures(ResultPoint& point) {
  Record& r = point.record;
  if (r.number("stall_share")) return;
  const Array* series = find_array(point, "iter_time_s");
  const bool gemm = r.text("sweep") == "gemm";
  if (gemm) series = find_array(point, "call_time_s");
  if (!series) return;
  const std::vector<double> slowest = slowest_rank(*series);
  if (slowest.empty()) return;
  r.set("stall_share", stall_share(slowest));
  const auto median_s = r.number("iter_median_s");
  auto mean_s = r.number("iter_mean_s");
  if (!mean_s) {  // SGEMM points kept no mean: the calls' own
    mean_s = mean_of(slowest);
    r.set("iter_mean_s", *mean_s);
    if (gemm) r.set("sec_per_iter", *mean_s);
  }
  if (!median_s || !mean_s || !(*median_s > 0) || !(*mean_s > 0)) return;
  // The allreduce's bandwidths already come from the mean call; an epoch's rate from its wall time.
  if (r.text("suite") == "hpcnn-allreduce") return;
  deliver(r, "img_per_s", "img_per_s_median", *median_s, *mean_s);
  deliver(r, "gflops", "gflops_median", *median_s, *mean_s);
}

}  // namespace hpcnn
