#include "suites/model_point.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "config.h"
#include "base/errors.hpp"
#include "engine/calibration.hpp"
#include "engine/network.hpp"
#include "engine/op_kinds.hpp"
#include "harness/point_error.hpp"
#include "harness/suite_runner.hpp"
#include "harness/resources.hpp"
#include "harness/synthetic_data.hpp"
#include "kernels/registry.hpp"

namespace hpcnn {

// --precision's help: string literals, so that the infer variant is one literal too.
#define HPCNN_PRECISION_HELP                                                                                           \
  "arithmetic: fp32; tf32 (cuda: tensor-core TF32 in conv/gemm); bf16 (cuda: BF16 activations; dnnl, where the CPU " \
  "has a kernel: BF16 inputs of conv and fully connected layers, FP32 accumulation; FP32 master weights)"
#define HPCNN_INT8_HELP                                                                                               \
  "; int8 (dnnl: conv and fully connected layers on u8/s8 inputs with scales from a calibration pass, s8 weights " \
  "per output channel, int32 accumulation)"

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
       mode == Mode::Infer ? HPCNN_PRECISION_HELP HPCNN_INT8_HELP : HPCNN_PRECISION_HELP,
       mode == Mode::Infer ? "fp32|tf32|bf16|int8" : "fp32|tf32|bf16"},
      {"cudnn-benchmark", OptType::Flag, false, "", "", "cuda: choose cuDNN algorithms by timing them (else heuristics)"},
      {"layout", OptType::Choice, false, "auto", "NAME",
       "cuda activation layout: auto (NHWC with tf32/bf16, NCHW with fp32), nchw, nhwc", "auto|nchw|nhwc"},
      {"cudnn-api", OptType::Choice, false, "graph", "NAME",
       "cuda convolutions: graph (cuDNN's graph API, legacy calls where no plan builds) or legacy", "graph|legacy"},
      {"cudnn-bn-activation", OptType::Choice, false, "on", "on|off",
       "cuda: a batch norm's ReLU inside cuDNN's batch norm where cuDNN supports it (off: hpcnn's ReLU kernels)",
       "on|off"},
      {"conv-algorithm", OptType::Choice, true, "auto", "LIST",
       "dnnl convolutions: auto (Winograd for fp32 3x3 stride-1 layers where oneDNN's heuristics pick it) or direct "
       "(every one direct, as PyTorch runs them)",
       "auto|direct"},
      {"gemm-columns", OptType::Int, false, "0", "N",
       "openblas, eigen: columns a convolution's im2col GEMM aims for, images grouped until N reaches it (0: 1024)",
       {}, 0, 1 << 24},
      {"fusion", OptType::Choice, true, "on", "LIST",
       "on: a ReLU runs inside the conv, batch norm, fully connected or add before it, and in inference a batch "
       "norm is folded into the conv before it, where the backend can (dnnl, cuda); off: every layer its own "
       "operator (as the per-operator profiles of ref. [4] do: experiment E9, docs/EXPERIMENTS.md)",
       "on|off"},
      {"memory-plan", OptType::Choice, true, "on", "LIST",
       "on: activations and gradients share one arena, a buffer reused once its value is dead (liveness over the "
       "forward and backward steps); off: every activation and gradient its own buffer (the comparison)",
       "on|off"},
  };
  if (mode == Mode::Infer)
    specs.push_back({"calibration-batches", OptType::Int, false, "4", "N",
                     "--precision int8: batches of the calibration pass (fp32 forwards whose layer inputs' ranges give "
                     "the activation scales; synthetic batches other than the timed ones)",
                     {}, 0, 1 << 20});
  if (mode == Mode::Train) {
    specs.push_back({"optimizer", OptType::Choice, true, "sgd", "LIST", "optimizer", "sgd|adam"});
    specs.push_back({"lr", OptType::Float, true, "0.01", "LIST", "learning rate", {}, 0, 1e6});
    specs.push_back({"momentum", OptType::Float, false, "0.9", "X", "SGD momentum", {}, 0, 1});
    specs.push_back({"weight-decay", OptType::Float, false, "0", "X", "L2 weight decay", {}, 0, 1e6});
  }
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
    // CPU precisions beyond fp32: what this CPU runs (job scripts read it), before the thread
    // limit, which ends the line.
    std::string precisions;
    if (b.precision_problem) {
      const std::string why = b.precision_problem(Precision::Bf16);
      const bool int8 = b.precision_problem(Precision::Int8).empty();
      precisions = "; --precision " + (why.empty() ? std::string("fp32,bf16 on this CPU") : "fp32 (bf16: " + why + ")") +
                   (int8 ? ", int8 for inference" : "");
    }
    std::printf("  %-16s %s%s%s\n", b.name.c_str(), b.description.c_str(), precisions.c_str(), limit.c_str());
  }
  std::printf("datasets (synthetic shapes): %s\n", kDatasetChoices);
  std::printf("build: hpcnn %s, configured with: %s\n", PACKAGE_VERSION, HPCNN_CONFIGURE_OPTIONS);
}

