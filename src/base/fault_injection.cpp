#include "base/fault_injection.hpp"

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

void inject_fault(const char* place, long iteration) {
  static const Fault fault = parse_fault();
  if (!fault.armed || fault.place != place) return;
  if (fault.place != "setup" && fault.iteration != iteration) return;
  if (launcher_rank() != fault.rank) return;
  std::fflush(nullptr);
  if (fault.signal == SIGSEGV) std::signal(SIGSEGV, SIG_DFL);  // a real crash: no handler of MPI's
  raise(fault.signal);
}

}  // namespace hpcnn
