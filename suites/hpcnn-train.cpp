// hpcnn-train: training throughput on one device per rank (forward + loss + backward + update).
#include "harness/main_wrapper.hpp"
#include "harness/model_suite.hpp"

int main(int argc, char** argv) {
  const hpcnn::ModelSuite suite{
      "hpcnn-train", hpcnn::Mode::Train,
      "Training throughput (images/s) of CNN models on synthetic data, one device per MPI rank,\n"
      "with the time of every iteration split into load, forward, backward and update."};
  return hpcnn::suite_main(argc, argv, suite.program,
                           [&](int c, char** v) { return hpcnn::run_model_suite(suite, c, v); });
}
