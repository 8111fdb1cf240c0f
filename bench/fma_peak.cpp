// fma_peak: measures the machine's FP32 fused-multiply-add peak in GFLOP/s.
//
// Every thread runs a loop of independent FMA chains (acc[i] = acc[i] * m + a) held in vector
// registers: with ACC chains in flight the loop hides the FMA latency as long as
// ACC >= latency x FMA issue width, which for every x86 core we know of is <= 4 x 2 = 8 vectors
// (Zen 4 runs a 512-bit FMA as two 256-bit halves, so it needs even fewer zmm chains). We use
// 16 zmm chains with AVX-512 (32 registers), 12 ymm chains with AVX2+FMA (16 registers), and
// a portable scalar loop otherwise, which is no peak but keeps the program building everywhere.
// One FMA counts as 2 FLOP.
//
// Usage: fma_peak [--threads LIST] [--trials N] [--seconds S] [--no-pin]
//   --threads LIST  comma-separated thread counts (default: 1 and every hardware thread)
//   --trials N      timed trials per thread count (default 11); the best and the median are shown
//   --seconds S     length of one trial (default 0.25 s)
//   --no-pin        do not pin thread i to the i-th CPU of the process's affinity mask
// Output: one line per thread count; the best total is the peak to quote.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace {

#if defined(__AVX512F__)
constexpr const char *kIsa = "AVX-512F (zmm, 16 FP32 lanes)";
constexpr int kLanes = 16;
constexpr int kChains = 16;
using vec = __m512;
inline vec vset(float x) { return _mm512_set1_ps(x); }
inline vec vfma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
inline vec vadd(vec a, vec b) { return _mm512_add_ps(a, b); }
inline float vsum(vec a) {
  alignas(64) float t[16];
  _mm512_store_ps(t, a);
  float s = 0;
  for (float x : t) s += x;
  return s;
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char *kIsa = "AVX2+FMA (ymm, 8 FP32 lanes)";
constexpr int kLanes = 8;
constexpr int kChains = 12;
using vec = __m256;
inline vec vset(float x) { return _mm256_set1_ps(x); }
inline vec vfma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
inline vec vadd(vec a, vec b) { return _mm256_add_ps(a, b); }
inline float vsum(vec a) {
  alignas(32) float t[8];
  _mm256_store_ps(t, a);
  float s = 0;
  for (float x : t) s += x;
  return s;
}
#else
constexpr const char *kIsa = "portable scalar (no AVX2+FMA at compile time: not a peak)";
constexpr int kLanes = 1;
constexpr int kChains = 8;
using vec = float;
inline vec vset(float x) { return x; }
inline vec vfma(vec a, vec b, vec c) { return a * b + c; }
inline vec vadd(vec a, vec b) { return a + b; }
inline float vsum(vec a) { return a; }
#endif

constexpr int kUnroll = 4;  // loop body = kUnroll x kChains FMAs
constexpr double kFlopPerIter = 2.0 * kLanes * kChains * kUnroll;

// Runs `iters` loop trips; returns a value depending on every chain so none can be dropped.
// m < 1 and a > 0 keep the chains bounded (they converge to a / (1 - m)): no overflow, no
// denormals, whatever the trip count.
__attribute__((noinline)) float fma_loop(std::int64_t iters, float m, float a) {
  vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = vset(1.0f + 0.01f * static_cast<float>(i));
  const vec vm = vset(m);
  const vec va = vset(a);
  for (std::int64_t it = 0; it < iters; ++it) {
    for (int u = 0; u < kUnroll; ++u) {
#pragma GCC unroll 16
      for (int i = 0; i < kChains; ++i) acc[i] = vfma(acc[i], vm, va);
    }
  }
  vec s = acc[0];
  for (int i = 1; i < kChains; ++i) s = vadd(s, acc[i]);
  return vsum(s);
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
  return cpus;
}

bool pin_to(int cpu) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
#else
  (void)cpu;
  return false;
#endif
}

struct Result {
  double best = 0, median = 0, worst = 0;
};

