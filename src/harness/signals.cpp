#include "harness/signals.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <initializer_list>

#include "base/activity.hpp"

namespace hpcnn {

namespace {

volatile std::sig_atomic_t g_signal = 0;
char g_partial[4096] = {};

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0) {  // the second one: leave now, and leave no partial file
    if (g_partial[0] != '\0') unlink(g_partial);
    _exit(128 + sig);
  }
  g_signal = sig;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaction(sig, &sa, nullptr);
}

int stop_signal() { return g_signal; }

bool stop_requested_anywhere(MPI_Comm comm) {
  int size = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
  int mine = g_signal != 0 ? 1 : 0;
  if (size <= 1) return mine != 0;
  int any = 0;
  const activity::WaitScope waiting("stop-signal agreement");
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

void set_partial_file(const char* path) {
  if (!path) path = "";
  const std::size_t n = std::strlen(path);
  if (n >= sizeof g_partial) return;  // too long to keep: a second signal leaves it
  g_partial[0] = '\0';                // never half a path in the buffer
  std::memcpy(g_partial + 1, path + (n ? 1 : 0), n ? n - 1 : 0);
  g_partial[n] = '\0';
  g_partial[0] = n ? path[0] : '\0';
}

}  // namespace hpcnn
