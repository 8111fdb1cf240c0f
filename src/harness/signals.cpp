#include "harness/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <initializer_list>

#include "base/activity.hpp"

namespace hpcnn {

namespace {

// The handler may run on any thread that does not block the signal (Open MPI's progress thread
// among them), not only by interrupting the main one: lock-free atomics, which a handler may use
// and every thread sees in order.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<const char*>::is_always_lock_free);
// The partial file's path: written into the buffer not in use, then published.
char g_partial[2][4096] = {};
std::atomic<const char*> g_partial_path{""};

extern "C" void on_stop_signal(int sig) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, sig)) {  // the second one: leave now, and leave no partial file
    const char* partial = g_partial_path.load();
    if (partial[0] != '\0') unlink(partial);
    _exit(128 + sig);
  }
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaction(sig, &sa, nullptr);
}

int stop_signal() { return g_signal.load(); }

StopCause stop_cause_anywhere(MPI_Comm comm, bool storage_failed) {
  int size = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
  int cause = static_cast<int>(storage_failed        ? StopCause::Storage
                               : g_signal.load() != 0 ? StopCause::Signal
                                                      : StopCause::None);
  if (size > 1) {
    const activity::WaitScope waiting("stop-signal agreement");
    MPI_Allreduce(MPI_IN_PLACE, &cause, 1, MPI_INT, MPI_MAX, comm);
  }
  return static_cast<StopCause>(cause);
}

void set_partial_file(const char* path) {
  if (!path) path = "";
  const std::size_t n = std::strlen(path);
  if (n >= sizeof g_partial[0]) return;  // too long to keep: a second signal leaves it
  char* spare = g_partial_path.load() == g_partial[0] ? g_partial[1] : g_partial[0];
  std::memcpy(spare, path, n + 1);
  g_partial_path.store(n ? spare : "");
}

}  // namespace hpcnn
