#include "results/delivered_figures.hpp"

#include <algorithm>

#include "base/stalls.hpp"
#include "results/bounded_series.hpp"

namespace hpcnn {

namespace {

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
  const bool gemm = r.text("sweep") == "gemm";
  const std::optional<SeriesView> series = read_series(point, gemm ? "call_time_s" : "iter_time_s");
  if (!series || series->slowest.empty()) return;
  r.set("stall_share", stall_share(series->slowest));
  const auto median_s = r.number("iter_median_s");
  auto mean_s = r.number("iter_mean_s");
  if (!mean_s) {  // SGEMM points kept no mean: the calls' own
    mean_s = series->slowest_sum / static_cast<double>(series->slowest.size());
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
