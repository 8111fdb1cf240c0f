// What this process is doing right now, for the watchdog (harness/watchdog.hpp), which reads it
// from a thread of its own: the blocking wait in progress (a collective, an exchange wait, a
// parameter-server wait), with the bucket and the peer rank it waits for where the code knows
// them, and otherwise the training phase and iteration. One thread marks (the one that calls MPI);
// every field is an atomic, so the watchdog reads without a lock. Marking reads no clock: a few relaxed stores
// (~1-2 ns), nothing a measurement can see even around a 1 us allreduce; the watchdog times a
// wait itself, from the moment it first sees its number.
//
// Names given to WaitScope and set_phase must be string literals (or otherwise live for the
// whole run): the watchdog keeps only the pointer.
#pragma once

#include <cstdint>

namespace hpcnn::activity {

// What a wait is: an operation of ours ("allreduce step"), or a blocking MPI call, which the MPI
// watch (harness/mpi_watch.cpp) marks for every blocking call the code makes.
enum class WaitKind { Operation, MpiCall };

// Marks a blocking wait for its lifetime. Scopes nest: an exchange's wait contains the schedule's
// wait for one peer, which contains an MPI call; the watchdog times the outermost (how long this
// rank has been stuck) and names the innermost operation, MPI call, bucket and peer.
class WaitScope {
 public:
  explicit WaitScope(const char* name, int bucket = -1, int peer = -1, WaitKind kind = WaitKind::Operation);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  bool marked_;  // false beyond the deepest nesting kept (the outer scopes still tell enough)
};

// The phase of the training loop ("load", "forward", ...) and the iteration (-1: none).
void set_phase(const char* phase, long iteration = -1);

// A function told of every phase as it begins, on the marking thread (nullptr: none, the rule
// outside the tests). The tests' fault injection is one (base/fault_injection.hpp,
// arm_phase_faults): it stops or kills a rank at a chosen phase of a chosen iteration with no
// code of its own in the training loop.
using PhaseObserver = void (*)(const char* phase, long iteration);
void observe_phases(PhaseObserver observer);

struct Snapshot {
  bool waiting = false;
  std::uint64_t wait_number = 0;  // counts outermost waits: a new wait has a new number
  const char* operation = "";     // innermost operation of ours ("" when only an MPI call)
  const char* call = "";          // innermost MPI call ("" when none)
  int bucket = -1, peer = -1;     // innermost known ones (-1: unknown)
  const char* phase = "";
  std::uint64_t phase_number = 0;  // counts set_phase calls
  long iteration = -1;
};
// Safe from any thread; fields may mix two neighbouring moments (diagnostics, not accounting).
Snapshot snapshot();

}  // namespace hpcnn::activity
