#include "harness/model_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "config.h"
#include "engine/backend.hpp"
#include "engine/errors.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/op_cost.hpp"
#include "harness/progress.hpp"
#include "harness/provenance.hpp"
#include "harness/rank_series.hpp"
#include "harness/cpu_usage.hpp"
#include "harness/resources.hpp"
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
      {"precision", OptType::Choice, true, "fp32", "LIST",
       "arithmetic (GPU backends): fp32, tf32 (tensor-core TF32 in conv/gemm), bf16 (BF16 activations, FP32 master "
       "weights); CPU backends run fp32 only",
       "fp32|tf32|bf16"},
      {"cudnn-benchmark", OptType::Flag, false, "", "", "cuda: choose cuDNN algorithms by timing them (else heuristics)"},
      {"layout", OptType::Choice, false, "auto", "NAME",
       "cuda activation layout: auto (NHWC with tf32/bf16, NCHW with fp32), nchw, nhwc", "auto|nchw|nhwc"},
      {"fusion", OptType::Choice, true, "on", "LIST",
       "on: a ReLU runs inside the conv, batch norm, fully connected or add before it, and in inference a batch "
       "norm is folded into the conv before it, where the backend can (dnnl, cuda); off: every layer its own "
       "operator (the per-layer profile of E9)",
       "on|off"},
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
  const std::vector<OptionSpec> measure = measurement_options();
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), measure.begin(), measure.end());
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
  // The thread limit is shown so that a user (and tests/cli_bad_input.sh) can see what --threads allows.
  for (const BackendInfo& b : backends()) {
    std::string limit;
    if (b.max_threads.at_most > 0) limit.append(" [--threads at most ").append(std::to_string(b.max_threads.at_most)).append("]");
    std::printf("  %-16s %s%s\n", b.name.c_str(), b.description.c_str(), limit.c_str());
  }
  std::printf("datasets (synthetic shapes): %s\n", kDatasetChoices);
  std::printf("build: hpcnn %s, configured with: %s\n", PACKAGE_VERSION, HPCNN_CONFIGURE_OPTIONS);
}

