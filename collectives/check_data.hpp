// Predictable allreduce inputs (nccl-tests style): element i of rank r is a small integer drawn
// from (seed, r, i), so any rank computes the expected sum locally and float addition is exact in
// every order (|sum| <= 8 x ranks, far below 2^24): results are compared for equality, 0 ULP.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/rng.hpp"

namespace hpcnn {

inline float allreduce_input(std::uint64_t seed, int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>(hash3(seed, 0x616c6c72ULL + static_cast<std::uint64_t>(rank), i) % 17) - 8);
}

inline float allreduce_expected(std::uint64_t seed, int ranks, std::size_t i) {
  float sum = 0;
  for (int r = 0; r < ranks; ++r) sum += allreduce_input(seed, r, i);
  return sum;
}

}  // namespace hpcnn
