// Allreduce as a schedule of point-to-point steps, run by one non-blocking progress engine: the
// algorithms written here (ring.cpp, rhd.cpp) only say which range goes to and comes from which
// peer at each step; posting, testing, reducing and bookkeeping live here once.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/host_buffers.hpp"

namespace hpcnn {

// One step of one rank: post a send and/or a receive (peer -1: none), wait for both, then add the
// received range into the data (reduce) or receive it in place (copy). Ranges are in elements
// (floats, or bf16 values for start_bf16).
struct Step {
  int send_peer = -1;
  std::size_t send_offset = 0, send_count = 0;
  int recv_peer = -1;
  std::size_t recv_offset = 0, recv_count = 0;
  bool reduce = false;
};
using Schedule = std::vector<Step>;

// A rank's steps for one operation, made one at a time as they are posted. A ring has 2(P-1)
// steps per bucket: listed for every bucket in flight they would take 2(P-1) x 24 x 56 bytes per
// rank for ResNet-50's 24 buckets (2.7 MB at 1024 ranks), which a simulation holds for every rank.
struct Plan {
  std::size_t steps = 0;
  std::function<Step(std::size_t k)> step;  // k < steps
};

// The plan of `rank` out of `size` for summing `count` floats.
using Planner = std::function<Plan(int rank, int size, std::size_t count)>;
// A planner that lists a rank's whole schedule when the operation starts (a few steps: rhd, trees).
Planner listing(Schedule (*schedule)(int rank, int size, std::size_t count));

// Partition of `count` floats into `parts` contiguous blocks whose sizes differ by at most one:
// offset of block i (i == parts gives count).
std::size_t block_offset(std::size_t count, int parts, int i);

class ScheduledAllreduce : public Allreduce {
 public:
  // Duplicates `comm` so its messages never match anyone else's. Collective over comm.
  ScheduledAllreduce(MPI_Comm comm, Planner planner);
  ~ScheduledAllreduce() override;
  void start(float* data, std::size_t count) override { begin(data, count, false); }
  bool sums_bf16() const override { return true; }
  void start_bf16(std::uint16_t* data, std::size_t count) override { begin(data, count, true); }
  bool progress() override;
  void wait_all() override;
  Traffic traffic() const override { return traffic_; }

 private:
  struct Operation {
    void* data = nullptr;
    bool bf16 = false;  // the elements are bf16 bit patterns (2 bytes), else floats
    Plan plan;
    Step current;          // plan.step(next), made when it is posted
    std::size_t next = 0;  // step to post or being waited for
    bool posted = false;
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    HostFloats scratch;  // receive buffer of reduce steps (bf16: two values per float)
    int tag = 0;
    int ordinal = 0;  // its place among the operations started since the last wait_all (the bucket)
  };
  void begin(void* data, std::size_t count, bool bf16);
  // Posts steps and finishes completed ones; with `block`, waits on each step instead of testing.
  // Returns true when the operation is complete.
  bool advance(Operation& op, bool block);
  void reduce(Operation& op, const Step& s);  // adds a reduce step's received range into the data
  void retire_front();  // drops the oldest (finished) operation, keeping its buffer
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  Planner planner_;
  std::deque<Operation> ops_;  // in flight, oldest first
  int next_tag_ = 0;
  int started_since_wait_ = 0;
  std::vector<int> world_rank_;  // of each rank of comm_, for the watchdog's messages
  Traffic traffic_;
  // Receive buffers of finished operations, reused: a fresh allocation per operation costs page
  // faults and zeroing on every bucket (measured: a third of ring's bandwidth at 1 MiB).
  std::vector<HostFloats> spare_;
};

}  // namespace hpcnn
