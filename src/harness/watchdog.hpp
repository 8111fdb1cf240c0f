// The watchdog (--timeout S): a thread per process that ends a job stuck in a wait, as NCCL's and
// PyTorch's watchdogs do. When this rank has been in one blocking wait (a collective, an exchange
// or parameter-server wait: activity::WaitScope) for longer than the timeout, it asks every rank
// what it is doing through small files in a folder every rank sees (the run's journal folder,
// beside the results), prints ONE line naming the operation, the bucket and peer it waits for,
// and the ranks that did not arrive (no answer: stopped, dead or cut off; or busy in a phase),
// then ends its process (exit status 1) without MPI, which ends the job: every launcher (mpirun,
// hydra's mpiexec, srun) stops a job one of whose ranks exits without MPI_Finalize, and where one
// lets the others run on, each ends itself when its own watchdog fires. A rank that never reaches
// the wait can still answer, since the question is read by its watchdog thread, not by MPI.
//
// Why files and not MPI: the ranks that did not arrive are exactly the ones that cannot take part
// in a collective, and MPI is initialized for MPI_THREAD_FUNNELED (only the main thread calls it),
// so that the measurements see the library's fast path; this thread only reads the activity
// record, the clock and the folder.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace hpcnn {

struct WatchdogSettings {
  double timeout_s = 0;  // 0: no watchdog
  std::string board;     // folder for the question and the answers ("": this rank reports alone)
  std::string program;   // "hpcnn-scale", the prefix of the line
};

class Watchdog {
 public:
  // Starts the thread (none when timeout_s is 0). Reads rank, size and host name of `world`.
  Watchdog(const WatchdogSettings& settings, MPI_Comm world);
  ~Watchdog();  // stops the thread
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The files of a run's board, removed by rank 0 before a run (a resumed run finds the board of
  // the one that hung).
  static void clear_board(const std::string& board);

 private:
  // How long the current wait (or phase) has lasted, as this thread has seen it: from the first
  // tick that saw its number (so within one tick of the truth, without a clock read in the wait).
  struct Tracker {
    bool active = false;
    std::uint64_t number = 0;
    std::chrono::steady_clock::time_point since;
    double observe(bool now_active, std::uint64_t now_number);  // seconds so far (0: none)
  };

  void watch();
  void fire(double waited);
  void answer();
  std::string compose_line(double waited);

  WatchdogSettings settings_;
  int rank_ = 0, size_ = 1;
  std::string host_;
  bool answered_ = false;
  Tracker wait_, phase_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hpcnn
