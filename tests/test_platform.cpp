// The simulated network's link fitted from a measured 2-host ring allreduce (simulate/platform.hpp):
// a line through every size by relative error, the latency from its intercept, the bandwidth from
// its slope less the adds; what the points must hold.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/errors.hpp"
#include "results/record.hpp"
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
