// Whether the MPI library accepts device (CUDA) pointers: asked of the headers at compile time and
// of the loaded library at run time (Open MPI's MPIX_Query_cuda_support). The run-time answer is
// the one that counts: the library found at run time may differ from the headers built against.
#pragma once

#include <string>

namespace hpcnn {

struct MpiCudaSupport {
  bool compile_time = false;  // the headers say CUDA-aware (MPIX_CUDA_AWARE_SUPPORT)
  bool run_time = false;      // the library in use says so; false when it cannot be asked
  std::string detail;         // one line: what was asked and what each answered
};

// Call between MPI_Init and MPI_Finalize.
MpiCudaSupport mpi_cuda_support();

}  // namespace hpcnn
