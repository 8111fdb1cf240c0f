// FP32 FMA, BF16 and int8 dot-product peak measurement (compute_peak.hpp).
#include "suites/compute_peak.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>


#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <sched.h>
#include <time.h>
#include <unistd.h>

namespace hpcnn {

namespace {

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16, kChains = 16;
inline Vec vset(float x) { return _mm512_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline float vfirst(Vec a) { return _mm512_cvtss_f32(a); }
#elif defined(__AVX2__) && defined(__FMA__)
using Vec = __m256;
constexpr int kLanes = 8, kChains = 12;
inline Vec vset(float x) { return _mm256_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline float vfirst(Vec a) { return _mm256_cvtss_f32(a); }
#else
using Vec = float;
constexpr int kLanes = 1, kChains = 8;
inline Vec vset(float x) { return x; }
inline Vec vfma(Vec a, Vec b, Vec c) { return a * b + c; }
inline float vfirst(Vec a) { return a; }
#endif

constexpr long kInner = 4096;  // FMA rounds between clock reads

// Runs FMA chains until `stop`; returns the FMA rounds done (each round: kChains vector FMAs).
long fma_loop(const std::atomic<bool>& stop, float& sink) {
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = vset(1.0f + 1e-3f * i);
  const Vec m = vset(0.999999f), a = vset(1e-7f);
  long rounds = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    for (long r = 0; r < kInner; ++r)
      for (int i = 0; i < kChains; ++i) acc[i] = vfma(acc[i], m, a);
    rounds += kInner;
  }
  float s = 0;
  for (int i = 0; i < kChains; ++i) s += vfirst(acc[i]);
  sink = s;
  return rounds;
}

#if defined(__x86_64__)
// BF16: kBf16Chains accumulators of 16 fp32 lanes, each VDPBF16PS adds two bf16 products per lane.
// fma_loop's skeleton written out again: this body must be compiled for the avx512bf16 target,
// which a lambda passed to a shared template would not inherit (GCC inlines no intrinsic there).
constexpr int kBf16Chains = 16;
constexpr double kBf16FlopsPerRound = 4.0 * 16 * kBf16Chains;

__attribute__((target("avx512f,avx512bf16"))) long bf16_loop(const std::atomic<bool>& stop, float& sink) {
  __m512 acc[kBf16Chains];
  for (int i = 0; i < kBf16Chains; ++i) acc[i] = _mm512_set1_ps(1e-3f * i);
  // bf16 0.5 (0x3f00) and 2^-20 (0x3580): the sums stay finite however long the loop runs.
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f00), y = (__m512bh)_mm512_set1_epi16(0x3580);
  long rounds = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    for (long r = 0; r < kInner; ++r)
      for (int i = 0; i < kBf16Chains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
    rounds += kInner;
  }
  float s = 0;
  for (int i = 0; i < kBf16Chains; ++i) s += _mm512_cvtss_f32(acc[i]);
  sink = s;
  return rounds;
}

bool has_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
}
// int8: kInt8Chains accumulators of 16 int32 lanes, each VPDPBUSD adds four u8 x s8 products per
// lane (8 operations). Written out again for the avx512vnni target, as bf16_loop is.
constexpr int kInt8Chains = 16;
constexpr double kInt8OpsPerRound = 8.0 * 16 * kInt8Chains;

__attribute__((target("avx512f,avx512vnni"))) long int8_loop(const std::atomic<bool>& stop, float& sink) {
  __m512i acc[kInt8Chains];
  for (int i = 0; i < kInt8Chains; ++i) acc[i] = _mm512_set1_epi32(i);
  // Products of 1 and 0: the sums never overflow however long the loop runs.
  const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(0);
  long rounds = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    for (long r = 0; r < kInner; ++r)
      for (int i = 0; i < kInt8Chains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
    rounds += kInner;
  }
  int s = 0;
  alignas(64) int lanes[16];
  for (int i = 0; i < kInt8Chains; ++i) {
    _mm512_store_si512(lanes, acc[i]);
    s += lanes[0];
  }
  sink = static_cast<float>(s);
  return rounds;
}

bool has_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
}
#else
constexpr double kBf16FlopsPerRound = 0, kInt8OpsPerRound = 0;
long bf16_loop(const std::atomic<bool>&, float&) { return 0; }
long int8_loop(const std::atomic<bool>&, float&) { return 0; }
bool has_bf16() { return false; }
bool has_vnni() { return false; }
#endif

using Loop = long (*)(const std::atomic<bool>&, float&);

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// GFLOP/s of `threads` threads, each counted over its own CPU time rather than wall time: on a
// machine shared with other jobs a thread that is descheduled does no FMAs, and dividing by its
// CPU time gives what the core does when it runs (the peak), not what the scheduler allowed.
double one_trial(Loop loop, double flops_per_round, int threads, double seconds) {
  std::atomic<bool> stop{false};
  std::vector<double> rate(threads, 0.0);
  std::vector<float> sink(threads, 0.0f);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const double c0 = thread_cpu_seconds();
      const long rounds = loop(stop, sink[t]);
      const double cpu = thread_cpu_seconds() - c0;
      rate[t] = cpu > 0 ? flops_per_round * static_cast<double>(rounds) / cpu * 1e-9 : 0.0;
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  double total = 0;
  for (double r : rate) total += r;
  return total;
}


}  // namespace

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

namespace {

// The best of 5 trials of 50 ms, cached per (loop, thread count).
double cached_peak(Loop loop, double flops_per_round, int threads) {
  static std::mutex mutex;
  static std::map<std::pair<Loop, int>, double> cache;
  threads = std::clamp(threads, 1, allowed_cpus());
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find({loop, threads}); it != cache.end()) return it->second;
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) best = std::max(best, one_trial(loop, flops_per_round, threads, 0.05));
  cache[{loop, threads}] = best;
  return best;
}

}  // namespace

double fp32_peak_gflops(int threads) { return cached_peak(fma_loop, 2.0 * kLanes * kChains, threads); }

double bf16_peak_gflops(int threads) {
  static const bool have = has_bf16();
  return have ? cached_peak(bf16_loop, kBf16FlopsPerRound, threads) : 0.0;
}

double int8_peak_gops(int threads) {
  static const bool have = has_vnni();
  return have ? cached_peak(int8_loop, kInt8OpsPerRound, threads) : 0.0;
}

double peak_for(Precision p, int threads) {
  switch (p) {
    case Precision::Bf16: return bf16_peak_gflops(threads);
    case Precision::Int8: return int8_peak_gops(threads);
    case Precision::Fp32: return fp32_peak_gflops(threads);
    case Precision::Tf32: break;
  }
  return 0.0;
}

}  // namespace hpcnn