namespace {

Precision precision_of(const std::string& name) {
  if (name == "int8") return Precision::Int8;
  return name == "bf16" ? Precision::Bf16 : name == "tf32" ? Precision::Tf32 : Precision::Fp32;
}

// int8 needs a calibration pass: at least one batch of it.
void check_calibration(const Options& o) {
  const std::vector<std::string> p = o.values("precision");
  if (std::find(p.begin(), p.end(), "int8") == p.end() || !o.has("calibration-batches")) return;
  if (o.integer("calibration-batches") < 1)
    throw UsageError("--precision int8 needs calibration data: --calibration-batches " +
                     std::to_string(o.integer("calibration-batches")));
}

}  // namespace

void validate_model_names(const Options& o) {
  for (const std::string& m : o.values("model")) find_model(m);
  check_calibration(o);
  for (const std::string& b : o.values("backend")) {
    const BackendInfo* info = backend_registry().find(b);
    if (!info) throw UsageError("--backend: unknown backend '" + b + "' (available: " + backend_registry().names() + ")");
    // Every --threads x --backend pair, here rather than in the point: a count the library cannot
    // honour is the user's mistake (exit 2), not a failed measurement.
    for (const std::string& t : o.values("threads"))
      if (t != "default") check_thread_limit(*info, std::stoi(t));
    // GPU-only settings, before any work: every point of the sweep combines every backend with them.
    if (info->gpu) {
      for (const std::string& p : o.values("precision"))
        if (p == "int8") throw SettingError("precision", p, "backend '" + b + "' computes in fp32, tf32 or bf16 (int8: dnnl)");
      continue;
    }
    for (const std::string& p : o.values("precision"))
      for (const std::string& algorithm : o.values("conv-algorithm")) {
        BackendSettings s;
        s.precision = precision_of(p);
        s.cudnn_benchmark = o.flag("cudnn-benchmark");
        s.layout = o.str("layout");
        s.conv_algorithm = algorithm;
        s.gemm_columns = static_cast<int>(o.integer("gemm-columns"));
        s.cudnn_api = o.str("cudnn-api");
        s.cudnn_bn_activation = o.str("cudnn-bn-activation") == "on";
        check_cpu_settings(*info, s);
      }
  }
}

