// The simulated network's link fitted from a measured 2-host ring allreduce (simulate/platform.hpp):
// a line through every size by relative error, the latency from its intercept, the bandwidth from
// its slope less the adds; what the points must hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "base/errors.hpp"
#include "results/record.hpp"
#include "collectives/exchange.hpp"
#include "engine/models.hpp"
#include "engine/op_cost.hpp"
#include "simulate/analytic.hpp"
#include "simulate/backward_split.hpp"
#include "simulate/platform.hpp"

using namespace hpcnn;

namespace {

constexpr double kAddPerFloat = 1e-10;  // seconds to add one float on the node

Record ring_point(double bytes, double seconds, int ranks = 2) {
  Record r;
  r.set("suite", std::string("hpcnn-allreduce"));
  r.set("exchange", std::string("ring"));
  r.set("ranks", std::int64_t{ranks});
  r.set("size_bytes", static_cast<std::int64_t>(bytes));
  r.set("time_avg_us", seconds * 1e6);
  return r;
}

// What a 2-rank ring allreduce of `bytes` takes on a flat switch: two messages, each crossing two
// links, the bytes once each way, half the message's floats added.
double ring_time(double bytes, double latency_s, double bandwidth_bps) {
  return 4 * latency_s + bytes / bandwidth_bps + bytes / 8 * kAddPerFloat;
}

std::vector<Record> sweep(double latency_s, double bandwidth_bps) {
  std::vector<Record> points;
  for (double kib : {1.0, 16.0, 256.0, 1024.0, 4096.0, 16384.0})
    points.push_back(ring_point(kib * 1024, ring_time(kib * 1024, latency_s, bandwidth_bps)));
  return points;
}

}  // namespace

TEST(FitLink, RecoversTheLinkOfExactTimes) {
  const FittedLink f = fit_link(sweep(25e-6, 1.25e9), kAddPerFloat, "test");
  EXPECT_NEAR(f.link.latency_s, 25e-6, 25e-6 * 1e-6);
  EXPECT_NEAR(f.link.bandwidth_bps, 1.25e9, 1.25e9 * 1e-6);
  EXPECT_EQ(f.points, 6);
  EXPECT_DOUBLE_EQ(f.smallest_bytes, 1024);
  EXPECT_DOUBLE_EQ(f.largest_bytes, 16384.0 * 1024);
  EXPECT_LT(f.worst_fit_error, 1e-9);
}

// A message's measured latency (two links at 25 us) is spread over a longer route's links, so the
// route takes it once: four links of a fat tree at 12.5 us, not 4 x 25 us.
TEST(FitLink, TheMeasuredLatencyIsARoutesNotEachLinks) {
  const FittedLink f = fit_link(sweep(25e-6, 1.25e9), kAddPerFloat, "test");
  const Link across = link_over_route(f, 4), flat = link_over_route(f, 2);
  EXPECT_NEAR(4 * across.latency_s, 50e-6, 50e-6 * 1e-6);
  EXPECT_NEAR(flat.latency_s, 25e-6, 25e-6 * 1e-6);
  EXPECT_DOUBLE_EQ(across.bandwidth_bps, f.link.bandwidth_bps);
  EXPECT_THROW(link_over_route(f, 0), std::invalid_argument);
}

// One slow large size (a 1 MiB point 50% slower, as a congested measurement) moves the line less
// than an ordinary least-squares fit of the times would: every size keeps within the relative
// error the fit reports, and the small sizes' latency stays close.
TEST(FitLink, ASlowSizeDoesNotDecideTheLine) {
  std::vector<Record> points = sweep(25e-6, 1.25e9);
  const double slow = 1.5 * ring_time(1024.0 * 1024, 25e-6, 1.25e9);
  points[3] = ring_point(1024.0 * 1024, slow);
  const FittedLink f = fit_link(points, kAddPerFloat, "test");
  EXPECT_GT(f.worst_fit_error, 0.1);  // the slow point is far from the line, and the fit says so
  EXPECT_LT(f.worst_fit_error, 0.5);
  for (double kib : {1.0, 16.0, 256.0, 16384.0}) {
    const double bytes = kib * 1024, measured = ring_time(bytes, 25e-6, 1.25e9);
    const double line = 4 * f.link.latency_s + bytes / f.link.bandwidth_bps + bytes / 8 * kAddPerFloat;
    EXPECT_LT(std::abs(line - measured) / measured, 0.25) << kib << " KiB";
  }
}

