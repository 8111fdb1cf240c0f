// Ring allreduce: reduce-scatter then allgather around the ring rank -> rank+1, P-1 steps each, the
// vector cut into P blocks (sizes differ by at most one float, so any count works, 0 and 1
// included). Each rank sends and receives 2(P-1)/P of the vector: bandwidth-optimal, latency 2(P-1).
// Every block's sum is formed on one rank and then copied, so all ranks end bit-identical.
#include "collectives/ring.hpp"

#include <tuple>
#include <utility>

#include "collectives/schedule.hpp"

namespace hpcnn {

Step ring_step(int rank, int size, std::size_t count, std::size_t k) {
  const int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
  const int round = static_cast<int>(k % static_cast<std::size_t>(size - 1));
  const bool reduce_scatter = k < static_cast<std::size_t>(size - 1);
  auto range = [&](int i) {
    i = ((i % size) + size) % size;
    const std::size_t lo = block_offset(count, size, i);
    return std::pair{lo, block_offset(count, size, i + 1) - lo};
  };
  Step s;
  s.send_peer = next;
  s.recv_peer = prev;
  s.reduce = reduce_scatter;
  // Reduce-scatter: at round k send block rank-k, receive block rank-k-1 and add it in; after P-1
  // rounds this rank holds the complete sum of block rank+1. Allgather: pass the complete blocks
  // on; at round k send block rank+1-k, receive block rank-k.
  const int send_block = reduce_scatter ? rank - round : rank + 1 - round;
  std::tie(s.send_offset, s.send_count) = range(send_block);
  std::tie(s.recv_offset, s.recv_count) = range(send_block - 1);
  return s;
}

Plan ring_plan(int rank, int size, std::size_t count) {
  if (size < 2 || count == 0) return {};
  return Plan{2 * static_cast<std::size_t>(size - 1), [=](std::size_t k) { return ring_step(rank, size, count, k); }};
}

std::unique_ptr<Allreduce> make_ring_allreduce(MPI_Comm comm) {
  return std::make_unique<ScheduledAllreduce>(comm, ring_plan);
}

double ring_bucket_seconds(int workers, int /*servers*/, double n, const LinkCost& c) {
  if (workers < 2) return 0;
  const double p = workers;
  return 2 * (p - 1) * c.latency_s + 2 * (p - 1) / p * n * c.seconds_per_byte + (p - 1) / p * n * c.add_s_per_byte;
}

}  // namespace hpcnn