void validate_model_names(const Options& o) {
  for (const std::string& m : o.values("model")) find_model(m);
  for (const std::string& b : o.values("backend")) {
    const BackendInfo* found = nullptr;
    std::string available;
    for (const BackendInfo& info : backends()) {
      if (info.name == b) found = &info;
      available.append(available.empty() ? "" : ", ").append(info.name);
    }
    if (!found) throw UsageError(std::string("--backend: unknown backend '") + b + "' (available: " + available + ")");
    // Every --threads x --backend pair, here rather than in the point: a count the library cannot
    // honour is the user's mistake (exit 2), not a failed measurement (issue 3).
    for (const std::string& t : o.values("threads"))
      if (t != "default") check_thread_limit(*found, std::stoi(t));
  }
  // GPU-only settings, before any work: every point of the sweep combines every backend with them.
  for (const std::string& b : o.values("backend")) {
    bool gpu = false;
    for (const BackendInfo& info : backends()) gpu = gpu || (info.name == b && info.gpu);
    if (gpu) continue;
    for (const std::string& p : o.values("precision"))
      if (p != "fp32")
        throw UsageError("--precision " + p + ": backend '" + b + "' computes in fp32 only (tf32 and bf16 need a GPU backend)");
    if (o.flag("cudnn-benchmark")) throw UsageError("--cudnn-benchmark: backend '" + b + "' is not a GPU backend");
    if (o.str("layout") != "auto") throw UsageError("--layout " + o.str("layout") + ": backend '" + b + "' is not a GPU backend");
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
  set_point_settings(mp, o, p);
  return mp;
}

void set_point_settings(ModelPoint& mp, const Options& o, const SweepPoint& p) {
  const std::string precision = p.str("precision");
  mp.settings.precision = precision == "bf16" ? Precision::Bf16 : precision == "tf32" ? Precision::Tf32 : Precision::Fp32;
  mp.settings.cudnn_benchmark = o.flag("cudnn-benchmark");
  mp.settings.layout = o.str("layout");
  mp.fuse_relu = p.str("fusion") == "on";
  mp.act = p.str("act");
}

void set_settings_fields(Record& r, const ModelPoint& mp) {
  r.set("precision", std::string(precision_name(mp.settings.precision)));
  r.set("cudnn_benchmark", std::int64_t{mp.settings.cudnn_benchmark ? 1 : 0});
  r.set("layout", mp.settings.layout);
  r.set("fusion", std::string(mp.fuse_relu ? "on" : "off"));
  r.set("act", mp.act);
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
  // A backend this build has but this machine cannot run (cuda without a GPU): the point is
  // skipped, with the reason, and the sweep goes on.
  for (const BackendInfo& info : backends())
    if (info.name == mp.backend && info.unavailable) {
      const std::string why = info.unavailable();
      if (!why.empty()) throw RuntimeError("skipped: backend '" + mp.backend + "' cannot run here: " + why);
    }
  std::unique_ptr<Backend> backend = make_backend(mp.backend);
  backend->configure(mp.settings);
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
  set_settings_fields(r, mp);
}

void set_optimizer_fields(Record& r, const Options& o, const SweepPoint& p) {
  r.set("optimizer", p.str("optimizer"));
  r.set("lr", p.real("lr"));  // as given, not rounded to float
  r.set("momentum", o.real("momentum"));
  r.set("weight_decay", o.real("weight-decay"));
}

void set_gpu_fields(Record& r, const Backend& backend, const GpuFigures& e, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int gpu = backend.is_gpu() ? 1 : 0, any = 0;
  MPI_Allreduce(&gpu, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return;
  const double mine[2] = {static_cast<double>(backend.peak_device_bytes()) / (1 << 20), e.used_mib};
  double most[2] = {0, 0};
  MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
  // Energy: every rank's own GPU; -1 from any rank means unknown for the job.
  const bool known = e.start_j >= 0 && e.end_j >= e.start_j;
  const double joules[2] = {known ? e.end_j - e.start_j : 0.0, known ? 0.0 : 1.0};
  double sum[2] = {0, 0};
  MPI_Reduce(joules, sum, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
  if (rank != 0) return;
  r.set("gpu_peak_mib", most[0]);
  r.set("gpu_used_mib", most[1]);
  if (sum[1] > 0 || e.seconds <= 0) return;
  r.set("gpu_energy_j", sum[0]);
  if (e.images > 0) r.set("joules_per_image", sum[0] / e.images);
  r.set("gpu_power_w", sum[0] / e.seconds);
}

std::vector<OptionSpec> measurement_options() {
  return {
      {"repeat", OptType::Int, false, "1", "N",
       "run each point N times (fresh network each time) and store the spread of images/s", {}, 1, 1000},
      {"profile", OptType::Choice, false, "none", "WHAT",
       "ops: after the timed run, one more pass that times every operator (the figures above stay unprofiled)",
       "none|ops"},
  };
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The stated tolerance of the phase check: phases must add up to the iteration time within 2%.
constexpr double kPhaseTolerance = 0.02;

// Times of one rank for one point: warm-up iterations, and each timed iteration split in phases.
// Iteration times are read from their own clock points, so the phase sum is a real check.
struct RankTimes {
  std::vector<double> iter, warmup, load, forward, backward, comm_wait, update, rss;
  double phase_gap_max = 0;  // max |iter - sum(phases)| / iter
  std::vector<UsageReport> cpu;  // one per unprofiled pass
  // GPU energy over the timed iterations of the unprofiled passes (joules; < 0: unknown).
  double energy_j = 0, energy_s = 0;
  double gpu_used_mib = 0;  // device memory in use at the end of the timed iterations, max over passes
  // --profile ops: the profiled pass.
  std::vector<double> profiled_iter;
  std::vector<std::string> op_kinds;
  std::vector<double> op_seconds, op_calls, op_flops, op_bytes;  // [kind], summed over the pass
};

// Page-locks the synthetic batches for the lifetime of a pass, so a GPU backend copies them at full
// bus speed (what a real input pipeline with pinned buffers does). No-op on CPU backends.
class PinnedBatches {
 public:
  PinnedBatches(Backend& backend, const SyntheticData& data, const ModelPoint& mp) : backend_(backend) {
    const std::size_t bytes = mp.sample.per_sample() * static_cast<std::size_t>(mp.batch) * sizeof(float);
    for (int k = 0; k < data.batches(); ++k) {
      void* p = const_cast<float*>(data.images(k));
      backend_.pin_host(p, bytes);
      pinned_.push_back(p);
    }
  }
  ~PinnedBatches() {
    for (void* p : pinned_) backend_.unpin_host(p);
  }
  PinnedBatches(const PinnedBatches&) = delete;
  PinnedBatches& operator=(const PinnedBatches&) = delete;

 private:
  Backend& backend_;
  std::vector<void*> pinned_;
};

// Everything one pass over a point needs on this rank.
struct PointRun {
  Mode mode;
  const Options& o;
  const SweepPoint& p;
  const ModelPoint& mp;
  Backend& backend;
  const Graph& graph;
  MPI_Comm comm;
};

// One pass: warm-up + timed iterations on a fresh network. Appends to `t` (profiled pass: only
// profiled_iter and the op_* sums). Collective: with several ranks every iteration starts with an
// all-reduce of "has any rank failed" (which also aligns the ranks, outside the timed region), so
// a failing rank stops every rank at the same iteration; errors are returned, never thrown.
std::string run_pass(const PointRun& run, bool profiled, long pass, long passes, RankTimes& t) {
  int rank = 0, size = 1;
  MPI_Comm_rank(run.comm, &rank);
  MPI_Comm_size(run.comm, &size);
  const bool train = run.mode == Mode::Train;
  const auto seed = static_cast<std::uint64_t>(run.o.integer("seed"));
  const int warmup = static_cast<int>(run.o.integer("warmup"));
  const int iters = static_cast<int>(run.o.integer("iters"));
  std::string error;
  std::unique_ptr<Network> net;
  std::unique_ptr<SyntheticData> data;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<PinnedBatches> pinned;
  try {
    NetworkOptions nopt;
    nopt.batch = run.mp.batch;
    nopt.mode = run.mode;
    nopt.seed = seed;
    nopt.profile_ops = profiled;
    nopt.fuse_relu = run.mp.fuse_relu;
    net = std::make_unique<Network>(run.backend, run.graph, nopt);
    // Each rank sees different data (as data-parallel training would), generated before timing.
    data = std::make_unique<SyntheticData>(run.mp.sample, run.mp.classes, run.mp.batch,
                                           seed + 7919ull * static_cast<std::uint64_t>(rank));
    pinned = std::make_unique<PinnedBatches>(run.backend, *data, run.mp);
    if (train)
      optimizer = std::make_unique<Optimizer>(run.backend, net->param_count(), optimizer_settings(run.o, run.p));
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::unique_ptr<UsageMonitor> usage;  // CPU and sampled memory over the timed iterations
  double update_s = 0;  // profiled pass: optimizer time, its own entry "weights_update"
  double energy_start = -1, timed_s = 0;  // GPU energy counter at the first timed iteration
  const long total = warmup + iters;
  for (int k = 0; k < total; ++k) {
    if (size > 1) {
      int mine = error.empty() ? 0 : 1, any = 0;
      MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, run.comm);
      if (any) break;
    } else if (!error.empty()) {
      break;
    }
    if (k == warmup) {
      if (profiled) net->reset_profile();
      update_s = 0;
      if (!profiled) {
        usage = std::make_unique<UsageMonitor>();
        energy_start = run.backend.device_energy_joules();
      }
    }
    try {
      const auto t0 = Clock::now();
      net->set_input(data->images(k), data->labels(k));
      run.backend.synchronize();
      const auto t1 = Clock::now();
      const float loss = net->forward();
      run.backend.synchronize();
      const auto t2 = Clock::now();
      auto t3 = t2, t4 = t2, t5 = t2;
      if (train) {
        net->backward();
        run.backend.synchronize();
        t3 = Clock::now();
        t4 = Clock::now();  // communication: none in a single-device suite
        optimizer->step(net->params(), net->grads());
        run.backend.synchronize();
        t5 = Clock::now();
      }
      // The reason starts with "diverged": agree_on_failure stores such a point as `diverged`.
      if (train && !std::isfinite(loss))
        throw RuntimeError(std::string("diverged: loss ")
                               .append(std::to_string(loss))
                               .append(" at iteration ")
                               .append(std::to_string(k + 1))
                               .append(" (warm-up included)"));
      const auto t_end = Clock::now();
      const double it = seconds_between(t0, t_end);
      if (rank == 0) progress().iteration(pass * total + k + 1, passes * total, run.mp.batch * double(size), it);
      if (k < warmup) {
        if (!profiled) t.warmup.push_back(it);
        continue;
      }
      if (profiled) {
        t.profiled_iter.push_back(it);
        update_s += seconds_between(t4, t5);
        continue;
      }
      const double phases[5] = {seconds_between(t0, t1), seconds_between(t1, t2), seconds_between(t2, t3),
                                seconds_between(t3, t4), seconds_between(t4, t5)};
      t.iter.push_back(it);
      timed_s += it;
      t.load.push_back(phases[0]);
      t.forward.push_back(phases[1]);
      t.backward.push_back(phases[2]);
      t.comm_wait.push_back(phases[3]);
      t.update.push_back(phases[4]);
      const double sum = phases[0] + phases[1] + phases[2] + phases[3] + phases[4];
      if (it > 0) t.phase_gap_max = std::max(t.phase_gap_max, std::fabs(it - sum) / it);
      t.rss.push_back(current_rss_mib());  // outside the timed region: RSS over time, per rank
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!error.empty()) return error;
  if (!profiled) {
    if (usage) t.cpu.push_back(usage->stop());
    const double energy_end = run.backend.device_energy_joules();
    t.gpu_used_mib = std::max(t.gpu_used_mib, static_cast<double>(run.backend.device_used_bytes()) / (1 << 20));
    if (energy_start < 0 || energy_end < energy_start || t.energy_j < 0) t.energy_j = -1;
    else t.energy_j += energy_end - energy_start;
    t.energy_s += timed_s;
    return {};
  }
  // Sum the profile by operator kind: forward kinds in forward order, then backward kinds in
  // backward order, then the optimizer; every rank builds the same list from the same graph.
  auto slot = [&t](const std::string& kind) {
    for (std::size_t i = 0; i < t.op_kinds.size(); ++i)
      if (t.op_kinds[i] == kind) return i;
    t.op_kinds.push_back(kind);
    t.op_seconds.push_back(0);
    t.op_calls.push_back(0);
    t.op_flops.push_back(0);
    t.op_bytes.push_back(0);
    return t.op_kinds.size() - 1;
  };
  std::vector<const OpProfile*> fwd, bwd;
  for (const OpProfile& op : net->profile()) (op.kind.size() > 9 && op.kind.ends_with("_backward") ? bwd : fwd).push_back(&op);
  std::reverse(bwd.begin(), bwd.end());
  for (const auto* list : {&fwd, &bwd})
    for (const OpProfile* op : *list) {
      const std::size_t i = slot(op->kind);
      const bool backward = list == &bwd;
      auto cost = [&](int node) {
        return backward ? op_backward_cost(run.graph, node, run.mp.batch) : op_forward_cost(run.graph, node, run.mp.batch);
      };
      OpCost c = cost(op->node);
      // An op with fused nodes (NetworkOptions::fuse_relu) also does their arithmetic; its bytes
      // stay the op's own (their traffic is what fusing saves).
      for (int f : op->fused) c.flops += cost(f).flops;
      t.op_seconds[i] += op->seconds;
      t.op_calls[i] += static_cast<double>(op->calls);
      t.op_flops[i] += c.flops * static_cast<double>(op->calls);
      t.op_bytes[i] += c.bytes * static_cast<double>(op->calls);
    }
  if (train) {
    const std::size_t i = slot("weights_update");
    const OpCost c = weights_update_cost(run.graph.param_count());
    t.op_seconds[i] += update_s;
    t.op_calls[i] += iters;
    t.op_flops[i] += c.flops * iters;
    t.op_bytes[i] += c.bytes * iters;
  }
  return {};
}

// Throughput of each repeat from the gathered [ranks][repeats * iters] iteration times.
std::vector<double> repeat_throughputs(const Array& iter, long repeats, long iters, double images) {
  const std::vector<double> slowest = max_over_ranks(iter);
  std::vector<double> out;
  for (long r = 0; r < repeats; ++r) {
    const std::vector<double> part(slowest.begin() + r * iters, slowest.begin() + (r + 1) * iters);
    const double median = compute_stats(part).median;
    out.push_back(median > 0 ? images / median : 0.0);
  }
  return out;
}

ResultPoint run_point(const ModelSuite& suite, const Options& o, const SweepPoint& p, MPI_Comm comm,
                      LibraryVersions& libraries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool train = suite.mode == Mode::Train;
  const ModelPoint mp = model_point(o, p);
  std::optional<Graph> built;  // a model that does not fit the image size fails this point only
  std::unique_ptr<Backend> backend;
  std::string error;
  try {
    built.emplace(build_point_graph(mp, p, train));
    backend = make_point_backend(mp, libraries);
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_on_failure(comm, error);
  const Graph& graph = *built;
  const PointRun run{suite.mode, o, p, mp, *backend, graph, comm};
  const long repeats = o.integer("repeat"), iters = o.integer("iters");
  const bool profiled = o.str("profile") == "ops";
  const long passes = repeats + (profiled ? 1 : 0);
  RankTimes t;
  for (long pass = 0; pass < passes; ++pass)  // agree after every pass, so all ranks stop together
    agree_on_failure(comm, run_pass(run, pass == repeats, pass, passes, t));

  ResultPoint out;
  auto add = [&](const char* name, const char* unit, const std::vector<double>& v) {
    out.arrays.push_back(gather_series(name, unit, v, comm));
    return out.arrays.size() - 1;
  };
  const std::size_t a_iter = add("iter_time_s", "s", t.iter);
  add("warmup_time_s", "s", t.warmup);
  const std::size_t a_load = add("load_time_s", "s", t.load);
  const std::size_t a_fwd = add("forward_time_s", "s", t.forward);
  const std::size_t a_bwd = add("backward_time_s", "s", t.backward);
  const std::size_t a_comm = add("comm_wait_time_s", "s", t.comm_wait);
  const std::size_t a_upd = add("update_time_s", "s", t.update);
  const std::size_t a_rss = add("rss_mib", "MiB", t.rss);
  add("peak_rss_mib", "MiB", {peak_rss_mib()});
  double gap = 0;
  MPI_Reduce(&t.phase_gap_max, &gap, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  std::size_t a_prof = 0;
  if (profiled) {
    a_prof = add("profile_iter_time_s", "s", t.profiled_iter);
    std::vector<double> per_iter(t.op_seconds.size());
    for (std::size_t i = 0; i < per_iter.size(); ++i) per_iter[i] = t.op_seconds[i] / static_cast<double>(iters);
    add("op_time_s", "s", per_iter);  // [ranks][kinds], seconds per iteration
  }
  {
    GpuFigures e;
    if (t.energy_j >= 0) e = {0.0, t.energy_j, t.energy_s, double(mp.batch) * double(iters) * double(repeats) * size};
    e.seconds = t.energy_s;
    e.used_mib = t.gpu_used_mib;
    set_gpu_fields(out.record, *backend, e, comm);  // collective
  }
  if (rank != 0) return out;  // only rank 0 holds the gathered series and writes the record

  Record& r = out.record;
  set_model_fields(r, suite.program, mp, *backend, graph, o, size);
  r.set("mode", std::string(train ? "train" : "infer"));
  if (train) set_optimizer_fields(r, o, p);
  const Stats it = slowest_rank_stats(out.arrays[a_iter]);
  const double images = mp.batch * static_cast<double>(size);
  const double img_per_s = it.median > 0 ? images / it.median : 0.0;
  const double flops = static_cast<double>(train ? graph.flops_training_per_sample() : graph.flops_forward_per_sample());
  r.set("img_per_s", img_per_s);
  set_iteration_fields(r, it);
  r.set("load_s", slowest_rank_stats(out.arrays[a_load]).median);
  r.set("forward_s", slowest_rank_stats(out.arrays[a_fwd]).median);
  r.set("backward_s", slowest_rank_stats(out.arrays[a_bwd]).median);
  r.set("update_s", slowest_rank_stats(out.arrays[a_upd]).median);
  r.set("flops_per_image", flops);
  r.set("gflops", img_per_s * flops * 1e-9);  // all ranks together
  double peak = 0;
  for (double v : out.arrays[a_rss + 1].data) peak = std::max(peak, v);
  r.set("peak_rss_mib", peak);
  r.set("status", std::string("ok"));
  // results and reporting (issue 4)
  const std::vector<double> reps = repeat_throughputs(out.arrays[a_iter], repeats, iters, images);
  const Stats rs = compute_stats(reps);
  const Interval ci = mean_confidence_95(reps);
  out.arrays.push_back({"repeat_img_per_s", "images/s", {reps.size()}, reps});
  r.set("repeats", std::int64_t{repeats});
  r.set("img_per_s_rep_min", rs.min);
  r.set("img_per_s_rep_max", rs.max);
  r.set("img_per_s_rep_std", rs.stddev);
  r.set("img_per_s_ci_low", ci.low);
  r.set("img_per_s_ci_high", ci.high);
  r.set("comm_wait_s", slowest_rank_stats(out.arrays[a_comm]).median);
  {
    // "other": what the slowest rank's iteration spent outside the phases.
    std::vector<double> other;
    const auto& d = out.arrays;
    for (std::size_t k = 0; k < d[a_iter].data.size(); ++k)
      other.push_back(d[a_iter].data[k] - d[a_load].data[k] - d[a_fwd].data[k] - d[a_bwd].data[k] -
                      d[a_comm].data[k] - d[a_upd].data[k]);
    r.set("other_s", compute_stats(other).median);
  }
  r.set("phase_gap_max", gap);
  r.set("phase_check", std::string(gap <= kPhaseTolerance ? "ok" : "failed"));
  if (!t.cpu.empty()) {  // rank 0's figures, averaged over the repeats
    const double n = static_cast<double>(t.cpu.size());
    double user = 0, sys = 0, iowait = 0, total = 0, mem_avg = 0, mem_max = 0;
    for (const UsageReport& u : t.cpu) {
      user += u.cpu.user_pct / n;
      sys += u.cpu.sys_pct / n;
      iowait += u.cpu.iowait_pct / n;
      total += u.cpu.total_pct / n;
      mem_avg += u.mem_avg_mib / n;
      mem_max = std::max(mem_max, u.mem_max_mib);
    }
    r.set("cpu_user_pct", user);
    r.set("cpu_sys_pct", sys);
    r.set("cpu_iowait_pct", iowait);
    r.set("cpu_total_pct", total);
    r.set("mem_avg_mib", mem_avg);
    r.set("mem_max_mib", mem_max);
  }
  r.set("profile", o.str("profile"));
  if (profiled) {
    const double prof_median = slowest_rank_stats(out.arrays[a_prof]).median;
    r.set("profile_iter_median_s", prof_median);
    r.set("profile_overhead", it.median > 0 ? prof_median / it.median - 1.0 : 0.0);
    std::string kinds;
    for (const std::string& k : t.op_kinds) kinds.append(kinds.empty() ? "" : ",").append(k);
    r.set("op_kinds", kinds);
    const std::size_t nk = t.op_kinds.size();
    std::vector<double> calls(nk), fl(nk), by(nk);
    for (std::size_t i = 0; i < nk; ++i) {
      calls[i] = t.op_calls[i] / static_cast<double>(iters);
      fl[i] = t.op_calls[i] > 0 ? t.op_flops[i] / t.op_calls[i] : 0.0;
      by[i] = t.op_calls[i] > 0 ? t.op_bytes[i] / t.op_calls[i] : 0.0;
    }
    out.arrays.push_back({"op_calls", "", {nk}, calls});
    out.arrays.push_back({"op_flops", "FLOP", {nk}, fl});
    out.arrays.push_back({"op_bytes", "B", {nk}, by});
  }
  return out;
}

}  // namespace

ResultPoint run_model_point(const ModelSuite& suite, const Options& o, const SweepPoint& p, MPI_Comm comm,
                            LibraryVersions& libraries) {
  return run_point(suite, o, p, comm, libraries);
}

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
