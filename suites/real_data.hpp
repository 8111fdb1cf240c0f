// What the suites that train on a real data set share (hpcnn-train --data, hpcnn-scale --data):
// the data options, the data set read once per run, the model point shaped by it, the pipeline
// settings and the record fields describing the data.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batch_loader.hpp"
#include "data/dataset.hpp"
#include "harness/checkpoint.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"
#include "results/record.hpp"
#include "results/result_file.hpp"
#include "suites/model_point.hpp"

namespace hpcnn {

// data, augment, no-shuffle, cache (described by `cache_help`), prefetch (default
// `prefetch_default`), test-batch, train-limit, test-limit.
std::vector<OptionSpec> real_data_options(const char* cache_help, const char* prefetch_default);

// Where each named data set was found (for --list).
void print_data_sets();

// The data set, read once per run (every point of a sweep shares it): --data, --train-limit,
// --test-limit; the normalization from the training images.
struct LoadedData {
  data::DataSet set;
  data::Normalization norm;
  double load_s = 0;
};
std::unique_ptr<LoadedData> load_real_data(const Options& o);

// model_point_without_data with the data set's name, sample shape (--image-size pads) and classes.
ModelPoint real_data_model_point(const PointSettings& s, const data::DataSet& set, Mode mode);

// The input pipeline of a point: the network's image size, caching, prefetch, seed, augmentation.
data::PipelineOptions real_data_pipeline(const ModelPoint& mp, bool cache, int prefetch, bool augment);

// data_dir, data_format, train_size, test_size, data_load_s.
void set_data_set_fields(Record& r, const LoadedData& data);

// A per-epoch array (dims {values}).
Array epoch_array(const char* name, const std::vector<double>& values);

// checkpoint-every, checkpoint-unit: training checkpoints of a real-data point.
std::vector<OptionSpec> checkpoint_options();

// A point's checkpoint, collectively over comm: rank 0 reads `path` (the output folder need not
// be shared) and every rank parses the bytes it broadcasts. nullopt when there is none; a damaged
// file is a RuntimeError, one of other settings (`settings`: the point's command line) or of
// another number of ranks a UsageError, each naming the file.
std::optional<Checkpoint> read_point_checkpoint(const std::string& path, const std::string& settings, MPI_Comm comm);

// FNV-1a 64 over the parameters' bytes, as 16 hex digits: equal digests, equal weights.
std::string params_digest(const std::vector<float>& params);

}  // namespace hpcnn
