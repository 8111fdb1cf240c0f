#include "collectives/pair_schedule.hpp"

#include <utility>

namespace hpcnn {

int pair_rounds(int ranks) {
  if (ranks < 2) return 0;
  return ranks % 2 == 0 ? ranks - 1 : ranks;
}

int round_partner(int ranks, int round, int rank) {
  if (ranks < 2 || rank < 0 || rank >= ranks || round < 0 || round >= pair_rounds(ranks)) return -1;
  // The circle method on an even count: position m = circle - 1 stays fixed, the others turn by
  // one position per round. An odd count gets a phantom rank, whose partner sits the round out.
  const int circle = ranks % 2 == 0 ? ranks : ranks + 1, turning = circle - 1, fixed = circle - 1;
  int partner;
  if (rank == fixed) {
    partner = round;
  } else if (rank == round) {
    partner = fixed;
  } else {
    partner = ((2 * round - rank) % turning + turning) % turning;
  }
  return partner >= ranks ? -1 : partner;
}

namespace {

// splitmix64: a small generator whose sequence is fixed by its definition on every platform.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int> schedule_order(int ranks, std::uint64_t seed) {
  std::vector<int> order(static_cast<std::size_t>(ranks > 0 ? ranks : 0));
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  if (seed == 0) return order;
  std::uint64_t state = seed;
  for (std::size_t k = order.size(); k > 1; --k) {  // Fisher-Yates
    const std::size_t j = static_cast<std::size_t>(next_random(state) % k);
    std::swap(order[k - 1], order[j]);
  }
  return order;
}

int ordered_partner(const std::vector<int>& order, int round, int rank) {
  const int ranks = static_cast<int>(order.size());
  int place = -1;
  for (int k = 0; k < ranks; ++k)
    if (order[static_cast<std::size_t>(k)] == rank) place = k;
  const int partner_place = place < 0 ? -1 : round_partner(ranks, round, place);
  return partner_place < 0 ? -1 : order[static_cast<std::size_t>(partner_place)];
}

std::vector<int> sampled_rounds(int total, int wanted) {
  std::vector<int> rounds;
  if (wanted <= 0 || wanted >= total) wanted = total;
  for (int k = 0; k < wanted; ++k) {
    // Evenly spaced, first round included: round floor(k * total / wanted), all distinct.
    rounds.push_back(static_cast<int>(static_cast<long long>(k) * total / wanted));
  }
  return rounds;
}

}  // namespace hpcnn
