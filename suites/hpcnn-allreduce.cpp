// hpcnn-allreduce: allreduce micro-benchmark (time, algorithm and bus bandwidth, checked results).
#include "suites/allreduce_suite.hpp"
#include "harness/main_wrapper.hpp"

int main(int argc, char** argv) {
  return hpcnn::suite_main(argc, argv, "hpcnn-allreduce", hpcnn::run_allreduce_suite);
}
