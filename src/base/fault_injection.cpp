#include "base/fault_injection.hpp"

#include <errno.h>  // program_invocation_short_name
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hpcnn {

namespace {

struct Fault {
  bool armed = false;
  int signal = 0;
  std::string place;
  long iteration = 0;
  int rank = 0;
};

Fault parse_fault() {
  Fault f;
  const char* spec = std::getenv("HPCNN_TEST_FAULT");
  if (!spec || !*spec) return f;
  char sig[16] = {}, place[16] = {};
  long iteration = 0;
  int rank = 0;
  if (std::sscanf(spec, "%15[a-z0-9],%15[a-z],%ld,%d", sig, place, &iteration, &rank) != 4) {
    std::fprintf(stderr, "HPCNN_TEST_FAULT='%s': want SIGNAL,PLACE,ITERATION,RANK\n", spec);
    std::abort();  // a test that asks for a fault it does not get must not pass
  }
  if (std::strcmp(sig, "kill") == 0) f.signal = SIGKILL;
  else if (std::strcmp(sig, "stop") == 0) f.signal = SIGSTOP;
  else if (std::strcmp(sig, "segv") == 0) f.signal = SIGSEGV;
  else if (std::strcmp(sig, "term") == 0) f.signal = SIGTERM;
  else if (std::strcmp(sig, "usr1") == 0) f.signal = SIGUSR1;
  else {
    std::fprintf(stderr, "HPCNN_TEST_FAULT: unknown signal '%s' (kill, stop, segv, term, usr1)\n", sig);
    std::abort();
  }
  f.place = place;
  f.iteration = iteration;
  f.rank = rank;
  f.armed = true;
  return f;
}

// The rank as the launcher told it (base/ does not call MPI): mpirun, PMIx, PMI, srun.
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

// HPCNN_TEST_SLOWDOWN's fraction when it names this executable, else 0.
double parse_slowdown() {
  const char* spec = std::getenv("HPCNN_TEST_SLOWDOWN");
  if (!spec || !*spec) return 0;
  const char* colon = std::strrchr(spec, ':');
  char* end = nullptr;
  double fraction = colon ? std::strtod(colon + 1, &end) : -1;
  if (end && *end == '%') fraction /= 100, ++end;
  if (!colon || !end || *end != '\0' || !(fraction >= 0) || fraction > 100) {
    std::fprintf(stderr, "HPCNN_TEST_SLOWDOWN='%s': want PROGRAM:FRACTION (hpcnn-train:25%%)\n", spec);
    std::abort();  // a test that asks for a slowdown it does not get must not pass
  }
  return std::string(spec, colon) == program_invocation_short_name ? fraction : 0;
}

}  // namespace

double inject_slowdown(double iteration_seconds) {
  static const double fraction = parse_slowdown();
  if (fraction <= 0 || !(iteration_seconds > 0)) return 0;
  // Busy: a sleep would overshoot by the timer slack (tens of microseconds), more than a small
  // allreduce takes.
  const double extra = fraction * iteration_seconds;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(extra);
  while (std::chrono::steady_clock::now() < end) {
  }
  return extra;
}

void inject_kill_after(const char* events, long count) {
  const char* spec = std::getenv((std::string("HPCNN_TEST_KILL_AFTER_") + events).c_str());
  if (spec && std::strtol(spec, nullptr, 10) == count) {
    std::fflush(nullptr);
    raise(SIGKILL);
  }
}

void inject_exit_at(const char* program, int rank, int iteration) {
  static const char* spec = std::getenv("HPCNN_TEST_EXIT_AT");
  int r = -1, k = -1;
  if (spec && std::sscanf(spec, "%d:%d", &r, &k) == 2 && r == rank && k == iteration) {
    std::fprintf(stderr, "%s: rank %d exits at iteration %d (HPCNN_TEST_EXIT_AT)\n", program, r, k);
    std::fflush(stderr);
    _exit(3);
  }
}

long injected_corruption(const char* what) {
  const char* spec = std::getenv((std::string("HPCNN_TEST_CORRUPT_") + what).c_str());
  return spec ? std::strtol(spec, nullptr, 10) : -1;
}

void inject_fault(const char* place, long iteration) {
  static const Fault fault = parse_fault();
  if (!fault.armed || fault.place != place) return;
  if (fault.place != "setup" && fault.iteration != iteration) return;
  if (launcher_rank() != fault.rank) return;
  std::fflush(nullptr);
  if (fault.signal == SIGSEGV) std::signal(SIGSEGV, SIG_DFL);  // a real crash: no handler of MPI's
  raise(fault.signal);
}

std::string active_fault_injections() {
  std::string out;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "HPCNN_TEST_", 11) == 0) out.append(out.empty() ? "" : "; ").append(*e);
  return out;
}

}  // namespace hpcnn
