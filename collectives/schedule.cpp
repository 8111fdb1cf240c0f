#include "collectives/schedule.hpp"

#include <algorithm>
#include <climits>
#include <memory>

#include "base/activity.hpp"
#include "base/errors.hpp"

namespace hpcnn {

std::size_t block_offset(std::size_t count, int parts, int i) {
  const std::size_t p = static_cast<std::size_t>(parts), k = static_cast<std::size_t>(i);
  const std::size_t base = count / p, extra = count % p;
  return k * base + std::min(k, extra);
}

Planner listing(Schedule (*schedule)(int rank, int size, std::size_t count)) {
  return [schedule](int rank, int size, std::size_t count) {
    auto listed = std::make_shared<const Schedule>(schedule(rank, size, count));
    return Plan{listed->size(), [listed](std::size_t k) { return (*listed)[k]; }};
  };
}

ScheduledAllreduce::ScheduledAllreduce(MPI_Comm comm, Planner planner) : planner_(std::move(planner)) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Group mine = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  MPI_Comm_group(comm_, &mine);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) ranks[static_cast<std::size_t>(r)] = r;
  world_rank_.resize(ranks.size());
  MPI_Group_translate_ranks(mine, size_, ranks.data(), world, world_rank_.data());
  MPI_Group_free(&mine);
  MPI_Group_free(&world);
}

ScheduledAllreduce::~ScheduledAllreduce() {
  // Operations still in flight would write into freed memory: complete them (they complete on
  // every rank, since every rank started the same operations).
  try {
    wait_all();
  } catch (...) {
  }
  MPI_Comm_free(&comm_);
}

namespace {
int checked_int(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw RuntimeError("allreduce: message of " + std::to_string(n) + " floats exceeds MPI's int count");
  return static_cast<int>(n);
}
}  // namespace

void ScheduledAllreduce::begin(void* data, std::size_t count, bool bf16) {
  Operation op;
  op.data = data;
  op.bf16 = bf16;
  op.plan = planner_(rank_, size_, count);
  std::size_t scratch = 0;
  for (std::size_t k = 0; k < op.plan.steps; ++k) {
    const Step s = op.plan.step(k);
    if (s.reduce && s.recv_peer >= 0) scratch = std::max(scratch, bf16 ? (s.recv_count + 1) / 2 : s.recv_count);
  }
  if (!spare_.empty()) {
    op.scratch = std::move(spare_.back());
    spare_.pop_back();
  }
  if (op.scratch.size() < scratch) op.scratch = HostFloats(scratch);
  // Every rank numbers its operations identically, so the tag pairs up the same operation's
  // messages across ranks even when several buckets are in flight between the same two peers.
  op.tag = next_tag_;
  next_tag_ = (next_tag_ + 1) % 32767;  // MPI guarantees tags up to 32767
  op.ordinal = started_since_wait_++;
  ops_.push_back(std::move(op));
  advance(ops_.back(), false);
}

bool ScheduledAllreduce::advance(Operation& op, bool block) {
  const std::size_t bytes = op.bf16 ? sizeof(std::uint16_t) : sizeof(float);
  const MPI_Datatype type = op.bf16 ? MPI_UINT16_T : MPI_FLOAT;
  char* data = static_cast<char*>(op.data);
  while (op.next < op.plan.steps) {
    if (!op.posted) op.current = op.plan.step(op.next);
    const Step& s = op.current;
    if (!op.posted) {
      if (s.recv_peer >= 0) {
        void* dst = s.reduce ? static_cast<void*>(op.scratch.data()) : data + s.recv_offset * bytes;
        MPI_Irecv(dst, checked_int(s.recv_count), type, s.recv_peer, op.tag, comm_, &op.requests[0]);
        traffic_.received += static_cast<std::int64_t>(s.recv_count * bytes);
      }
      if (s.send_peer >= 0) {
        MPI_Isend(data + s.send_offset * bytes, checked_int(s.send_count), type, s.send_peer, op.tag, comm_,
                  &op.requests[1]);
        traffic_.sent += static_cast<std::int64_t>(s.send_count * bytes);
      }
      op.posted = true;
    }
    if (block) {
      const int peer = s.recv_peer >= 0 ? s.recv_peer : s.send_peer;
      const activity::WaitScope waiting("allreduce step", op.ordinal, world_rank_[static_cast<std::size_t>(peer)]);
      MPI_Waitall(2, op.requests, MPI_STATUSES_IGNORE);
    } else {
      int done = 0;
      MPI_Testall(2, op.requests, &done, MPI_STATUSES_IGNORE);
      if (!done) return false;
    }
    if (s.reduce && s.recv_peer >= 0) reduce(op, s);
    op.posted = false;
    ++op.next;
  }
  return true;
}

void ScheduledAllreduce::reduce(Operation& op, const Step& s) {
  if (op.bf16)
    add_bf16(static_cast<std::uint16_t*>(op.data) + s.recv_offset,
             reinterpret_cast<const std::uint16_t*>(op.scratch.data()), s.recv_count);
  else
    add_floats(static_cast<float*>(op.data) + s.recv_offset, op.scratch.data(), s.recv_count);
}

bool ScheduledAllreduce::progress() {
  // Every operation gets its turn (a later bucket's first step may be ready before an earlier
  // bucket's last one); finished operations leave from the front.
  for (Operation& op : ops_) advance(op, false);
  while (!ops_.empty() && ops_.front().next == ops_.front().plan.steps) retire_front();
  return ops_.empty();
}

void ScheduledAllreduce::retire_front() {
  if (ops_.front().scratch.size() > 0 && spare_.size() < 64) spare_.push_back(std::move(ops_.front().scratch));
  ops_.pop_front();
}

void ScheduledAllreduce::wait_all() {
  // Oldest first: that is the order every rank posts in, so blocking on it cannot deadlock.
  while (!ops_.empty()) {
    advance(ops_.front(), true);
    retire_front();
  }
  started_since_wait_ = 0;
}

}  // namespace hpcnn
