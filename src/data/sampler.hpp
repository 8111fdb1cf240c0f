// Which samples each rank trains on in each step of an epoch. The epoch's order is a
// permutation of all samples drawn from (seed, epoch) (or the identity without shuffling), the
// same on every rank; global step k covers order positions [k*B*P, (k+1)*B*P) and rank r takes
// its B consecutive positions within them. So every sample is used exactly once per epoch across
// the P ranks, every rank runs the same number of steps, and only the last step may be short (or
// empty on some ranks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hpcnn::data {

// A permutation of [0, n) from (seed, epoch): Fisher-Yates over the counter-based RNG.
std::vector<std::uint32_t> epoch_order(std::size_t n, std::uint64_t seed, std::uint64_t epoch, bool shuffle);

// Steps of one epoch: ceil(n / (batch * ranks)).
std::size_t steps_per_epoch(std::size_t n, int batch, int ranks);

// This rank's sample indices for every step of the epoch (inner vectors have at most `batch`
// entries; the last may be shorter or empty).
std::vector<std::vector<std::uint32_t>> rank_batches(const std::vector<std::uint32_t>& order, int batch, int rank,
                                                     int ranks);

// Data-parallel workers with an exchange scheme (hpcnn-scale --data) take full batches only, so
// every worker's gradient has the same weight and a parameter server serves a known number of
// steps: floor(n / (batch * workers)) steps per epoch (ref. [4]: 50,000 / (3 x 42) -> 396); the
// n mod (batch x workers) samples left over differ from epoch to epoch when shuffling.
enum class Sharding {
  Shard,  // one permutation of (seed, epoch) shared by all workers, split as rank_batches does:
          // disjoint shards, every sample at most once per epoch over the workers
  Whole,  // every worker its own permutation of the whole set (seed, worker, epoch), of which it
          // processes 1/workers per epoch (ref. [4]'s asynchronous TensorFlow)
};
std::size_t full_steps_per_epoch(std::size_t n, int batch, int workers);
std::vector<std::vector<std::uint32_t>> worker_batches(Sharding sharding, std::size_t n, int batch, int worker,
                                                       int workers, std::uint64_t seed, std::uint64_t epoch,
                                                       bool shuffle);

}  // namespace hpcnn::data
