// Interval CPU usage and sampled memory (cpu_usage.hpp).
#include "harness/cpu_usage.hpp"

#include <algorithm>

namespace hpcnn {

void summarize_samples(const double* mib, int count, double& avg, double& max) {
  avg = max = 0;
  if (count <= 0) return;
  double sum = 0;
  for (int i = 0; i < count; ++i) {
    sum += mib[i];
    max = std::max(max, mib[i]);
  }
  avg = sum / count;
}

UsageMonitor::UsageMonitor(std::chrono::milliseconds period) : period_(period) {
  before_ = read_cpu_counters();
  t0_ = std::chrono::steady_clock::now();
  sample();
  sampler_ = std::thread([this] {
    while (running_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(period_);
      sample();
    }
  });
}

UsageMonitor::~UsageMonitor() {
  running_ = false;
  if (sampler_.joinable()) sampler_.join();
}

void UsageMonitor::sample() {
  const double rss = current_rss_mib();
  sum_ += rss;
  max_ = std::max(max_, rss);
  ++count_;
}

UsageReport UsageMonitor::stop() {
  if (stopped_) return report_;
  stopped_ = true;
  const CpuCounters after = read_cpu_counters();
  report_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  running_ = false;
  sampler_.join();
  sample();
  report_.cpu = cpu_usage_between(before_, after);
  report_.samples = count_;
  report_.mem_avg_mib = count_ ? sum_ / count_ : 0.0;
  report_.mem_max_mib = max_;
  return report_;
}

}  // namespace hpcnn
