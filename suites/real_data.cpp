#include "suites/real_data.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "base/errors.hpp"
#include "data/page_cache.hpp"
#include "harness/resources.hpp"

namespace hpcnn {

std::vector<OptionSpec> real_data_options(const char* cache_help, const char* prefetch_default) {
  return {
      {"data", OptType::String, false, "fashion-mnist", "DIR|NAME",
       "real data set: a directory of MNIST-style idx files (gzipped or not) or CIFAR-10/100 binary files, or a name "
       "(mnist|fashion-mnist|cifar10|cifar100) looked up in $HPCNN_DATA/NAME and /usr/share/datasets/NAME"},
      {"augment", OptType::Flag, false, "", "", "random crop (padding 4) and horizontal flip of training images (CIFAR)"},
      {"no-shuffle", OptType::Flag, false, "", "", "keep the files' order instead of reshuffling every epoch"},
      {"cache", OptType::Flag, false, "", "", cache_help},
      {"prefetch", OptType::Int, false, prefetch_default, "N",
       "batches the background loader decodes ahead (0: decode in the training loop)", {}, 0, 64},
      {"test-batch", OptType::Int, false, "", "N", "images per evaluation batch (default: --batch)", {}, 1, 1 << 20},
      {"train-limit", OptType::Int, false, "", "N", "use only the first N training images", {}, 1, 1e12},
      {"test-limit", OptType::Int, false, "", "N", "evaluate only the first N test images", {}, 1, 1e12},
  };
}

void print_data_sets() {
  std::printf("real data sets (--data NAME, or --data DIR):\n");
  for (const char* name : {"mnist", "fashion-mnist", "cifar10", "cifar100"}) {
    std::string where;
    try {
      where = data::locate_dataset(name).dir;
    } catch (const std::exception&) {
      where = "not found (" + data::dataset_search_dirs(name).front() + ", ...)";
    }
    std::printf("  %-16s %s\n", name, where.c_str());
  }
}

std::unique_ptr<LoadedData> load_real_data(const Options& o) {
  auto d = std::make_unique<LoadedData>();
  const auto t0 = std::chrono::steady_clock::now();
  // What this node has left is all the decoded sets may take: a set that cannot fit is one
  // line naming the file, not a process the kernel kills later.
  d->set = data::load_dataset(o.str("data"), static_cast<std::size_t>(available_memory_bytes()));
  if (o.has("train-limit")) d->set.train.truncate(static_cast<std::size_t>(o.integer("train-limit")));
  if (o.has("test-limit")) d->set.test.truncate(static_cast<std::size_t>(o.integer("test-limit")));
  d->norm = data::channel_stats(d->set.train);
  d->load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return d;
}

ModelPoint real_data_model_point(const PointSettings& s, const data::DataSet& set, Mode mode) {
  ModelPoint mp = model_point_without_data(s, mode);
  mp.dataset = set.name;
  const int image_size = s.has("image-size") ? static_cast<int>(s.integer("image-size")) : set.train.height;
  mp.sample = {1, set.train.channels, image_size, image_size};
  mp.classes = set.train.classes;
  return mp;
}

data::PipelineOptions real_data_pipeline(const ModelPoint& mp, bool cache, int prefetch, bool augment) {
  data::PipelineOptions pipe;
  pipe.out_size = mp.sample.h;
  pipe.cache = cache;
  pipe.prefetch = prefetch;
  pipe.seed = mp.seed;
  pipe.augment = augment;
  return pipe;
}

void set_data_set_fields(Record& r, const LoadedData& data) {
  r.set("data_dir", data.set.dir);
  r.set("data_fs", data::file_system_type(data.set.dir));
  r.set("data_format", data.set.format);
  r.set("train_size", static_cast<std::int64_t>(data.set.train.size()));
  r.set("test_size", static_cast<std::int64_t>(data.set.test.size()));
  r.set("data_load_s", data.load_s);
}

Array epoch_array(const char* name, const std::vector<double>& values) { return make_array(name, {values.size()}, values); }

std::vector<OptionSpec> checkpoint_options() {
  return {
      {"checkpoint-every", OptType::Int, false, "0", "N",
       "save a training checkpoint every N epochs (or optimizer steps: --checkpoint-unit) into the run's journal, "
       "and at a stop signal (0: none); --run-id ID --resume continues an interrupted point from its last "
       "checkpoint, bit-identically on the CPU backends", {}, 0, 1e12},
      {"checkpoint-unit", OptType::Choice, false, "epoch", "UNIT", "what --checkpoint-every counts", "epoch|step"},
  };
}

std::optional<Checkpoint> read_point_checkpoint(const std::string& path, const std::string& settings, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string bytes;
  long long length = 0;  // -1: too large for one broadcast (every rank throws the same error)
  if (rank == 0 && std::filesystem::exists(path)) {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    length = bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ? -1 : static_cast<long long>(bytes.size());
  }
  MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm);
  if (length < 0) throw RuntimeError(path + ": more bytes than one broadcast carries");
  if (length == 0) return std::nullopt;
  bytes.resize(static_cast<std::size_t>(length));
  MPI_Bcast(bytes.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
  Checkpoint c = Checkpoint::parse(bytes, path, settings);
  if (c.integer("ranks") != size)
    throw UsageError(path + ": a checkpoint of " + std::to_string(c.integer("ranks")) + " ranks, not " +
                     std::to_string(size));
  return c;
}

std::string params_digest(const std::vector<float>& params) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(params.data());
  for (std::size_t i = 0; i < params.size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace hpcnn