// A file with several records of one size (runs or rounds) fits their median: here a 1 MiB size
// measured three times, once 50% slow, fits as if measured once at its typical time.
TEST(FitLink, SeveralRecordsOfASizeCountAsTheirMedian) {
  std::vector<Record> points = sweep(25e-6, 1.25e9);
  const double typical = ring_time(1024.0 * 1024, 25e-6, 1.25e9);
  points.push_back(ring_point(1024.0 * 1024, 1.5 * typical));
  points.push_back(ring_point(1024.0 * 1024, typical));
  const FittedLink f = fit_link(points, kAddPerFloat, "test");
  EXPECT_EQ(f.points, 6);
  EXPECT_NEAR(f.link.latency_s, 25e-6, 25e-6 * 1e-6);
  EXPECT_NEAR(f.link.bandwidth_bps, 1.25e9, 1.25e9 * 1e-6);
  // The slow record last: a fit that kept the last record of a size would miss the line.
  points.pop_back();
  points.insert(points.begin(), ring_point(1024.0 * 1024, typical));
  const FittedLink g = fit_link(points, kAddPerFloat, "test");
  EXPECT_NEAR(g.link.bandwidth_bps, 1.25e9, 1.25e9 * 1e-6);
}

TEST(FitLink, RefusesPointsThatCannotMakeALine) {
  // Other schemes and rank counts are not the 2-host ring: one size left.
  std::vector<Record> points = {ring_point(1024, 1e-4), ring_point(4096, 2e-4, 4)};
  Record mpi = ring_point(8192, 3e-4);
  mpi.set("exchange", std::string("mpi"));
  points.push_back(mpi);
  EXPECT_THROW(fit_link(points, kAddPerFloat, "test"), UsageError);
  // A time that does not grow with the size: no bandwidth.
  EXPECT_THROW(fit_link({ring_point(1024, 1e-3), ring_point(1 << 20, 1e-3)}, kAddPerFloat, "test"), UsageError);
}

// Every scheme the simulator runs has its cost model in its registry entry, and the analytic
// estimate is that model summed over the buckets: checked against the published formulas
// (Thakur, Rabenseifner and Gropp 2005) at one point each, and for what any cost must be.
TEST(AnalyticModel, EverySimulatedSchemeHasACostThatGrowsWithTheBytes) {
  const LinkCost net{2e-6, 1e-10, 1e-11};
  int simulated = 0;
  for (const ExchangeInfo& e : exchanges()) {
    if (!e.simulated) continue;
    ++simulated;
    ASSERT_NE(e.bucket_seconds, nullptr) << e.name << " is simulated without a cost model";
    for (int p : {2, 3, 8, 1000}) {
      const double small = e.bucket_seconds(p, 1, 1e3, net), large = e.bucket_seconds(p, 1, 1e7, net);
      EXPECT_GT(small, 0) << e.name << " at " << p;
      EXPECT_GT(large, small) << e.name << " at " << p;
    }
  }
  EXPECT_GE(simulated, 5) << "mpi, ring, rhd, ps-sync and ps-async are simulated";
  EXPECT_NE(simulated_exchange_names().find("ring"), std::string::npos);
}

