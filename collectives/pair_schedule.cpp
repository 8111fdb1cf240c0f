#include "collectives/pair_schedule.hpp"

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
