#include "harness/model_suite.hpp"

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "config.h"
#include "engine/backend.hpp"
#include "engine/errors.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/provenance.hpp"
#include "harness/rank_series.hpp"
#include "harness/suite_runner.hpp"
#include "harness/synthetic_data.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

std::vector<OptionSpec> model_options(Mode mode) {
  std::vector<OptionSpec> specs = {
      {"model", OptType::String, true, "lenet5", "LIST", "models (see --list)"},
      {"backend", OptType::String, true, "dnnl", "LIST", "compute backends (see --list)"},
      {"dataset", OptType::Choice, true, "cifar10", "LIST", "synthetic data of this data set's shape",
       kDatasetChoices},
      {"batch", OptType::Int, true, "64", "LIST", "images per iteration and rank", {}, 1, 1 << 20},
      {"threads", OptType::Threads, true, "default", "LIST",
       "threads of the compute library; 'default' leaves the library's choice", {}, 1, 4096},
      {"image-size", OptType::Int, false, "", "N",
       "input height and width (default: the data set's, or the model's native size)", {}, 1, 4096},
      {"act", OptType::Choice, true, "relu", "LIST", "activation of lenet5", "relu|tanh"},
  };
  if (mode == Mode::Train) {
    specs.push_back({"optimizer", OptType::Choice, true, "sgd", "LIST", "optimizer", "sgd|adam"});
    specs.push_back({"lr", OptType::Float, true, "0.01", "LIST", "learning rate", {}, 0, 1e6});
    specs.push_back({"momentum", OptType::Float, false, "0.9", "X", "SGD momentum", {}, 0, 1});
    specs.push_back({"weight-decay", OptType::Float, false, "0", "X", "L2 weight decay", {}, 0, 1e6});
  }
  return specs;
}

std::vector<OptionSpec> timing_options() {
  return {
      {"iters", OptType::Int, false, "100", "N", "timed iterations per point", {}, 1, 1e9},
      {"warmup", OptType::Int, false, "10", "N", "untimed warm-up iterations per point", {}, 0, 1e9},
      {"seed", OptType::Int, false, "1", "N", "seed of initialization and synthetic data", {}, 0, 9.0e18},
  };
}

