#include "harness/main_wrapper.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "harness/signals.hpp"
#include "results/record.hpp"

namespace hpcnn {

std::string option_message(const SettingError& e) {
  const Field* f = find_field(e.setting);
  const std::string name = f && *f->option ? std::string("--") + f->option : e.setting;
  return name + (e.value.empty() ? "" : " " + e.value) + ": " + e.detail;
}

std::string error_message(const std::exception& e) {
  const auto* setting = dynamic_cast<const SettingError*>(&e);
  return setting ? option_message(*setting) : e.what();
}

bool is_root_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return true;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

// hpcnn runs threads beside the main one (the compute libraries' workers, the data loader, the
// watchdog), and only the main thread calls MPI: MPI_THREAD_FUNNELED is the level that allows it.
void init_mpi(int& argc, char**& argv, const char* program) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED && is_root_rank())
    std::fprintf(stderr, "%s: warning: the MPI library grants thread level %d, below MPI_THREAD_FUNNELED (%d) that hpcnn's "
                 "threads need; it may misbehave\n", program, provided, MPI_THREAD_FUNNELED);
}

int suite_main(int argc, char** argv, const char* program, const std::function<int(int, char**)>& body) {
  init_mpi(argc, argv, program);
  install_stop_handlers();  // after MPI_Init_thread, which may install handlers of its own
  arm_phase_faults();       // the tests' faults at a training step's phases (nothing outside them)
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    status = body(argc, argv);
  } catch (const UsageError& e) {
    if (is_root_rank()) std::fprintf(stderr, "%s: error: %s\n", program, error_message(e).c_str());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    std::fflush(stderr);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
    status = 1;
  }
  MPI_Finalize();
  return status;
}

}  // namespace hpcnn
