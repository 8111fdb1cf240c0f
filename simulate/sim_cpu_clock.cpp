// hpcnn-simulate-cpuclock.so: preloaded into smpirun (LD_PRELOAD, set by suites/simulate_suite.cpp
// for the simulation only). SMPI reads the calling thread's CPU clock before and after every MPI
// call, to time the code between calls and inject that time as simulated computation. hpcnn's ranks
// simulate their compute explicitly and run with smpi/simulate-computation:no, so the readings are
// never used; yet the thread CPU clock has no vDSO path, each reading is a system call, and with
// three to four MPI calls per simulated message they take about 30 % of a ring simulation's wall
// time without this library (docs/SIMULATION.md, "What it costs"). It answers that one clock with
// zero and passes every other clock to the C library: a simulated figure is the same with it and
// without it. It needs the C library only (no C++ runtime: every program smpirun starts loads it).
#include <dlfcn.h>
#include <time.h>

namespace {

using ClockGettime = int (*)(clockid_t, struct timespec*);

// The C library's clock_gettime, looked up on first use. A plain pointer, not a function-local
// static (whose guard would need the C++ runtime); two threads that race to set it set the same value.
ClockGettime next_clock_gettime = nullptr;

}  // namespace

extern "C" int clock_gettime(clockid_t clock, struct timespec* now) {
  if (clock == CLOCK_THREAD_CPUTIME_ID) {
    now->tv_sec = 0;
    now->tv_nsec = 0;
    return 0;
  }
  if (!next_clock_gettime) next_clock_gettime = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  return next_clock_gettime(clock, now);
}
