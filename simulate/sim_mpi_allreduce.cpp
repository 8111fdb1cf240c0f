// The `mpi` scheme in a simulation. Its buckets (MPI_Iallreduce in a real run): SimGrid's
// MPI_Iallreduce is no model of a real MPI's (it sends every rank's whole buffer to every other
// rank, and in SimGrid 3.32 it corrupts in-place sums of 64 KiB or more), so the simulator runs, on
// hpcnn's own progress engine, the schedule Open MPI's libnbc chooses for hpcnn's call, an in-place
// MPI_Iallreduce: a binomial-tree reduce to rank 0 followed by a binomial-tree broadcast, each of
// the whole buffer (libnbc's allred_sched_diss), with ceil(log2 P) odd a copy of the buffer first
// (the in-place call's result must end in the caller's buffer). libnbc posts a rank's broadcast
// sends at once; they are simulated one after another, nearest child first, because that is how
// they left the node where it was measured (Open MPI over TCP: the 4-host LeNet-5 step of
// cluster_simulation came out 26% slow with the sends sharing the link, 2% fast in order; with
// sharing, the deepest rank of L = ceil(log2 P) levels waits L(L+1)/2 message times, not L).
// Its blocking run() (hpcnn-allreduce's call) is SimGrid's MPI_Allreduce, whose algorithm smpirun
// chooses as Open MPI's tuned component does (--cfg=smpi/allreduce:ompi). docs/SIMULATION.md says
// so beside the results.
#include "collectives/mpi_allreduce.hpp"

#include "collectives/schedule.hpp"

namespace hpcnn {

namespace {

int ceil_log2(int size) {
  int rounds = 0;
  while ((1 << rounds) < size) ++rounds;
  return rounds;
}

// Rank `rank` of `size`: receive and add each partner's partial sum in the rounds this rank's
// bit pattern keeps it, send its own up once, then receive the result from its parent and pass it
// to its children.
Schedule binomial_schedule(int rank, int size, std::size_t count) {
  Schedule steps;
  const int rounds = ceil_log2(size);
  for (int r = 1; r <= rounds; ++r) {
    const int half = 1 << (r - 1);
    if (rank % (1 << r) == 0) {
      if (rank + half < size) {
        Step s;
        s.recv_peer = rank + half, s.recv_count = count, s.reduce = true;
        steps.push_back(s);
      }
    } else {
      Step s;
      s.send_peer = rank - half, s.send_count = count;
      steps.push_back(s);
      break;
    }
  }
  for (int r = 0; r < rounds && rank != 0; ++r)
    if (rank >= (1 << r) && rank < (1 << (r + 1))) {
      Step s;
      s.recv_peer = rank - (1 << r), s.recv_count = count;
      steps.push_back(s);
    }
  for (int r = 0; r < rounds; ++r)
    if (rank < (1 << r) && rank + (1 << r) < size) {
      Step s;
      s.send_peer = rank + (1 << r), s.send_count = count;
      steps.push_back(s);
    }
  return steps;
}

class SimulatedMpiAllreduce : public ScheduledAllreduce {
 public:
  explicit SimulatedMpiAllreduce(MPI_Comm comm) : ScheduledAllreduce(comm, listing(binomial_schedule)) {
    MPI_Comm_dup(comm, &comm_);
    int size = 1;
    MPI_Comm_size(comm_, &size);
    copies_first_ = ceil_log2(size) % 2 == 1;
  }
  ~SimulatedMpiAllreduce() override { MPI_Comm_free(&comm_); }
  void start(float* data, std::size_t count) override {
    in_place_copy(count);
    ScheduledAllreduce::start(data, count);
  }
  void start_bf16(std::uint16_t* data, std::size_t count) override {
    in_place_copy((count + 1) / 2);
    ScheduledAllreduce::start_bf16(data, count);
  }
  void run(float* data, std::size_t count) override {
    MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_);
  }

 private:
  // libnbc's in-place binomial allreduce alternates two buffers over its ceil(log2 P) reduce rounds
  // and copies the caller's into the other first when that count is odd, so that the sum ends in
  // the caller's. Only its time matters here (copy_floats is simulated: sim_host_buffers.cpp).
  void in_place_copy(std::size_t floats) {
    if (copies_first_) copy_floats(nullptr, nullptr, floats);
  }
  bool copies_first_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<Allreduce> make_mpi_allreduce(MPI_Comm comm) { return std::make_unique<SimulatedMpiAllreduce>(comm); }

}  // namespace hpcnn
