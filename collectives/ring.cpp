// Ring allreduce: reduce-scatter then allgather around the ring rank -> rank+1, P-1 steps each, the
// vector cut into P blocks (sizes differ by at most one float, so any count works, 0 and 1
// included). Each rank sends and receives 2(P-1)/P of the vector: bandwidth-optimal, latency 2(P-1).
// Every block's sum is formed on one rank and then copied, so all ranks end bit-identical.
#include "collectives/ring.hpp"

#include "collectives/schedule.hpp"

namespace hpcnn {

Schedule ring_schedule(int rank, int size, std::size_t count) {
  Schedule steps;
  if (size < 2 || count == 0) return steps;
  const int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
  auto block = [&](int i, Step& s, bool send) {
    i = ((i % size) + size) % size;
    const std::size_t lo = block_offset(count, size, i), hi = block_offset(count, size, i + 1);
    if (send) {
      s.send_offset = lo;
      s.send_count = hi - lo;
    } else {
      s.recv_offset = lo;
      s.recv_count = hi - lo;
    }
  };
  // Reduce-scatter: at step k send block rank-k, receive block rank-k-1 and add it in; after P-1
  // steps this rank holds the complete sum of block rank+1.
  for (int k = 0; k < size - 1; ++k) {
    Step s;
    s.send_peer = next;
    s.recv_peer = prev;
    s.reduce = true;
    block(rank - k, s, true);
    block(rank - k - 1, s, false);
    steps.push_back(s);
  }
  // Allgather: pass the complete blocks on; at step k send block rank+1-k, receive block rank-k.
  for (int k = 0; k < size - 1; ++k) {
    Step s;
    s.send_peer = next;
    s.recv_peer = prev;
    block(rank + 1 - k, s, true);
    block(rank - k, s, false);
    steps.push_back(s);
  }
  return steps;
}

std::unique_ptr<Allreduce> make_ring_allreduce(MPI_Comm comm) {
  return std::make_unique<ScheduledAllreduce>(comm, ring_schedule);
}

double ring_bucket_seconds(int workers, int /*servers*/, double n, const LinkCost& c) {
  if (workers < 2) return 0;
  const double p = workers;
  return 2 * (p - 1) * c.latency_s + 2 * (p - 1) / p * n * c.seconds_per_byte + (p - 1) / p * n * c.add_s_per_byte;
}

}  // namespace hpcnn
