#include "harness/resources.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace hpcnn {

CpuCounters read_cpu_counters() {
  CpuCounters c;
  if (std::FILE* f = std::fopen("/proc/stat", "r")) {
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice
    unsigned long long v[8] = {};
    if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                    &v[5], &v[6], &v[7]) == 8) {
      c.user = static_cast<double>(v[0] + v[1]);
      c.system = static_cast<double>(v[2] + v[5] + v[6]);
      c.idle = static_cast<double>(v[3]);
      c.iowait = static_cast<double>(v[4]);
      c.total = static_cast<double>(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]);
    }
    std::fclose(f);
  }
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0) {
    c.proc_user_s = static_cast<double>(u.ru_utime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec);
    c.proc_sys_s = static_cast<double>(u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_stime.tv_usec);
  }
  return c;
}

CpuUsage cpu_usage_between(const CpuCounters& a, const CpuCounters& b) {
  CpuUsage u;
  const double total = b.total - a.total;
  if (total > 0) {
    u.user_pct = 100.0 * (b.user - a.user) / total;
    u.sys_pct = 100.0 * (b.system - a.system) / total;
    u.iowait_pct = 100.0 * (b.iowait - a.iowait) / total;
    u.total_pct = 100.0 * (total - (b.idle - a.idle) - (b.iowait - a.iowait)) / total;
  }
  u.proc_user_s = b.proc_user_s - a.proc_user_s;
  u.proc_sys_s = b.proc_sys_s - a.proc_sys_s;
  return u;
}

double current_rss_mib() {
  unsigned long long pages_total = 0, pages_resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0.0;
  const int n = std::fscanf(f, "%llu %llu", &pages_total, &pages_resident);
  std::fclose(f);
  if (n != 2) return 0.0;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

double available_memory_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  double kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
  std::fclose(f);
  return kib * 1024.0;
}

}  // namespace hpcnn
