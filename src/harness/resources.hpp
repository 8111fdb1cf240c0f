// Resource use of this process and node over an interval: CPU time split as /proc/stat counts it
// (user, system, iowait, idle, over all cores of the node), the process's own CPU seconds
// (getrusage), and resident memory (/proc/self/statm). Cheap enough to read between iterations;
// never inside a timed region. Linux; elsewhere the figures are 0.
#pragma once

namespace hpcnn {

// CPU counters at one instant.
struct CpuCounters {
  double user = 0, system = 0, iowait = 0, idle = 0, total = 0;  // node, in clock ticks, all cores
  double proc_user_s = 0, proc_sys_s = 0;                        // this process, seconds
};
CpuCounters read_cpu_counters();

// Usage between two readings, in percent of all cores' time (user + nice counted as user;
// system + irq + softirq as system; total = everything but idle and iowait).
struct CpuUsage {
  double user_pct = 0, sys_pct = 0, iowait_pct = 0, total_pct = 0;
  double proc_user_s = 0, proc_sys_s = 0;
};
CpuUsage cpu_usage_between(const CpuCounters& before, const CpuCounters& after);

// Current resident set size of this process in MiB (0 when unknown).
double current_rss_mib();
// MemAvailable of /proc/meminfo in bytes: what a run may still allocate on this node (0 when
// unknown, e.g. not Linux).
double available_memory_bytes();

}  // namespace hpcnn
