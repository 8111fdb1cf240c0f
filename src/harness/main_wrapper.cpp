#include "harness/main_wrapper.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "engine/errors.hpp"

namespace hpcnn {

bool is_root_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return true;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

int suite_main(int argc, char** argv, const char* program, const std::function<int(int, char**)>& body) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    status = body(argc, argv);
  } catch (const UsageError& e) {
    if (is_root_rank()) std::fprintf(stderr, "%s: error: %s\n", program, e.what());
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
