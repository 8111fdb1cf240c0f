// hpcnn-simulate: data-parallel training of a measured node simulated on any network (SimGrid SMPI).
#include "harness/main_wrapper.hpp"
#include "suites/simulate_suite.hpp"

int main(int argc, char** argv) {
  return hpcnn::suite_main(argc, argv, "hpcnn-simulate", hpcnn::run_simulate_suite);
}
