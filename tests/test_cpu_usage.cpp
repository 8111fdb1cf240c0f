// UsageMonitor (harness/cpu_usage.hpp): CPU busy time shows up as user time, memory touched while
// monitoring raises the sampled maximum, and the sample summary is a mean and a maximum. Plus the
// FP32 peak helper (suites/compute_peak.hpp) gives a finite positive rate.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "harness/cpu_usage.hpp"
#include "suites/compute_peak.hpp"

namespace hpcnn {
namespace {

TEST(CpuUsage, SummarizesSamples) {
  const double s[] = {10, 30, 20};
  double avg = -1, max = -1;
  summarize_samples(s, 3, avg, max);
  EXPECT_DOUBLE_EQ(avg, 20);
  EXPECT_DOUBLE_EQ(max, 30);
  summarize_samples(s, 0, avg, max);
  EXPECT_EQ(avg, 0);
  EXPECT_EQ(max, 0);
}

TEST(CpuUsage, BusyLoopIsUserTimeAndTouchedMemoryIsSampled) {
  UsageMonitor monitor(std::chrono::milliseconds(5));
  const double base = current_rss_mib();
  // 96 MiB written page by page: resident while the monitor samples.
  const std::size_t bytes = std::size_t(96) << 20;
  std::unique_ptr<char[]> block(new char[bytes]);
  std::memset(block.get(), 1, bytes);
  // Busy for 300 ms of CPU time.
  volatile double x = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(300)) x = x + std::sqrt(x + 1.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a sample or more with the block resident
  const UsageReport r = monitor.stop();
  EXPECT_GE(r.samples, 3);
  EXPECT_GE(r.wall_s, 0.3);
  EXPECT_GT(r.cpu.proc_user_s, 0.1);  // our loop, counted by getrusage
  EXPECT_GT(r.cpu.user_pct, 0.0);     // and visible in the node's /proc/stat
  EXPECT_LE(r.cpu.user_pct, 100.0);
  EXPECT_GE(r.cpu.total_pct, r.cpu.user_pct - 1e-9);
  EXPECT_GE(r.mem_max_mib, base + 80.0) << "base " << base;
  EXPECT_LE(r.mem_avg_mib, r.mem_max_mib);
  EXPECT_GT(r.mem_avg_mib, 0.0);
  // stop() is idempotent.
  const UsageReport again = monitor.stop();
  EXPECT_EQ(again.samples, r.samples);
  EXPECT_EQ(block[bytes - 1], 1);
}

TEST(Fp32Peak, PositiveAndCached) {
  const double one = fp32_peak_gflops(1);
  EXPECT_TRUE(std::isfinite(one));
  EXPECT_GT(one, 0.1);
  EXPECT_EQ(fp32_peak_gflops(1), one);  // cached
  EXPECT_EQ(fp32_peak_gflops(0), one);  // < 1 counts as 1
}

// Where the CPU has AVX512_BF16, a VDPBF16PS does twice the FLOPs of a 16-lane FMA in the same
// vector width: every CPU with it so far (Cooper Lake, Sapphire Rapids, Zen 4 and 5) issues both at
// the same rate, so the bf16 peak is about 2x fp32's. Outside 1.3-3x the FLOP count is wrong.
TEST(Bf16Peak, TwiceFp32WhereTheCpuHasIt) {
  const double bf16 = bf16_peak_gflops(1);
  if (bf16 == 0.0) GTEST_SKIP() << "this CPU has no AVX512_BF16: no bf16 peak";
  const double fp32 = fp32_peak_gflops(1);
  std::printf("  1 thread: fp32 peak %.1f GFLOP/s, bf16 peak %.1f GFLOP/s (%.2fx)\n", fp32, bf16, bf16 / fp32);
  EXPECT_EQ(bf16_peak_gflops(1), bf16);  // cached
  EXPECT_GT(bf16 / fp32, 1.3);
  EXPECT_LT(bf16 / fp32, 3.0);
}

}  // namespace
}  // namespace hpcnn
