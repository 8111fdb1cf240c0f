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
#include "harness/main_wrapper.hpp"
#include "harness/provenance.hpp"
#include "harness/stats.hpp"
#include "harness/sweep.hpp"
#include "harness/synthetic_data.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"

namespace hpcnn {

std::vector<OptionSpec> model_suite_options(Mode mode) {
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
  const std::vector<OptionSpec> common = {
      {"iters", OptType::Int, false, "100", "N", "timed iterations per point", {}, 1, 1e9},
      {"warmup", OptType::Int, false, "10", "N", "untimed warm-up iterations per point", {}, 0, 1e9},
      {"seed", OptType::Int, false, "1", "N", "seed of initialization and synthetic data", {}, 0, 9.0e18},
      {"output", OptType::String, false, "results", "DIR", "directory of the result file"},
      {"quiet", OptType::Flag, false, "", "", "print nothing but errors"},
      {"list", OptType::Flag, false, "", "", "list models, backends and build features, then exit"},
      {"version", OptType::Flag, false, "", "", "print the version and exit"},
      {"help", OptType::Flag, false, "", "", "print this help and exit"},
  };
  specs.insert(specs.end(), common.begin(), common.end());
  return specs;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void print_list() {
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

// Reject unknown model/backend names before any work, so a typo costs nothing and leaves no file.
void validate_names(const Options& o) {
  for (const std::string& m : o.values("model")) find_model(m);
  for (const std::string& b : o.values("backend")) {
    bool found = false;
    std::string available;
    for (const BackendInfo& info : backends()) {
      found = found || info.name == b;
      available += (available.empty() ? "" : ", ") + info.name;
    }
    if (!found) throw UsageError(std::string("--backend: unknown backend '") + b + "' (available: " + available + ")");
  }
}

// Times of one rank for one point, and the phase split of each timed iteration.
struct RankTimes {
  std::vector<double> iter, warmup, load, forward, backward, update;
};

struct PointSetup {
  std::string model;
  Shape sample;
  int classes = 10;
  int batch = 1;
};

PointSetup setup_point(const SweepPoint& p, const Options& o) {
  PointSetup s;
  s.model = p.str("model");
  const DatasetShape ds = dataset_shape(p.str("dataset"));
  const ModelInfo& info = find_model(s.model);
  int size = ds.sample.h;
  if (o.has("image-size")) size = static_cast<int>(o.integer("image-size"));
  else if (info.native_image_size) size = info.native_image_size;  // e.g. alexnet: resize to 64x64
  s.sample = {1, ds.sample.c, size, size};
  s.classes = ds.classes;
  s.batch = static_cast<int>(p.integer("batch"));
  return s;
}

std::string point_reproducer(const ModelSuite& suite, const Options& o, const SweepPoint& p) {
  std::string cmd = suite.program;
  for (const auto& [name, value] : o.effective()) {
    if (name == "output" || name == "quiet" || name == "list" || name == "version" || name == "help") continue;
    std::string v = value;
    for (const auto& [pn, pv] : p.items())
      if (pn == name) v = pv;
    cmd += std::string(" --") + name + " " + shell_quote(v);
  }
  return cmd;
}

// Runs one sweep point on this rank and returns its times. Collective only through barriers.
RankTimes time_point(const ModelSuite& suite, const Options& o, const SweepPoint& p,
                     const PointSetup& s, Backend& backend, const Graph& graph, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool train = suite.mode == Mode::Train;
  const auto seed = static_cast<std::uint64_t>(o.integer("seed"));
  NetworkOptions nopt;
  nopt.batch = s.batch;
  nopt.mode = suite.mode;
  nopt.seed = seed;
  Network net(backend, graph, nopt);
  // Each rank sees different data (as data-parallel training would), generated before timing.
  SyntheticData data(s.sample, s.classes, s.batch, seed + 7919ull * static_cast<std::uint64_t>(rank));

  std::shared_ptr<float> state1, state2;
  SgdParams sgd;
  AdamParams adam;
  bool use_adam = false;
  if (train) {
    use_adam = p.str("optimizer") == "adam";
    sgd.lr = adam.lr = static_cast<float>(p.real("lr"));
    sgd.momentum = static_cast<float>(o.real("momentum"));
    sgd.weight_decay = adam.weight_decay = static_cast<float>(o.real("weight-decay"));
    state1 = backend.alloc_floats(net.param_count());
    if (use_adam) state2 = backend.alloc_floats(net.param_count());
  }

  const int warmup = static_cast<int>(o.integer("warmup"));
  const int iters = static_cast<int>(o.integer("iters"));
  RankTimes t;
  std::int64_t step = 0;
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
      ++step;
      if (use_adam) backend.adam_step(net.params(), net.grads(), state1.get(), state2.get(), net.param_count(), adam, step);
      else backend.sgd_step(net.params(), net.grads(), state1.get(), net.param_count(), sgd);
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

// Gathers one per-rank series to rank 0 as a [ranks][n] array (every rank has the same n).
Array gather_series(const std::string& name, const std::vector<double>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Array a;
  a.name = name;
  a.unit.assign(1, 's');
  a.dims = {static_cast<std::size_t>(size), mine.size()};
  if (rank == 0) a.data.resize(static_cast<std::size_t>(size) * mine.size());
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, a.data.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, comm);
  return a;
}

// Per iteration, the slowest rank decides (a synchronous job waits for it).
std::vector<double> max_over_ranks(const Array& a) {
  std::vector<double> out(a.dims[1], 0.0);
  for (std::size_t r = 0; r < a.dims[0]; ++r)
    for (std::size_t i = 0; i < a.dims[1]; ++i) out[i] = std::max(out[i], a.data[r * a.dims[1] + i]);
  return out;
}

ResultPoint make_point(const ModelSuite& suite, const Options& o, const SweepPoint& p,
                       const PointSetup& s, Backend& backend, const Graph& graph,
                       const RankTimes& t, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  ResultPoint out;
  out.arrays.push_back(gather_series("iter_time_s", t.iter, comm));
  out.arrays.push_back(gather_series("warmup_time_s", t.warmup, comm));
  out.arrays.push_back(gather_series("load_time_s", t.load, comm));
  out.arrays.push_back(gather_series("forward_time_s", t.forward, comm));
  out.arrays.push_back(gather_series("backward_time_s", t.backward, comm));
  out.arrays.push_back(gather_series("update_time_s", t.update, comm));
  double rss = peak_rss_mib(), max_rss = 0;
  MPI_Reduce(&rss, &max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return out;  // only rank 0 holds the gathered series and writes the record

  Record& r = out.record;
  const bool train = suite.mode == Mode::Train;
  r.set("suite", std::string(suite.program));
  r.set("model", s.model);
  r.set("backend", p.str("backend"));
  r.set("dataset", p.str("dataset"));
  r.set("mode", std::string(train ? "train" : "infer"));
  r.set("batch", std::int64_t{s.batch});
  r.set("threads", std::int64_t{backend.threads()});
  r.set("ranks", std::int64_t{size});
  r.set("image_size", std::int64_t{s.sample.h});
  r.set("classes", std::int64_t{s.classes});
  r.set("params", static_cast<std::int64_t>(graph.param_count()));
  r.set("iters", o.integer("iters"));
  r.set("warmup", o.integer("warmup"));
  r.set("seed", o.integer("seed"));
  const auto slowest = [](const Array& a) { return compute_stats(max_over_ranks(a)); };
  const Stats it = slowest(out.arrays[0]);
  const double img_per_s = it.median > 0 ? s.batch * static_cast<double>(size) / it.median : 0.0;
  const double flops = static_cast<double>(train ? graph.flops_training_per_sample() : graph.flops_forward_per_sample());
  r.set("img_per_s", img_per_s);
  r.set("iter_median_s", it.median);
  r.set("iter_mean_s", it.mean);
  r.set("iter_std_s", it.stddev);
  r.set("iter_min_s", it.min);
  r.set("iter_max_s", it.max);
  r.set("iter_p5_s", it.p5);
  r.set("iter_p95_s", it.p95);
  r.set("load_s", slowest(out.arrays[2]).median);
  r.set("forward_s", slowest(out.arrays[3]).median);
  r.set("backward_s", slowest(out.arrays[4]).median);
  r.set("update_s", slowest(out.arrays[5]).median);
  r.set("flops_per_image", flops);
  r.set("gflops", img_per_s * flops * 1e-9);  // all ranks together
  r.set("peak_rss_mib", max_rss);
  r.set("status", std::string("ok"));
  r.set("reproducer", point_reproducer(suite, o, p));
  return out;
}

// The live table a suite prints as points finish; formats and units come from the field table.
const TextTableStream& live_table() {
  static const TextTableStream table({"model", "backend", "dataset", "batch", "threads", "ranks", "mode",
                                      "img_per_s", "iter_median_s", "iter_p95_s", "gflops"});
  return table;
}

}  // namespace

int run_model_suite(const ModelSuite& suite, int argc, char** argv) {
  const std::string start = utc_now_iso8601();
  const std::vector<OptionSpec> specs = model_suite_options(suite.mode);
  const Options o = parse_options(specs, argc, argv);
  const bool root = is_root_rank();
  if (o.flag("help")) {
    if (root) std::printf("%s", help_text(suite.program, suite.summary, specs).c_str());
    return 0;
  }
  if (o.flag("version")) {
    if (root) std::printf("%s (hpcnn) %s\n", suite.program, PACKAGE_VERSION);
    return 0;
  }
  if (o.flag("list")) {
    if (root) print_list();
    return 0;
  }
  validate_names(o);
  const bool quiet = o.flag("quiet");
  MPI_Comm comm = MPI_COMM_WORLD;

  // The result file is opened first so an unwritable directory fails before any work.
  std::unique_ptr<ResultWriter> writer;
  int opened = 1;
  std::string open_error;
  if (root) {
    try {
      writer = std::make_unique<ResultWriter>(o.str("output"), suite.program);
    } catch (const std::exception& e) {
      opened = 0;
      open_error = e.what();
    }
  }
  MPI_Bcast(&opened, 1, MPI_INT, 0, comm);
  if (!opened) {
    if (root) std::fprintf(stderr, "%s: error: %s\n", suite.program, open_error.c_str());
    return 1;
  }

  const std::vector<SweepPoint> points = sweep_points(o, specs);
  LibraryVersions libraries;
  if (root && !quiet) std::printf("%s", live_table().header().c_str());
  for (const SweepPoint& p : points) {
    const PointSetup s = setup_point(p, o);
    ModelConfig mc;
    mc.input = s.sample;
    mc.classes = s.classes;
    mc.act = p.str("act") == "tanh" ? Activation::Tanh : Activation::Relu;
    mc.loss = suite.mode == Mode::Train;
    const Graph graph = build_model(s.model, mc);
    std::unique_ptr<Backend> backend = make_backend(p.str("backend"));
    backend->set_threads(static_cast<int>(p.integer("threads")));
    for (const auto& lib : backend->versions()) {
      bool seen = false;
      for (const auto& have : libraries) seen = seen || have.first == lib.first;
      if (!seen) libraries.push_back(lib);
    }
    const RankTimes times = time_point(suite, o, p, s, *backend, graph, comm);
    ResultPoint point = make_point(suite, o, p, s, *backend, graph, times, comm);
    if (root) {
      writer->add_point(point);
      if (!quiet) {
        std::printf("%s", live_table().row(point.record).c_str());
        std::fflush(stdout);
      }
    }
  }
  const Provenance prov = collect_provenance(suite.program, o, comm, libraries, start);
  if (root) {
    const std::string path = writer->commit(prov);
    if (!quiet) std::printf("results: %s\n", path.c_str());
  }
  return 0;
}

}  // namespace hpcnn
