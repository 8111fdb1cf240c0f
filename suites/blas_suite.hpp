// hpcnn-blas: the CPU compute-library study of ref. [5] (Tables X-XII; docs/EXPERIMENTS.md). Three sweeps, each the
// cartesian product of its list options (the shared sweep machinery of suite_runner.hpp):
//   --sweep gemm    SGEMM GFLOP/s per library (openblas, eigen, dnnl, ...) x --threads x --sizes
//   --sweep layers  forward and backward time and GFLOP/s of every distinct convolution and fully
//                   connected shape of --model, per backend x thread count x batch
//   --sweep model   hpcnn-train's training loop per backend x thread count, with CPU usage and
//                   memory sampled over the whole run (cpu_usage.hpp)
// Everything goes into one HDF5 result file; `hpcnn-summary --table blas` shows the paper's layout.
#pragma once

#include <string>

namespace hpcnn {

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_blas_suite(int argc, char** argv);

// "N" (square) or "MxNxK" -> m, n, k; throws UsageError naming the value for anything else or a
// dimension of 0. Exposed for tests.
void parse_gemm_size(const std::string& text, int& m, int& n, int& k);

}  // namespace hpcnn