ModelPoint model_point_without_data(const PointSettings& s, Mode mode) {
  ModelPoint mp;
  mp.mode = mode;
  mp.model = s.str("model");
  mp.backend = s.str("backend");
  mp.batch = static_cast<int>(s.integer("batch"));
  mp.threads = static_cast<int>(s.integer("threads"));
  mp.settings.precision = precision_of(s.str("precision"));
  if (mp.settings.precision == Precision::Int8) mp.calibration_batches = static_cast<int>(s.integer("calibration-batches"));
  mp.settings.cudnn_benchmark = s.flag("cudnn-benchmark");
  mp.settings.layout = s.str("layout");
  mp.settings.conv_algorithm = s.str("conv-algorithm");
  mp.settings.gemm_columns = static_cast<int>(s.integer("gemm-columns"));
  mp.settings.cudnn_api = s.str("cudnn-api");
  mp.settings.cudnn_bn_activation = s.str("cudnn-bn-activation") == "on";
  mp.fuse_relu = s.str("fusion") == "on";
  mp.memory_plan = s.str("memory-plan") == "on";
  mp.act = s.str("act") == "tanh" ? Activation::Tanh : Activation::Relu;
  mp.seed = static_cast<std::uint64_t>(s.integer("seed"));
  if (mode == Mode::Train) {
    mp.lr = s.real("lr");
    mp.momentum = s.real("momentum");
    mp.weight_decay = s.real("weight-decay");
    mp.optimizer.kind = s.str("optimizer");
    mp.optimizer.lr = static_cast<float>(mp.lr);
    mp.optimizer.momentum = static_cast<float>(mp.momentum);
    mp.optimizer.weight_decay = static_cast<float>(mp.weight_decay);
  }
  return mp;
}

ModelPoint model_point(const PointSettings& s, Mode mode) {
  ModelPoint mp = model_point_without_data(s, mode);
  mp.dataset = s.str("dataset");
  const DatasetShape ds = dataset_shape(mp.dataset);
  const ModelInfo& info = find_model(mp.model);
  int size = ds.sample.h;
  if (s.has("image-size")) size = static_cast<int>(s.integer("image-size"));
  else if (info.native_image_size) size = info.native_image_size;  // alexnet: resized to 64x64
  mp.sample = {1, ds.sample.c, size, size};
  mp.classes = ds.classes;
  mp.iters = static_cast<int>(s.integer("iters"));
  mp.warmup = static_cast<int>(s.integer("warmup"));
  mp.min_time = s.real("min-time");
  return mp;
}

std::uint64_t rank_data_seed(std::uint64_t seed, int rank) { return seed + 7919ull * static_cast<std::uint64_t>(rank); }

const char* activation_name(Activation a) { return a == Activation::Tanh ? "tanh" : "relu"; }

std::size_t activation_bytes_at_least(const Graph& graph, long batch) {
  std::size_t per_sample = 0;
  for (const Node& node : graph.nodes())
    if (!op_kind_facts(node.kind).reuses_input_memory) per_sample += node.out.per_sample();
  return per_sample * sizeof(float) * static_cast<std::size_t>(std::max(batch, 1L));
}

void check_point_memory(const ModelPoint& mp, const Graph& graph, const std::vector<long>& batches) {
  for (const BackendInfo& info : backends())
    if (info.name == mp.backend && info.gpu) return;  // activations in GPU memory: the backend checks
  const double available = available_memory_bytes();
  if (available <= 0) return;  // unknown
  std::size_t need = 0;
  std::string sizes;
  for (long b : batches) {
    need += activation_bytes_at_least(graph, b);
    sizes += (sizes.empty() ? "batch " : " + ") + std::to_string(b);
  }
  if (static_cast<double>(need) <= available) return;
  char line[256];
  const Shape in = graph.input_shape();
  std::snprintf(line, sizeof line,
                "the activations alone need %.1f GiB (%s of %dx%dx%d images), this node has %.1f GiB available",
                static_cast<double>(need) / (1 << 30), sizes.c_str(), in.c, in.h, in.w, available / (1 << 30));
  throw RuntimeError(line);
}

Graph build_point_graph(const ModelPoint& mp, bool with_loss) {
  ModelConfig mc;
  mc.input = mp.sample;
  mc.classes = mp.classes;
  mc.act = mp.act;
  mc.loss = with_loss;
  return build_model(mp.model, mc);
}