// Runs `trials` timed trials with `nthreads` threads, each doing `iters` loop trips, and returns
// the GFLOP/s of all threads together. A trial is timed by thread 0 between two barriers, so it
// covers the slowest thread.
Result measure(int nthreads, std::int64_t iters, int trials, bool pin, const std::vector<int> &cpus,
               volatile float *sink) {
  std::vector<double> seconds(static_cast<std::size_t>(trials));
  std::barrier sync(nthreads);
  std::atomic<bool> pin_failed{false};
  auto body = [&](int t) {
    if (pin && !cpus.empty() && !pin_to(cpus[static_cast<std::size_t>(t) % cpus.size()]))
      pin_failed = true;
    // One untimed trip to warm up the frequency and the vector unit (AVX-512 licence).
    float local = fma_loop(iters / 4 + 1, 0.999f, 0.001f * static_cast<float>(t + 1));
    for (int k = 0; k < trials; ++k) {
      sync.arrive_and_wait();
      const auto t0 = std::chrono::steady_clock::now();
      local += fma_loop(iters, 0.999f, 0.001f * static_cast<float>(t + 1));
      sync.arrive_and_wait();
      if (t == 0)
        seconds[static_cast<std::size_t>(k)] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    sink[t] = local;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nthreads; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto &th : pool) th.join();
  if (pin_failed) std::fprintf(stderr, "fma_peak: warning: could not pin every thread\n");

  const double flop = kFlopPerIter * static_cast<double>(iters) * nthreads;
  std::vector<double> gflops;
  for (double s : seconds) gflops.push_back(flop / s * 1e-9);
  std::sort(gflops.begin(), gflops.end());
  Result r;
  r.best = gflops.back();
  r.worst = gflops.front();
  const std::size_t n = gflops.size();
  r.median = n % 2 ? gflops[n / 2] : 0.5 * (gflops[n / 2 - 1] + gflops[n / 2]);
  return r;
}

// Loop trips for a trial of about `target` seconds on one thread.
std::int64_t calibrate(double target) {
  std::int64_t iters = 1 << 12;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile float keep = fma_loop(iters, 0.999f, 0.001f);
    (void)keep;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0.05 || iters > (std::int64_t{1} << 40))
      return std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(iters) * target / s));
    iters *= 4;
  }
}

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: fma_peak [--threads LIST] [--trials N] [--seconds S] [--no-pin]\n"
               "  --threads LIST  comma-separated thread counts (default: 1 and all hardware threads)\n"
               "  --trials N      timed trials per thread count (default 11)\n"
               "  --seconds S     length of one trial in seconds (default 0.25)\n"
               "  --no-pin        do not pin the threads to CPUs\n");
  std::exit(rc);
}

long parse_long(const char *s, const char *what) {
  char *end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "fma_peak: bad %s '%s'\n", what, s);
    usage(2);
  }
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<int> thread_counts;
  int trials = 11;
  double seconds = 0.25;
  bool pin = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fma_peak: %s needs a value\n", arg.c_str());
        usage(2);
      }
      return argv[++i];
    };
    if (arg == "--threads") {
      std::string list = value();
      std::size_t pos = 0;
      while (pos <= list.size()) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        thread_counts.push_back(static_cast<int>(parse_long(list.substr(pos, comma - pos).c_str(), "thread count")));
        pos = comma + 1;
      }
    } else if (arg == "--trials") {
      trials = static_cast<int>(parse_long(value(), "trial count"));
    } else if (arg == "--seconds") {
      const char *s = value();
      char *end = nullptr;
      seconds = std::strtod(s, &end);
      if (end == s || *end != '\0' || !(seconds > 0)) {
        std::fprintf(stderr, "fma_peak: bad duration '%s'\n", s);
        usage(2);
      }
    } else if (arg == "--no-pin") {
      pin = false;
    } else if (arg == "-h" || arg == "--help") {
      usage(0);
    } else {
      std::fprintf(stderr, "fma_peak: unknown option '%s'\n", arg.c_str());
      usage(2);
    }
  }

  const std::vector<int> cpus = allowed_cpus();
  const int hw = cpus.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                              : static_cast<int>(cpus.size());
  if (thread_counts.empty()) {
    thread_counts.push_back(1);
    if (hw > 1) thread_counts.push_back(hw);
  }

  std::printf("# fma_peak: FP32 FMA peak (1 FMA = 2 FLOP)\n");
  std::printf("# ISA: %s, %d independent chains x %d unroll\n", kIsa, kChains, kUnroll);
  std::printf("# CPUs available: %d, pinning: %s, trials: %d of ~%.2f s each\n", hw,
              pin ? "yes" : "no", trials, seconds);
  const std::int64_t iters = calibrate(seconds);
  std::vector<float> sink_storage(static_cast<std::size_t>(*std::max_element(thread_counts.begin(), thread_counts.end())));
  volatile float *sink = sink_storage.data();

  std::printf("%8s %14s %14s %14s %18s\n", "threads", "best_GFLOP/s", "median_GFLOP/s", "worst_GFLOP/s",
              "best_per_thread");
  for (int n : thread_counts) {
    const Result r = measure(n, iters, trials, pin, cpus, sink);
    std::printf("%8d %14.1f %14.1f %14.1f %18.1f\n", n, r.best, r.median, r.worst, r.best / n);
    std::fflush(stdout);
  }
  return 0;
}
