#include "base/fault_injection.hpp"

#include "base/activity.hpp"

#include <unistd.h>

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

}  // namespace

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

namespace {

const Fault& the_fault() {
  static const Fault fault = parse_fault();
  return fault;
}

// The places reached through phases: a training step's, by the phase that begins them; a result
// file's commit, counted here (the Nth file this process writes).
void on_phase(const char* phase, long iteration) {
  static long commits = 0;
  if (std::strcmp(phase, "load") == 0) inject_fault("iteration", iteration);
  else if (std::strcmp(phase, "exchange wait") == 0) inject_fault("exchange", iteration);
  else if (std::strcmp(phase, "writing a result file") == 0) inject_fault("commit", ++commits);
}

}  // namespace

void arm_phase_faults() {
  const Fault& fault = the_fault();
  if (fault.armed && fault.place != "setup") activity::observe_phases(&on_phase);
}

void inject_fault(const char* place, long iteration) {
  const Fault& fault = the_fault();
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