TEST(AnalyticModel, TheSchemesCostsAreThePublishedOnes) {
  const double a = 2e-6, b = 1e-10, g = 1e-11, n = 4e6;
  const LinkCost net{a, b, g};
  const auto cost = [&](const char* scheme, int p, int servers = 1) { return find_exchange(scheme).bucket_seconds(p, servers, n, net); };
  EXPECT_NEAR(cost("ring", 4), 2 * 3 * a + 2 * 3.0 / 4 * n * b + 3.0 / 4 * n * g, 1e-12);
  EXPECT_NEAR(cost("rhd", 8), 2 * 3 * a + 2 * 7.0 / 8 * n * b + 7.0 / 8 * n * g, 1e-12);
  // 6 ranks: halving-doubling over 4, and one step each way folding the other 2 in and out.
  EXPECT_NEAR(cost("rhd", 6), 2 * 2 * a + 2 * 3.0 / 4 * n * b + 3.0 / 4 * n * g + 2 * (a + n * b) + n * g, 1e-12);
  EXPECT_NEAR(cost("mpi", 5), 2 * 3 * (a + n * b) + 3 * n * g, 1e-12);
  EXPECT_NEAR(cost("ps-sync", 4, 2), 2 * 4 * n / 2 * b + 2 * a + 3 * n / 2 * g, 1e-12);
  // ps-async applies each push on arrival: the same traffic through the server, no sums.
  EXPECT_NEAR(cost("ps-async", 4, 2), 2 * 4 * n / 2 * b + 2 * a, 1e-12);
  // One rank exchanges nothing over the network in an allreduce.
  EXPECT_EQ(find_exchange("ring").bucket_seconds(1, 0, n, net), 0);
  // The analytic estimate: the model over every bucket, gamma given per float.
  AnalyticNetwork an;
  an.latency_s = a, an.seconds_per_byte = b, an.add_s_per_float = g * sizeof(float);
  EXPECT_NEAR(analytic_exchange_seconds("ring", 4, 0, {n, n / 2}, an), cost("ring", 4) + find_exchange("ring").bucket_seconds(4, 0, n / 2, net), 1e-12);
  EXPECT_THROW(analytic_exchange_seconds("no-such-scheme", 4, 0, {n}, an), SettingError);
}

// The backward pass's split over the layers (simulate/backward_split.hpp): it adds up to the
// measured time; without a memory rate it is by FLOPs; with one, a layer of no FLOPs worth
// mentioning (a ReLU) gets at least its traffic's time, and the compute-bound layers share the rest
// by FLOPs.
TEST(BackwardSplit, RooflineOverTheLayers) {
  ModelConfig mc;
  mc.input = {1, 3, 32, 32};
  mc.classes = 10;
  const Graph g = build_model("resnet18", mc);
  const int batch = 32;
  const double backward_s = 0.5;
  const double memory = 20e9;  // bytes per second
  std::vector<double> flops(g.nodes().size()), bytes(g.nodes().size());
  for (std::size_t i = 1; i < flops.size(); ++i) {
    const OpCost c = op_backward_cost(g, static_cast<int>(i), batch);
    flops[i] = c.flops, bytes[i] = c.bytes;
  }
  auto total = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  const std::vector<double> by_flops = backward_split(g, batch, backward_s, 0);
  const std::vector<double> roof = backward_split(g, batch, backward_s, memory);
  ASSERT_EQ(by_flops.size(), g.nodes().size());
  ASSERT_EQ(roof.size(), g.nodes().size());
  EXPECT_NEAR(total(by_flops), backward_s, 1e-9);
  EXPECT_NEAR(total(roof), backward_s, 1e-9);
  EXPECT_EQ(roof[0], 0.0);
  for (std::size_t i = 1; i < flops.size(); ++i)
    EXPECT_NEAR(by_flops[i], backward_s * flops[i] / total(flops), 1e-12) << g.nodes()[i].name;
  // The traffic alone is well below the time here, so the roofline holds as stated.
  ASSERT_LT(total(bytes) / memory, backward_s);
  // One compute rate F for every layer: the fastest layer runs at it, and each layer takes
  // max(FLOPs / F, bytes / memory).
  double rate = 0;
  for (std::size_t i = 1; i < flops.size(); ++i)
    if (roof[i] > 0) rate = std::max(rate, flops[i] / roof[i]);
  EXPECT_GT(rate, total(flops) / backward_s);  // faster than the mean: memory took its part
  int relus = 0;
  for (std::size_t i = 1; i < flops.size(); ++i) {
    EXPECT_NEAR(roof[i], std::max(flops[i] / rate, bytes[i] / memory), 1e-6 * roof[i] + 1e-15) << g.nodes()[i].name;
    if (g.nodes()[i].kind == OpKind::Relu && bytes[i] > 0) {
      ++relus;
      EXPECT_GT(roof[i], by_flops[i]) << g.nodes()[i].name;  // memory-bound: more than its FLOPs' share
    }
  }
  EXPECT_GT(relus, 0);
  // Traffic beyond the time (a memory rate far too low): still adds up, nothing negative.
  const std::vector<double> slow = backward_split(g, batch, backward_s, 1e6);
  EXPECT_NEAR(total(slow), backward_s, 1e-9);
  for (double t : slow) EXPECT_GE(t, 0.0);
}