std::shared_ptr<const ActivationRanges> calibrate_point(const ModelPoint& mp, const Graph& graph, int batches,
                                                        const std::function<void(Network&, int)>& feed,
                                                        MPI_Comm comm) {
  ActivationRanges ranges;
  PointError error;
  try {
    ModelPoint fp32 = mp;
    fp32.settings.precision = Precision::Fp32;
    LibraryVersions unused;
    const std::unique_ptr<Backend> backend = make_point_backend(fp32, unused);
    Network net(*backend, graph, calibration_options(mp.batch, mp.seed));
    ranges = calibrate(net, batches, feed);
  } catch (const std::exception& e) {
    error = PointError::from(e);
  }
  agree_on_failure(comm, error);  // every rank fails together, before the collective below
  // Every rank's ranges have the same keys in the same (map) order.
  std::vector<float> lows, highs;
  for (const auto& [name, r] : ranges) {
    lows.push_back(r.min);
    highs.push_back(r.max);
  }
  MPI_Allreduce(MPI_IN_PLACE, lows.data(), static_cast<int>(lows.size()), MPI_FLOAT, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, highs.data(), static_cast<int>(highs.size()), MPI_FLOAT, MPI_MAX, comm);
  std::size_t i = 0;
  for (auto& [name, r] : ranges) {
    r.min = lows[i];
    r.max = highs[i++];
  }
  return std::make_shared<const ActivationRanges>(std::move(ranges));
}

std::shared_ptr<const ActivationRanges> calibrate_on_synthetic(const ModelPoint& mp, const Graph& graph, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Other batches than the timed ones (whose seed is rank_data_seed itself).
  const SyntheticData data(mp.sample, mp.classes, mp.batch, rank_data_seed(mp.seed, rank) ^ 0x5eed5eedull,
                           mp.calibration_batches);
  return calibrate_point(mp, graph, mp.calibration_batches,
                         [&](Network& net, int k) { net.set_input(data.images(k), data.labels(k)); }, comm);
}

std::unique_ptr<Backend> make_point_backend(const ModelPoint& mp, LibraryVersions& libraries) {
  // A backend this build has but this machine cannot run (cuda without a GPU): the point is
  // skipped, with the reason, and the sweep goes on.
  for (const BackendInfo& info : backends())
    if (info.name == mp.backend && info.unavailable) {
      const std::string why = info.unavailable();
      if (!why.empty())
        throw StatusError(PointStatus::Skipped, "skipped: backend '" + mp.backend + "' cannot run here: " + why);
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

NetworkOptions network_options(const ModelPoint& mp, int batch, Mode mode) {
  NetworkOptions no;
  no.batch = batch;
  no.mode = mode;
  no.seed = mp.seed;
  no.fuse_relu = mp.fuse_relu;
  no.memory_plan = mp.memory_plan;
  return no;
}

void set_settings_fields(Record& r, const ModelPoint& mp) {
  r.set("precision", std::string(precision_name(mp.settings.precision)));
  r.set("cudnn_benchmark", std::int64_t{mp.settings.cudnn_benchmark ? 1 : 0});
  r.set("layout", mp.settings.layout);
  r.set("conv_algorithm", mp.settings.conv_algorithm);
  r.set("gemm_columns", std::int64_t{mp.settings.gemm_columns});
  r.set("cudnn_api", mp.settings.cudnn_api);
  r.set("cudnn_bn_activation", std::string(mp.settings.cudnn_bn_activation ? "on" : "off"));
  r.set("fusion", std::string(mp.fuse_relu ? "on" : "off"));
  r.set("memory_plan", std::string(mp.memory_plan ? "on" : "off"));
  r.set("act", std::string(activation_name(mp.act)));
  if (mp.settings.precision == Precision::Int8) r.set("calibration_batches", std::int64_t{mp.calibration_batches});
}

void set_model_fields(Record& r, const char* suite, const ModelPoint& mp, const Backend& backend,
                      const Graph& graph, int ranks) {
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
  r.set("seed", static_cast<std::int64_t>(mp.seed));
  set_settings_fields(r, mp);
}

void set_iteration_settings(Record& r, const ModelPoint& mp) {
  r.set("iters", std::int64_t{mp.iters});
  r.set("warmup", std::int64_t{mp.warmup});
  r.set("min_time_s", mp.min_time);
}

void set_optimizer_fields(Record& r, const ModelPoint& mp) {
  r.set("optimizer", mp.optimizer.kind);
  r.set("lr", mp.lr);
  r.set("momentum", mp.momentum);
  r.set("weight_decay", mp.weight_decay);
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

}  // namespace hpcnn
