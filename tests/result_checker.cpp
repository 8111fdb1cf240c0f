// result_checker FILE: recomputes every throughput figure of a suite's result file from the raw
// per-iteration times stored in it, and checks the provenance. Exit 0 when all agree.
// Points of hpcnn-train/-infer are checked further: every statistic, the phase medians,
// that the phases add up to each iteration within the stated 2%, the repeat spread and its
// confidence interval, the per-rank memory, and the --profile ops arrays. Points that are not ok
// (failed, diverged, skipped) carry a reason and a reproducer instead of figures.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "harness/stats.hpp"
#include "harness/rank_series.hpp"
#include "results/result_file.hpp"

using namespace hpcnn;

namespace {

const Array* find_array(const ResultPoint& p, const std::string& name) {
  for (const Array& a : p.arrays)
    if (a.name == name) return &a;
  return nullptr;
}

bool near(double a, double b, double rel = 1e-12) { return std::fabs(a - b) <= rel * std::max({1e-300, std::fabs(a), std::fabs(b)}); }

// The model suites' figures, recomputed from the arrays with code independent of the suite's.
template <typename Check>
void check_model_point(const ResultPoint& p, const std::vector<double>& slowest, double images, Check check) {
  const Record& r = p.record;
  const Stats s = compute_stats(slowest);
  check(near(r.number("iter_mean_s").value_or(-1), s.mean, 1e-9), "mean");
  check(near(r.number("iter_std_s").value_or(-1), s.stddev, 1e-9), "std");
  check(r.number("iter_min_s") == s.min && r.number("iter_max_s") == s.max, "min/max");
  check(near(r.number("iter_p5_s").value_or(-1), s.p5), "p5");
  // Warm-up kept in the file, never in the statistics: each warm-up array entry is a real
  // iteration and none of them took part (min/max above come from iter_time_s alone).
  const Array* warm = find_array(p, "warmup_time_s");
  check(warm && warm->dims.size() == 2 &&
            warm->dims[1] == static_cast<std::size_t>(r.number("warmup").value_or(-1) * r.number("repeats").value_or(1)),
        "warmup_time_s shape");
  // Phase medians of the slowest rank, and the phase sum against every iteration of every rank.
  const char* phases[][2] = {{"load_time_s", "load_s"}, {"forward_time_s", "forward_s"}, {"backward_time_s", "backward_s"},
                             {"comm_wait_time_s", "comm_wait_s"}, {"update_time_s", "update_s"}};
  const Array* iter = find_array(p, "iter_time_s");
  std::vector<double> sum(iter->data.size(), 0.0);
  for (const auto& ph : phases) {
    const Array* a = find_array(p, ph[0]);
    check(a && a->dims == iter->dims, "phase array shape");
    if (!a || a->dims != iter->dims) return;
    check(near(r.number(ph[1]).value_or(-1), compute_stats(max_over_ranks(*a)).median), ph[1]);
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += a->data[k];
  }
  // hpcnn-scale: the backward compute is each backward phase less its exchange calls, the slowest
  // worker's per iteration, their median; never more than the phase itself.
  if (const Array* in_exchange = find_array(p, "exchange_in_backward_time_s")) {
    const Array* backward = find_array(p, "backward_time_s");
    check(in_exchange->dims == backward->dims, "exchange_in_backward_time_s shape");
    Array compute = *backward;
    bool within = in_exchange->data.size() == compute.data.size();
    for (std::size_t k = 0; within && k < compute.data.size(); ++k) {
      within = in_exchange->data[k] >= 0 && in_exchange->data[k] <= compute.data[k] * 1.0001 + 1e-7;
      compute.data[k] = std::max(0.0, compute.data[k] - in_exchange->data[k]);
    }
    check(within, "exchange_in_backward_time_s within each backward phase");
    check(near(r.number("backward_compute_s").value_or(-1), compute_stats(max_over_ranks(compute)).median),
          "backward_compute_s");
  }
  double gap = 0;
  std::int64_t misses = 0;
  for (std::size_t k = 0; k < sum.size(); ++k) {
    const double g = std::fabs(iter->data[k] - sum[k]) / iter->data[k];
    gap = std::max(gap, g);
    misses += g > 0.02;
  }
  check(static_cast<double>(misses) <= std::max(1.0, 0.01 * static_cast<double>(sum.size())),
        "phases do not add up to the iteration time within 2% in 99% of the iterations");
  check(near(r.number("phase_gap_max").value_or(-1), gap, 1e-9), "phase_gap_max");
  check(r.number("phase_gap_iters").value_or(-1) == static_cast<double>(misses), "phase_gap_iters");
  check(r.text("phase_check") == "ok", "phase_check");
  // Repeats: each repeat's delivered throughput from its own slice (its mean iteration), then the
  // spread and the 95% interval.
  const auto repeats = static_cast<std::size_t>(r.number("repeats").value_or(0));
  check(repeats >= 1 && slowest.size() % repeats == 0, "repeats");
  if (repeats >= 1 && slowest.size() % repeats == 0) {
    const std::size_t per = slowest.size() / repeats;
    std::vector<double> rates;
    for (std::size_t k = 0; k < repeats; ++k)
      rates.push_back(images / compute_stats({slowest.begin() + k * per, slowest.begin() + (k + 1) * per}).mean);
    const Stats rs = compute_stats(rates);
    check(near(r.number("img_per_s_rep_min").value_or(-1), rs.min, 1e-9) &&
              near(r.number("img_per_s_rep_max").value_or(-1), rs.max, 1e-9),
          "repeat min/max");
    const double half = repeats > 1 ? student_t_975(static_cast<int>(repeats) - 1) * rs.stddev / std::sqrt(double(repeats)) : 0.0;
    check(near(r.number("img_per_s_ci_low").value_or(-1), rs.mean - half, 1e-9) &&
              near(r.number("img_per_s_ci_high").value_or(-1), rs.mean + half, 1e-9),
          "confidence interval");
  }
  const Array* peak = find_array(p, "peak_rss_mib");
  check(peak && peak->data.size() == iter->dims[0] &&
            r.number("peak_rss_mib") == *std::max_element(peak->data.begin(), peak->data.end()),
        "peak_rss_mib is the largest rank's");
  const Array* rss = find_array(p, "rss_mib");
  check(rss && rss->dims == iter->dims, "rss_mib samples: one per iteration and rank");
  if (r.text("profile") == "ops") {
    const Array* ops = find_array(p, "op_time_s");
    std::size_t kinds = 1;
    for (char c : r.text("op_kinds")) kinds += c == ',';
    check(ops && ops->dims.size() == 2 && ops->dims[1] == kinds, "op_time_s shape");
    check(r.number("profile_overhead").has_value() && r.number("profile_iter_median_s").has_value(), "profile overhead");
    const Array* prof = find_array(p, "profile_iter_time_s");
    check(prof && near(r.number("profile_iter_median_s").value_or(-1), compute_stats(max_over_ranks(*prof)).median),
          "profile_iter_median_s");
    check(near(r.number("profile_overhead").value_or(-9), r.number("profile_iter_median_s").value_or(0) / s.median - 1.0, 1e-9),
          "profile_overhead = profiled / unprofiled median - 1");
    // The operators' times add up to no more than the profiled iterations' (rank 0).
    if (ops && prof && ops->dims.size() == 2) {
      double op_sum = 0, it_mean = 0;
      for (std::size_t k = 0; k < ops->dims[1]; ++k) op_sum += ops->data[k];
      for (std::size_t k = 0; k < prof->dims[1]; ++k) it_mean += prof->data[k] / double(prof->dims[1]);
      check(op_sum > 0 && op_sum <= it_mean * 1.02, "operator times exceed the profiled iteration");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: result_checker FILE\n");
    return 2;
  }
  try {
    const ResultRun run = read_result_file(argv[1]);
    int bad = 0;
    auto check = [&](bool ok, const char* what) {
      if (!ok) {
        std::fprintf(stderr, "%s: %s\n", argv[1], what);
        ++bad;
      }
    };
    check(run.schema_version == kSchemaVersion, "schema version");
    check(!run.provenance.command_line.empty(), "command line missing");
    check(static_cast<int>(run.provenance.hosts.size()) == run.provenance.mpi_size, "one host per rank");
    check(!run.provenance.start_time.empty() && !run.provenance.end_time.empty(), "times missing");
    check(!run.points.empty(), "no points");
    for (const ResultPoint& p : run.points) {
      // The four statuses of docs/RESULTS.md. A point that is not ok has no figures to recompute:
      // it must say why and how to rerun it, and must not pass off a throughput as measured.
      const std::string status = p.record.text("status");
      check(status == "ok" || status == "failed" || status == "diverged" || status == "skipped",
            "status not ok|failed|diverged|skipped");
      if (status != "ok") {
        check(!p.record.text("status_reason").empty(), "status_reason missing on a point that is not ok");
        check(!p.record.text("reproducer").empty(), "reproducer missing");
        check(!p.record.number("img_per_s"), "img_per_s on a point that is not ok");
        continue;
      }
      const Array* iters = nullptr;
      for (const Array& a : p.arrays)
        if (a.name == "iter_time_s") iters = &a;
      check(iters != nullptr, "iter_time_s missing");
      if (!iters) continue;
      // The ranks that train: hpcnn-scale's workers (parameter servers have no iterations), else all.
      const auto ranks = static_cast<std::size_t>(
          p.record.number("workers").value_or(p.record.number("ranks").value_or(0)));
      const auto repeats = static_cast<std::size_t>(p.record.number("repeats").value_or(1));
      const auto n = repeats * static_cast<std::size_t>(p.record.number("iters").value_or(0));
      check(iters->dims.size() == 2 && iters->dims[0] == ranks && iters->dims[1] == n, "iter_time_s shape");
      std::vector<double> slowest(n, 0.0);
      for (std::size_t r = 0; r < ranks; ++r)
        for (std::size_t i = 0; i < n; ++i) slowest[i] = std::max(slowest[i], iters->data[r * n + i]);
      const Stats s = compute_stats(slowest);
      const double batch = p.record.number("batch").value_or(0);
      // Delivered: the timed images over the timed wall time (the slowest rank's iterations summed).
      const double expect = batch * static_cast<double>(ranks) / s.mean;
      const double got = p.record.number("img_per_s").value_or(-1);
      check(std::fabs(got - expect) <= 1e-9 * expect, "img_per_s differs from batch x training ranks / mean iteration");
      const double expect_median = batch * static_cast<double>(ranks) / s.median;
      const double got_median = p.record.number("img_per_s_median").value_or(-1);
      check(std::fabs(got_median - expect_median) <= 1e-9 * expect_median,
            "img_per_s_median differs from batch x training ranks / median");
      check(std::fabs(p.record.number("stall_share").value_or(-1) - stall_share(slowest)) <= 1e-12,
            "stall_share differs from the iteration times");
      check(std::fabs(p.record.number("iter_median_s").value_or(-1) - s.median) <= 1e-12, "median");
      check(std::fabs(p.record.number("iter_p95_s").value_or(-1) - s.p95) <= 1e-12, "p95");
      if (const auto outliers = p.record.number("outlier_iters"))
        check(*outliers == find_outliers(slowest).count, "outlier_iters differs from the iteration times");
      check(!p.record.text("reproducer").empty(), "reproducer missing");
      if (p.record.text("suite") == "hpcnn-train" || p.record.text("suite") == "hpcnn-infer")
        check_model_point(p, slowest, batch * static_cast<double>(ranks), check);
    }
    std::printf("%s: %zu points checked, %d problems\n", argv[1], run.points.size(), bad);
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "result_checker: %s\n", e.what());
    return 1;
  }
}
