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

std::size_t full_steps_per_epoch(std::size_t n, int batch, int workers) {
  if (batch < 1 || workers < 1) throw std::invalid_argument("full_steps_per_epoch: batch and workers must be positive");
  return n / (std::size_t(batch) * std::size_t(workers));
}

std::vector<std::vector<std::uint32_t>> worker_batches(Sharding sharding, std::size_t n, int batch, int worker,
                                                       int workers, std::uint64_t seed, std::uint64_t epoch,
                                                       bool shuffle) {
  if (worker < 0 || worker >= workers) throw std::invalid_argument("worker_batches: worker out of range");
  const std::size_t steps = full_steps_per_epoch(n, batch, workers), b = std::size_t(batch);
  if (sharding == Sharding::Shard) {
    std::vector<std::vector<std::uint32_t>> out = rank_batches(epoch_order(n, seed, epoch, shuffle), batch, worker, workers);
    out.resize(steps);  // the full steps; rank_batches' last, short one is left over
    return out;
  }
  // A worker's own stream: its permutation is independent of the others' (TensorFlow's per-worker
  // shuffle). Without shuffling every worker reads the files' order, starting at its own 1/W.
  const std::uint64_t own_seed = shuffle ? hash3(seed, 0x3401e00000000000ull, std::uint64_t(worker)) : seed;
  const std::vector<std::uint32_t> order = epoch_order(n, own_seed, epoch, shuffle);
  const std::size_t start = shuffle ? 0 : std::size_t(worker) * steps * b;
  std::vector<std::vector<std::uint32_t>> out(steps);
  for (std::size_t k = 0; k < steps; ++k)
    for (std::size_t i = 0; i < b; ++i) out[k].push_back(order[(start + k * b + i) % n]);
  return out;
}

}  // namespace hpcnn::data
