// Recursive halving-doubling (Rabenseifner): reduce-scatter by recursive halving (log2 P steps, each
// exchanging half of the range still held with the partner at distance P/2, P/4, ... 1), then
// allgather by recursive doubling in the reverse order. Sends 2(P-1)/P of the vector like the ring
// but in 2 log2 P steps. Rank counts that are not a power of two: of the first 2r ranks
// (r = P - 2^floor(log2 P)) each even rank first hands its whole vector to the odd rank after it
// and receives the result from it at the end, so 2^floor(log2 P) ranks run the algorithm.
#include "collectives/rhd.hpp"

#include <cmath>
#include <tuple>
#include <utility>

#include "collectives/schedule.hpp"

namespace hpcnn {

Schedule rhd_schedule(int rank, int size, std::size_t count) {
  Schedule steps;
  if (size < 2 || count == 0) return steps;
  int p2 = 1;
  while (p2 * 2 <= size) p2 *= 2;
  const int extra = size - p2;
  auto whole = [&](int send_peer, int recv_peer, bool reduce) {
    Step s;
    s.send_peer = send_peer;
    s.send_count = send_peer >= 0 ? count : 0;
    s.recv_peer = recv_peer;
    s.recv_count = recv_peer >= 0 ? count : 0;
    s.reduce = reduce;
    return s;
  };
  if (rank < 2 * extra && rank % 2 == 0) {  // sits out: hands over its vector, gets the sum back
    steps.push_back(whole(rank + 1, -1, false));
    steps.push_back(whole(-1, rank + 1, false));
    return steps;
  }
  if (rank < 2 * extra) steps.push_back(whole(-1, rank - 1, true));
  const int me = rank < 2 * extra ? rank / 2 : rank - extra;  // rank among the p2 participants
  auto real_rank = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  auto range = [&](int lo, int hi) {  // blocks [lo, hi) -> floats
    const std::size_t a = block_offset(count, p2, lo);
    return std::pair<std::size_t, std::size_t>{a, block_offset(count, p2, hi) - a};
  };
  // Reduce-scatter by recursive halving: keep the half of [lo, hi) this rank's bit selects.
  int lo = 0, hi = p2;
  for (int mask = p2 / 2; mask >= 1; mask /= 2) {
    const int mid = (lo + hi) / 2;
    const bool upper = (me & mask) != 0;
    Step s;
    s.send_peer = s.recv_peer = real_rank(me ^ mask);
    s.reduce = true;
    std::tie(s.send_offset, s.send_count) = upper ? range(lo, mid) : range(mid, hi);
    if (upper) lo = mid;
    else hi = mid;
    std::tie(s.recv_offset, s.recv_count) = range(lo, hi);
    steps.push_back(s);
  }
  // Now [lo, hi) == [me, me + 1). Allgather by recursive doubling: swap ranges with the partner
  // whose range is adjacent, doubling what is held.
  for (int mask = 1; mask < p2; mask *= 2) {
    const int width = hi - lo;
    const bool upper = (me & mask) != 0;
    Step s;
    s.send_peer = s.recv_peer = real_rank(me ^ mask);
    std::tie(s.send_offset, s.send_count) = range(lo, hi);
    const int plo = upper ? lo - width : hi, phi = upper ? lo : hi + width;
    std::tie(s.recv_offset, s.recv_count) = range(plo, phi);
    if (upper) lo = plo;
    else hi = phi;
    steps.push_back(s);
  }
  if (rank < 2 * extra) steps.push_back(whole(rank - 1, -1, false));
  return steps;
}

std::unique_ptr<Allreduce> make_rhd_allreduce(MPI_Comm comm) {
  return std::make_unique<ScheduledAllreduce>(comm, listing(rhd_schedule));
}

double rhd_bucket_seconds(int workers, int /*servers*/, double n, const LinkCost& c) {
  if (workers < 2) return 0;
  const double p = workers, lg = std::floor(std::log2(p)), pof2 = std::exp2(lg);
  double t = 2 * lg * c.latency_s + 2 * (pof2 - 1) / pof2 * n * c.seconds_per_byte + (pof2 - 1) / pof2 * n * c.add_s_per_byte;
  if (pof2 < p) t += 2 * (c.latency_s + n * c.seconds_per_byte) + n * c.add_s_per_byte;  // folding the extra ranks in and out
  return t;
}

}  // namespace hpcnn
