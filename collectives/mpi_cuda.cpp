#include "collectives/mpi_cuda.hpp"

#include <mpi.h>
// Open MPI declares its extensions (MPIX_Query_cuda_support among them) in mpi-ext.h; other MPIs
// lack the header, and then nothing can be asked.
#if defined(OPEN_MPI) && OPEN_MPI && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace hpcnn {

MpiCudaSupport mpi_cuda_support() {
  MpiCudaSupport s;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  s.compile_time = true;
#endif
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  // Asked even when the headers say no: the library loaded at run time may be another build.
  s.run_time = MPIX_Query_cuda_support() == 1;
  s.detail = std::string("Open MPI: headers ").append(s.compile_time ? "CUDA-aware" : "not CUDA-aware")
                 .append(", MPIX_Query_cuda_support() = ").append(s.run_time ? "1" : "0");
#else
  s.detail = std::string("headers ").append(s.compile_time ? "CUDA-aware" : "not CUDA-aware")
                 .append("; this MPI has no run-time query (Open MPI's mpi-ext.h), so assumed not CUDA-aware");
#endif
  return s;
}

}  // namespace hpcnn
