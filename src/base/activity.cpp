#include "base/activity.hpp"

#include <atomic>

namespace hpcnn::activity {

namespace {

struct Frame {
  std::atomic<const char*> name{""};
  std::atomic<int> bucket{-1}, peer{-1};
  std::atomic<bool> mpi_call{false};
};

constexpr int kMaxDepth = 6;

struct Board {
  Frame frames[kMaxDepth];
  std::atomic<int> depth{0};
  std::atomic<std::uint64_t> waits{0};
  std::atomic<const char*> phase{""};
  std::atomic<std::uint64_t> phases{0};
  std::atomic<long> iteration{-1};
  std::atomic<PhaseObserver> observer{nullptr};
};

// A namespace-scope object, not a function-local static: no guard check on every mark.
Board g_board;
Board& board() { return g_board; }

}  // namespace

WaitScope::WaitScope(const char* name, int bucket, int peer, WaitKind kind) {
  Board& b = board();
  const int d = b.depth.load(std::memory_order_relaxed);
  marked_ = d < kMaxDepth;
  if (!marked_) return;
  Frame& f = b.frames[d];
  f.name.store(name, std::memory_order_relaxed);
  f.bucket.store(bucket, std::memory_order_relaxed);
  f.peer.store(peer, std::memory_order_relaxed);
  f.mpi_call.store(kind == WaitKind::MpiCall, std::memory_order_relaxed);
  // One writer (the thread that marks), so plain stores: no locked read-modify-write on the path
  // of a 0.2 us allreduce.
  if (d == 0) b.waits.store(b.waits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  b.depth.store(d + 1, std::memory_order_release);  // the frame is complete before it counts
}

WaitScope::~WaitScope() {
  if (!marked_) return;
  Board& b = board();
  b.depth.store(b.depth.load(std::memory_order_relaxed) - 1, std::memory_order_release);
}

void set_phase(const char* phase, long iteration) {
  Board& b = board();
  b.phase.store(phase, std::memory_order_relaxed);
  b.iteration.store(iteration, std::memory_order_relaxed);
  b.phases.store(b.phases.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (const PhaseObserver observer = b.observer.load(std::memory_order_relaxed)) observer(phase, iteration);
}

void observe_phases(PhaseObserver observer) { board().observer.store(observer, std::memory_order_relaxed); }

Snapshot snapshot() {
  Board& b = board();
  Snapshot s;
  const int depth = b.depth.load(std::memory_order_acquire);
  s.wait_number = b.waits.load(std::memory_order_relaxed);
  s.waiting = depth > 0;
  for (int d = depth - 1; d >= 0; --d) {  // from the innermost out: the first that knows each
    const Frame& f = b.frames[d];
    const char* name = f.name.load(std::memory_order_relaxed);
    const char*& slot = f.mpi_call.load(std::memory_order_relaxed) ? s.call : s.operation;
    if (!*slot) slot = name;
    if (s.bucket < 0) s.bucket = f.bucket.load(std::memory_order_relaxed);
    if (s.peer < 0) s.peer = f.peer.load(std::memory_order_relaxed);
  }
  s.phase = b.phase.load(std::memory_order_relaxed);
  s.phase_number = b.phases.load(std::memory_order_relaxed);
  s.iteration = b.iteration.load(std::memory_order_relaxed);
  return s;
}

}  // namespace hpcnn::activity
