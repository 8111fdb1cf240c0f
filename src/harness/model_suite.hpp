// The shared harness of the single-device model suites (hpcnn-train, hpcnn-infer): option table,
// sweep over models x backends x datasets x batches x threads (x optimizer settings), the timed
// loop with phase times, statistics across ranks, and the result file. A suite's main() is one
// call to run_model_suite().
#pragma once

#include <string>
#include <vector>

#include "engine/op.hpp"
#include "harness/options.hpp"

namespace hpcnn {

struct ModelSuite {
  const char* program;  // "hpcnn-train"
  Mode mode;            // Train: forward + loss + backward + update; Infer: forward only
  const char* summary;  // one paragraph for --help
};

// The option table of a model suite (train adds optimizer settings).
std::vector<OptionSpec> model_suite_options(Mode mode);

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_model_suite(const ModelSuite& suite, int argc, char** argv);

}  // namespace hpcnn
