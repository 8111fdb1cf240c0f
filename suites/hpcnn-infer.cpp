// hpcnn-infer: forward-only (inference) throughput on one device per rank.
#include "harness/main_wrapper.hpp"
#include "suites/model_suite.hpp"

int main(int argc, char** argv) {
  const hpcnn::ModelSuite suite{
      "hpcnn-infer", hpcnn::Mode::Infer,
      "Inference throughput (images/s) of CNN models on synthetic data, forward only, one device\n"
      "per MPI rank, against batch size, threads and backend."};
  return hpcnn::suite_main(argc, argv, suite.program,
                           [&](int c, char** v) { return hpcnn::run_model_suite(suite, c, v); });
}
