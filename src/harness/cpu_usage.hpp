// CPU usage and memory over a whole interval, sampled the way ref. [5]'s Tables X-XII were
// (a monitor beside the running job): a background thread reads this process's resident memory
// every `period`, and the CPU counters of resources.hpp (node-wide /proc/stat split, this
// process's getrusage seconds) are read at start and stop. hpcnn-blas --sweep model wraps each
// training run in one; any suite may use it. Linux; elsewhere the figures are 0.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "harness/resources.hpp"

namespace hpcnn {

struct UsageReport {
  double wall_s = 0;
  CpuUsage cpu;                        // percent of all cores of the node, and process seconds
  double mem_avg_mib = 0, mem_max_mib = 0;  // RSS over the samples
  int samples = 0;
};

// Mean and maximum of RSS samples (exposed for tests). Empty input gives zeros.
void summarize_samples(const double* mib, int count, double& avg, double& max);

class UsageMonitor {
 public:
  // Starts the interval and the sampling thread (one sample immediately).
  explicit UsageMonitor(std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~UsageMonitor();
  UsageMonitor(const UsageMonitor&) = delete;
  UsageMonitor& operator=(const UsageMonitor&) = delete;
  // Ends the interval (one last sample); later calls return the same report.
  UsageReport stop();

 private:
  void sample();

  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point t0_;
  CpuCounters before_;
  std::atomic<bool> running_{true};
  double sum_ = 0, max_ = 0;  // touched by the sampler thread only, until it is joined
  int count_ = 0;
  std::thread sampler_;
  bool stopped_ = false;
  UsageReport report_;
};

}  // namespace hpcnn
