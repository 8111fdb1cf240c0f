// hpcnn-scale: data-parallel training over MPI (allreduce or parameter server), with scaling figures.
#include "harness/main_wrapper.hpp"
#include "suites/scale_suite.hpp"

int main(int argc, char** argv) { return hpcnn::suite_main(argc, argv, "hpcnn-scale", hpcnn::run_scale_suite); }
