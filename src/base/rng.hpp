// Counter-based random numbers: a value is a pure function of (seed, stream, counter), so every
// backend (CPU or GPU) and every rank computes the same dropout mask and the same synthetic data
// without sharing state. splitmix64 finalizer; good enough for masks and initialization.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HPCNN_HD __host__ __device__
#else
#define HPCNN_HD
#endif

namespace hpcnn {

HPCNN_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

HPCNN_HD inline std::uint64_t hash3(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  return mix64(mix64(mix64(seed) ^ stream) ^ counter);
}

// Uniform in [0, 1) with 24 random bits.
HPCNN_HD inline float uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  return static_cast<float>(hash3(seed, stream, counter) >> 40) * (1.0f / 16777216.0f);
}

// Dropout keeps element `index` of node `node` at forward pass `step` iff this returns true.
HPCNN_HD inline bool dropout_keep(std::uint64_t seed, int node, std::uint64_t step,
                                  std::uint64_t index, float p) {
  return uniform01(seed ^ (step * 0x2545f4914f6cdd1dULL), static_cast<std::uint64_t>(node), index) >= p;
}

// Sequential generator for host-side initialization and data.
class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) : seed_(seed), stream_(stream) {}
  std::uint64_t next() { return hash3(seed_, stream_, counter_++); }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  float normal();  // Box-Muller
 private:
  std::uint64_t seed_, stream_, counter_ = 0;
};

}  // namespace hpcnn
