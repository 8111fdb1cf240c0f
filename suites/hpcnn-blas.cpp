// hpcnn-blas: CPU compute libraries and their thread counts (ref. [5] Tables X-XII,
// docs/EXPERIMENTS.md): SGEMM per library, the conv/fc layers of a model, and training runs with
// CPU usage and memory.
#include "suites/blas_suite.hpp"
#include "harness/main_wrapper.hpp"

int main(int argc, char** argv) { return hpcnn::suite_main(argc, argv, "hpcnn-blas", hpcnn::run_blas_suite); }
