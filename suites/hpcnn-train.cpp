// hpcnn-train: training throughput on one device per rank (forward + loss + backward + update).
// With --data, --preset or --epochs it trains on a real data set instead (suites/accuracy_suite.hpp).
#include "suites/accuracy_suite.hpp"
#include "harness/main_wrapper.hpp"
#include "suites/model_suite.hpp"

int main(int argc, char** argv) {
  const hpcnn::ModelSuite suite{
      "hpcnn-train", hpcnn::Mode::Train,
      "Training throughput (images/s) of CNN models on synthetic data, one device per MPI rank,\n"
      "with the time of every iteration split into load, forward, backward and update.\n"
      "Real data and accuracy per epoch: hpcnn-train --data DIR|NAME ... (hpcnn-train --data fashion-mnist --help)."};
  if (hpcnn::wants_accuracy_suite(argc, argv))
    return hpcnn::suite_main(argc, argv, suite.program,
                             [&](int c, char** v) { return hpcnn::run_accuracy_suite(suite.program, c, v); });
  return hpcnn::suite_main(argc, argv, suite.program,
                           [&](int c, char** v) { return hpcnn::run_model_suite(suite, c, v); });
}
