// The model suites hpcnn-train and hpcnn-infer: throughput of a model on synthetic data, every
// iteration split in phases, repeats, and an optional per-operator profile.
#pragma once

#include <mpi.h>

#include <vector>

#include "engine/op.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"
#include "results/result_file.hpp"
#include "suites/model_point.hpp"

namespace hpcnn {

struct ModelSuite {
  const char* program;  // "hpcnn-train"
  Mode mode;            // Train: forward + loss + backward + update; Infer: forward only
  const char* summary;  // one paragraph for --help
};

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_model_suite(const ModelSuite& suite, int argc, char** argv);

// The whole table of hpcnn-train / hpcnn-infer.
std::vector<OptionSpec> model_suite_options(Mode mode);

// One point of hpcnn-train / hpcnn-infer run in-process, as run_model_suite runs it (hpcnn-blas
// --sweep model wraps it with its own CPU and memory sampling). `options` must hold
// model_options(mode), timing_options() and measurement_options(). Collective over comm; the
// record is complete on rank 0 only.
ResultPoint run_model_point(const ModelSuite& suite, const Options& options, const SweepPoint& point,
                            MPI_Comm comm, LibraryVersions& libraries);

}  // namespace hpcnn
