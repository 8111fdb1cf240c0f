#include "data/sampler.hpp"

#include <numeric>
#include <stdexcept>
#include <utility>

#include "base/rng.hpp"

namespace hpcnn::data {

std::vector<std::uint32_t> epoch_order(std::size_t n, std::uint64_t seed, std::uint64_t epoch, bool shuffle) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (!shuffle) return order;
  // Stream 0x5eed... keeps these draws apart from weight initialization (streams = parameter index).
  Rng rng(seed, 0x5eed000000000000ull + epoch);
  for (std::size_t i = n; i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.next() % i);  // bias < i / 2^64: negligible
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::size_t steps_per_epoch(std::size_t n, int batch, int ranks) {
  if (batch < 1 || ranks < 1) throw std::invalid_argument("steps_per_epoch: batch and ranks must be positive");
  const std::size_t per_step = std::size_t(batch) * std::size_t(ranks);
  return (n + per_step - 1) / per_step;
}

std::vector<std::vector<std::uint32_t>> rank_batches(const std::vector<std::uint32_t>& order, int batch, int rank,
                                                     int ranks) {
  if (rank < 0 || rank >= ranks) throw std::invalid_argument("rank_batches: rank out of range");
  const std::size_t steps = steps_per_epoch(order.size(), batch, ranks);
  const std::size_t b = std::size_t(batch), per_step = b * std::size_t(ranks);
  std::vector<std::vector<std::uint32_t>> out(steps);
  for (std::size_t k = 0; k < steps; ++k) {
    const std::size_t begin = std::min(order.size(), k * per_step + std::size_t(rank) * b);
    const std::size_t end = std::min(order.size(), begin + b);
    out[k].assign(order.begin() + static_cast<std::ptrdiff_t>(begin), order.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

}  // namespace hpcnn::data