std::vector<OptionSpec> model_suite_options(Mode mode) {
  std::vector<OptionSpec> specs = model_options(mode);
  const std::vector<OptionSpec> timing = timing_options(), output = output_options();
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

void print_model_list() {
  std::printf("models (parameters for 3x32x32 input, or the native size, and 10 classes):\n");
  for (const ModelInfo& m : models()) {
    ModelConfig c;
    const int size = m.native_image_size ? m.native_image_size : 32;
    c.input = {1, 3, size, size};
    const Graph g = build_model(m.name, c);
    std::printf("  %-16s %12zu  %s\n", m.name.c_str(), g.param_count(), m.description.c_str());
  }
  std::printf("backends:\n");
  for (const BackendInfo& b : backends()) std::printf("  %-16s %s\n", b.name.c_str(), b.description.c_str());
  std::printf("datasets (synthetic shapes): %s\n", kDatasetChoices);
  std::printf("build: hpcnn %s, configured with: %s\n", PACKAGE_VERSION, HPCNN_CONFIGURE_OPTIONS);
}

void validate_model_names(const Options& o) {
  for (const std::string& m : o.values("model")) find_model(m);
  for (const std::string& b : o.values("backend")) {
    bool found = false;
    std::string available;
    for (const BackendInfo& info : backends()) {
      found = found || info.name == b;
      available.append(available.empty() ? "" : ", ").append(info.name);
    }
    if (!found) throw UsageError(std::string("--backend: unknown backend '") + b + "' (available: " + available + ")");
  }
}

ModelPoint model_point(const Options& o, const SweepPoint& p) {
  ModelPoint mp;
  mp.model = p.str("model");
  mp.backend = p.str("backend");
  mp.dataset = p.str("dataset");
  const DatasetShape ds = dataset_shape(mp.dataset);
  const ModelInfo& info = find_model(mp.model);
  int size = ds.sample.h;
  if (o.has("image-size")) size = static_cast<int>(o.integer("image-size"));
  else if (info.native_image_size) size = info.native_image_size;  // alexnet: resized to 64x64
  mp.sample = {1, ds.sample.c, size, size};
  mp.classes = ds.classes;
  mp.batch = static_cast<int>(p.integer("batch"));
  mp.threads = static_cast<int>(p.integer("threads"));
  return mp;
}

Graph build_point_graph(const ModelPoint& mp, const SweepPoint& p, bool with_loss) {
  ModelConfig mc;
  mc.input = mp.sample;
  mc.classes = mp.classes;
  mc.act = p.str("act") == "tanh" ? Activation::Tanh : Activation::Relu;
  mc.loss = with_loss;
  return build_model(mp.model, mc);
}

std::unique_ptr<Backend> make_point_backend(const ModelPoint& mp, LibraryVersions& libraries) {
  std::unique_ptr<Backend> backend = make_backend(mp.backend);
  backend->set_threads(mp.threads);
  for (const auto& lib : backend->versions()) {
    bool seen = false;
    for (const auto& have : libraries) seen = seen || have.first == lib.first;
    if (!seen) libraries.push_back(lib);
  }
  return backend;
}

OptimizerSettings optimizer_settings(const Options& o, const SweepPoint& p) {
  OptimizerSettings s;
  s.kind = p.str("optimizer");
  s.lr = static_cast<float>(p.real("lr"));
  s.momentum = static_cast<float>(o.real("momentum"));
  s.weight_decay = static_cast<float>(o.real("weight-decay"));
  return s;
}

void set_model_fields(Record& r, const char* suite, const ModelPoint& mp, const Backend& backend,
                      const Graph& graph, const Options& o, int ranks) {
  r.set("suite", std::string(suite));
  r.set("model", mp.model);
  r.set("backend", mp.backend);
  r.set("dataset", mp.dataset);
  r.set("batch", std::int64_t{mp.batch});
  r.set("threads", std::int64_t{backend.threads()});
  r.set("ranks", std::int64_t{ranks});
  r.set("image_size", std::int64_t{mp.sample.h});
  r.set("classes", std::int64_t{mp.classes});
  r.set("params", static_cast<std::int64_t>(graph.param_count()));
  r.set("iters", o.integer("iters"));
  r.set("warmup", o.integer("warmup"));
  r.set("seed", o.integer("seed"));
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Times of one rank for one point: warm-up iterations, and each timed iteration split in phases.
struct RankTimes {
  std::vector<double> iter, warmup, load, forward, backward, update;
};

// Runs one sweep point on this rank. Collective only through barriers.
RankTimes time_point(Mode mode, const Options& o, const SweepPoint& p, const ModelPoint& mp,
                     Backend& backend, const Graph& graph, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool train = mode == Mode::Train;
  const auto seed = static_cast<std::uint64_t>(o.integer("seed"));
  NetworkOptions nopt;
  nopt.batch = mp.batch;
  nopt.mode = mode;
  nopt.seed = seed;
  Network net(backend, graph, nopt);
  // Each rank sees different data (as data-parallel training would), generated before timing.
  SyntheticData data(mp.sample, mp.classes, mp.batch, seed + 7919ull * static_cast<std::uint64_t>(rank));
  std::unique_ptr<Optimizer> optimizer;
  if (train) optimizer = std::make_unique<Optimizer>(backend, net.param_count(), optimizer_settings(o, p));

  const int warmup = static_cast<int>(o.integer("warmup"));
  const int iters = static_cast<int>(o.integer("iters"));
  RankTimes t;
  for (int k = 0; k < warmup + iters; ++k) {
    if (size > 1) MPI_Barrier(comm);  // align iterations across ranks, outside the timed region
    const auto t0 = Clock::now();
    net.set_input(data.images(k), data.labels(k));
    backend.synchronize();
    const auto t1 = Clock::now();
    const float loss = net.forward();
    backend.synchronize();
    const auto t2 = Clock::now();
    auto t3 = t2, t4 = t2;
    if (train) {
      net.backward();
      backend.synchronize();
      t3 = Clock::now();
      optimizer->step(net.params(), net.grads());
      backend.synchronize();
      t4 = Clock::now();
      if (!std::isfinite(loss)) throw RuntimeError("training diverged (loss " + std::to_string(loss) + ")");
    }
    if (k < warmup) {
      t.warmup.push_back(seconds_between(t0, t4));
      continue;
    }
    t.iter.push_back(seconds_between(t0, t4));
    t.load.push_back(seconds_between(t0, t1));
    t.forward.push_back(seconds_between(t1, t2));
    t.backward.push_back(seconds_between(t2, t3));
    t.update.push_back(seconds_between(t3, t4));
  }
  return t;
}

ResultPoint run_point(const ModelSuite& suite, const Options& o, const SweepPoint& p, MPI_Comm comm,
                      LibraryVersions& libraries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool train = suite.mode == Mode::Train;
  const ModelPoint mp = model_point(o, p);
  const Graph graph = build_point_graph(mp, p, train);
  std::unique_ptr<Backend> backend = make_point_backend(mp, libraries);
  const RankTimes t = time_point(suite.mode, o, p, mp, *backend, graph, comm);

  ResultPoint out;
  out.arrays.push_back(gather_series("iter_time_s", "s", t.iter, comm));
  out.arrays.push_back(gather_series("warmup_time_s", "s", t.warmup, comm));
  out.arrays.push_back(gather_series("load_time_s", "s", t.load, comm));
  out.arrays.push_back(gather_series("forward_time_s", "s", t.forward, comm));
  out.arrays.push_back(gather_series("backward_time_s", "s", t.backward, comm));
  out.arrays.push_back(gather_series("update_time_s", "s", t.update, comm));
  double rss = peak_rss_mib(), max_rss = 0;
  MPI_Reduce(&rss, &max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank != 0) return out;  // only rank 0 holds the gathered series and writes the record

  Record& r = out.record;
  set_model_fields(r, suite.program, mp, *backend, graph, o, size);
  r.set("mode", std::string(train ? "train" : "infer"));
  const Stats it = slowest_rank_stats(out.arrays[0]);
  const double img_per_s = it.median > 0 ? mp.batch * static_cast<double>(size) / it.median : 0.0;
  const double flops = static_cast<double>(train ? graph.flops_training_per_sample() : graph.flops_forward_per_sample());
  r.set("img_per_s", img_per_s);
  r.set("iter_median_s", it.median);
  r.set("iter_mean_s", it.mean);
  r.set("iter_std_s", it.stddev);
  r.set("iter_min_s", it.min);
  r.set("iter_max_s", it.max);
  r.set("iter_p5_s", it.p5);
  r.set("iter_p95_s", it.p95);
  r.set("load_s", slowest_rank_stats(out.arrays[2]).median);
  r.set("forward_s", slowest_rank_stats(out.arrays[3]).median);
  r.set("backward_s", slowest_rank_stats(out.arrays[4]).median);
  r.set("update_s", slowest_rank_stats(out.arrays[5]).median);
  r.set("flops_per_image", flops);
  r.set("gflops", img_per_s * flops * 1e-9);  // all ranks together
  r.set("peak_rss_mib", max_rss);
  r.set("status", std::string("ok"));
  return out;
}

}  // namespace

int run_model_suite(const ModelSuite& suite, int argc, char** argv) {
  SuiteDef def;
  def.program = suite.program;
  def.summary = suite.summary;
  def.options = model_suite_options(suite.mode);
  def.live_columns = {"model", "backend", "dataset", "batch", "threads", "ranks", "mode",
                      "img_per_s", "iter_median_s", "iter_p95_s", "gflops"};
  def.print_list = print_model_list;
  def.validate = validate_model_names;
  def.run_point = [&suite](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs) {
    return run_point(suite, o, p, comm, libs);
  };
  return run_suite(def, argc, argv);
}

}  // namespace hpcnn
