#include "suites/node_noise.hpp"

#include <algorithm>
#include <atomic>
#include <latch>
#include <chrono>
#include <thread>
#include <vector>

#include "harness/rank_series.hpp"
#include "harness/timed_count.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;

// Where every quantum leaves its result: a store the compiler must make, so no quantum's chain is
// left out as unused (relaxed: the value is never read, only kept).
std::atomic<double> quantum_result{0};

// One quantum. Dependent steps: neither vectorized nor reordered without -ffast-math, so every
// call does the same work.
double work_quantum(double x) {
  for (long i = 0; i < kQuantumSteps; ++i) x = x * 0.9999999 + 1e-7;
  return x;
}

double time_quantum(double& sink) {
  const auto t0 = Clock::now();
  sink = work_quantum(sink);
  quantum_result.store(sink, std::memory_order_relaxed);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Each thread times `count` quanta after `warmup` untimed ones, all starting together (so that
// quantum i of every thread falls at about the same time); times[t] is thread t's series.
std::vector<std::vector<double>> time_threads(int threads, int warmup, int count) {
  std::vector<std::vector<double>> times(static_cast<std::size_t>(threads));
  std::vector<double> sinks(static_cast<std::size_t>(threads), 0.5);
  std::latch ready(threads);
  auto run = [&](int t) {
    double& sink = sinks[static_cast<std::size_t>(t)];
    for (int i = 0; i < warmup; ++i) time_quantum(sink);
    ready.arrive_and_wait();
    std::vector<double>& mine = times[static_cast<std::size_t>(t)];
    mine.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) mine.push_back(time_quantum(sink));
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(run, t);
  run(0);
  for (std::thread& w : workers) w.join();
  return times;
}

}  // namespace

ResultPoint noise_point(const NoiseProbe& probe, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // The count: at least --iters quanta and --min-time seconds of them, from a first quantum's time.
  double sink = 0.5;
  time_quantum(sink);
  const int count = timed_count(std::max(probe.iters, 1), probe.min_time, time_quantum(sink), comm);
  const std::vector<std::vector<double>> times = time_threads(probe.threads, probe.warmup, count);
  std::vector<double> slowest(static_cast<std::size_t>(count), 0.0);  // per quantum, this rank's slowest thread
  for (const std::vector<double>& t : times)
    for (std::size_t i = 0; i < slowest.size(); ++i) slowest[i] = std::max(slowest[i], t[i]);

  ResultPoint out;
  Array all = gather_series("quantum_time_s", slowest, comm);
  if (rank != 0) return out;
  Record& r = out.record;
  const Stats st = set_slowest_rank_fields(r, all);
  const double work = kQuantumFlops * static_cast<double>(size) * probe.threads;
  r.set("iters", std::int64_t{count});
  r.set("warmup", std::int64_t{probe.warmup});
  r.set("min_time_s", probe.min_time);
  r.set("sec_per_iter", st.mean);
  r.set("gflops", st.mean > 0 ? work / st.mean * 1e-9 : 0.0);
  r.set("gflops_median", st.median > 0 ? work / st.median * 1e-9 : 0.0);
  out.arrays.push_back(std::move(all));
  return out;
}

}  // namespace hpcnn
