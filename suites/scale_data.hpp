// hpcnn-scale --data: data-parallel training on a real data set over an exchange scheme (experiment
// E8 of docs/EXPERIMENTS.md: allreduce against parameter server on real data files). Workers are
// world ranks 0..W-1 (parameter servers, the last ranks, hold no data). Each epoch every worker
// takes floor(n / (B x W)) full batches (data/sampler.hpp's worker_batches): its disjoint shard of
// one shared permutation (--sharding shard), or 1/W of its own permutation of the whole set
// (--sharding whole, ref. [4]'s asynchronous TensorFlow).
// Samples come from the in-memory decoded set when --cache is given, else every batch is read
// from the files (data/sample_files.hpp) and decoded again, so load_s is real I/O + decode.
// After every epoch the whole test set is evaluated in inference mode with worker 0's weights,
// outside the epoch's time; --target-accuracy gives the time to accuracy (MLPerf's measure).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "harness/options.hpp"
#include "harness/provenance.hpp"
#include "harness/sweep.hpp"
#include "results/result_file.hpp"
#include "suites/real_data.hpp"

namespace hpcnn {

// epochs, sharding, target-accuracy and the real-data options (--data has no default here: it
// switches hpcnn-scale to real data).
std::vector<OptionSpec> scale_data_options();
bool scale_wants_data(const Options& o);

// One point. Collective over comm (all ranks, servers included). checkpoint: the point's
// checkpoint file (written with --checkpoint-every, continued from when it exists); reproducer:
// the point's command line, the settings a checkpoint belongs to.
ResultPoint run_scale_data_point(const PointSettings& s, MPI_Comm comm, LibraryVersions& libraries,
                                 const LoadedData& data, const std::string& checkpoint, const std::string& reproducer);

}  // namespace hpcnn
