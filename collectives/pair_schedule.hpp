// Which rank meets which in a test of every link: the round-robin tournament (the circle method),
// the schedule JSC's LinkTest uses. With P ranks every pair meets exactly once in P-1 rounds (P
// rounds for odd P, where one rank sits out each round), and every round is P/2 disjoint pairs
// that can be measured at the same time without sharing an endpoint. Pure arithmetic: no MPI.
#pragma once

#include <vector>

namespace hpcnn {

// Rounds needed for every pair of `ranks` ranks to meet once: ranks-1 (even), ranks (odd), 0 for one rank.
int pair_rounds(int ranks);

// The rank `rank` meets in round `round` (0 <= round < pair_rounds(ranks)), or -1 when it sits out.
int round_partner(int ranks, int round, int rank);

// `wanted` of the `total` rounds, spread evenly over them (all when wanted <= 0 or >= total), in
// increasing order: a sample for machines too large for every round in one night.
std::vector<int> sampled_rounds(int total, int wanted);

}  // namespace hpcnn
