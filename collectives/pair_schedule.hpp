// Which rank meets which in a test of every link: the round-robin tournament (the circle method),
// the schedule JSC's LinkTest uses. With P ranks every pair meets exactly once in P-1 rounds (P
// rounds for odd P, where one rank sits out each round), and every round is P/2 disjoint pairs
// that can be measured at the same time without sharing an endpoint. Pure arithmetic: no MPI.
#pragma once

#include <cstdint>
#include <vector>

namespace hpcnn {

// Rounds needed for every pair of `ranks` ranks to meet once: ranks-1 (even), ranks (odd), 0 for one rank.
int pair_rounds(int ranks);

// The rank `rank` meets in round `round` (0 <= round < pair_rounds(ranks)), or -1 when it sits out.
int round_partner(int ranks, int round, int rank);

// The ranks in the order they take the schedule's places: place k is taken by rank order[k]. The
// identity for seed 0; otherwise a permutation drawn from the seed, the same on every rank (own
// arithmetic, no library distribution), so a test repeated with other seeds measures every pair
// beside other pairs and a sample of rounds sees other pairs.
std::vector<int> schedule_order(int ranks, std::uint64_t seed);

// The partner of `rank` in `round` when the ranks take their places in `order` (schedule_order),
// or -1 when it sits out.
int ordered_partner(const std::vector<int>& order, int round, int rank);

// `wanted` of the `total` rounds, spread evenly over them (all when wanted <= 0 or >= total), in
// increasing order: a sample for machines too large for every round in one night.
std::vector<int> sampled_rounds(int total, int wanted);

}  // namespace hpcnn
