// The pieces every model-running suite shares (hpcnn-train/-infer, hpcnn-train --data,
// hpcnn-scale, hpcnn-blas): the model options, the typed point built once from the options and
// the sweep point (nothing below it reads option strings), the model, backend and optimizer it
// asks for, and the record fields that describe it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/graph.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "engine/op.hpp"
#include "engine/optimizer.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"
#include "results/record.hpp"
#include "results/result_file.hpp"
#include "suites/suite_options.hpp"

namespace hpcnn {

// model, backend, dataset, batch, threads, image-size, act, precision, cudnn-benchmark, layout,
// fusion; with Train also optimizer, lr, momentum, weight-decay.
std::vector<OptionSpec> model_options(Mode mode);

// Unknown model or backend names, a --threads above what a --backend accepts (BackendInfo's
// max_threads) and GPU-only settings with a CPU backend -> UsageError, before any work.
void validate_model_names(const Options& options);
void print_model_list();

// What a sweep point asks for, in types.
struct ModelPoint {
  Mode mode = Mode::Train;
  std::string model, backend, dataset;
  Shape sample;  // per sample; alexnet's native 64x64 unless --image-size
  int classes = 10;
  int batch = 1;     // per rank (per worker in hpcnn-scale)
  int threads = 0;   // 0: the library's default
  BackendSettings settings;  // --precision, --cudnn-benchmark, --layout
  int calibration_batches = 0;  // --precision int8: batches of the calibration pass (hpcnn-infer)
  bool fuse_relu = true;     // --fusion (NetworkOptions::fuse_relu)
  bool memory_plan = true;   // --memory-plan (NetworkOptions::memory_plan)
  Activation act = Activation::Relu;  // --act (lenet5)
  int iters = 0, warmup = 0;
  double min_time = 0;  // --min-time: the timed iterations add up to at least this (iters is then what ran)
  std::uint64_t seed = 1;
  // Training: the optimizer, and its settings as given (the record keeps them unrounded).
  OptimizerSettings optimizer;
  double lr = 0, momentum = 0, weight_decay = 0;
};

// From model_options(mode) and timing_options() (a suite without --dataset or --iters fills
// those fields itself: model_point_without_data).
ModelPoint model_point(const PointSettings& s, Mode mode);
// The settings that do not depend on a synthetic data set's shape: model, backend, batch,
// threads, backend settings, fusion, act, optimizer; hpcnn-train --data adds the data's shape.
ModelPoint model_point_without_data(const PointSettings& s, Mode mode);

// The seed of one rank's data: every rank sees different batches (as data-parallel training
// would) while the weights, initialized from `seed` itself, are the same on every rank.
std::uint64_t rank_data_seed(std::uint64_t seed, int rank);

const char* activation_name(Activation a);  // "relu", "tanh"

Graph build_point_graph(const ModelPoint& mp, bool with_loss);

// int8: the ranges of every convolution's and fully connected layer's input over `batches` forwards of
// an fp32 network of the point's backend with the point's parameters, feed(net, k) setting batch k
// (at mp.batch images), agreed over the ranks of `comm` (widest range), so that every rank
// quantizes alike. Collective: a failure on any rank fails the point on every rank (PointFailure).
std::shared_ptr<const ActivationRanges> calibrate_point(const ModelPoint& mp, const Graph& graph, int batches,
                                                        const std::function<void(Network&, int)>& feed,
                                                        MPI_Comm comm);
// The same on synthetic batches of this rank's data (hpcnn-infer without --data).
std::shared_ptr<const ActivationRanges> calibrate_on_synthetic(const ModelPoint& mp, const Graph& graph, MPI_Comm comm);

// What a network of `graph` at `batch` holds at least in activations, in bytes: the output of
// every node that computes one (ReLUs may be fused into their producer, flatten may alias), no
// gradients or workspaces. A lower bound, so that refusing a point on it is never wrong.
std::size_t activation_bytes_at_least(const Graph& graph, long batch);
// Before any allocation: a CPU-backend point whose activations alone exceed the node's available
// memory fails with one line naming the sizes (RuntimeError), instead of a bare std::bad_alloc or
// the kernel's OOM killer minutes later. `batches`: every network size the point builds.
void check_point_memory(const ModelPoint& mp, const Graph& graph, const std::vector<long>& batches);
// The backend configured (settings) and with its threads set; adds its library versions to
// `libraries`. A backend this machine cannot run throws StatusError(Skipped).
std::unique_ptr<Backend> make_point_backend(const ModelPoint& mp, LibraryVersions& libraries);
NetworkOptions network_options(const ModelPoint& mp, int batch, Mode mode);

// suite, model, backend, dataset, batch, threads (read back), ranks, image_size, classes,
// params, seed, precision, cudnn_benchmark, layout, fusion, act.
void set_model_fields(Record& r, const char* suite, const ModelPoint& mp, const Backend& backend,
                      const Graph& graph, int ranks);
// iters, warmup: the suites that time iterations (not hpcnn-train --data, which runs epochs).
void set_iteration_settings(Record& r, const ModelPoint& mp);
// precision, cudnn_benchmark, layout, fusion, act.
void set_settings_fields(Record& r, const ModelPoint& mp);
// optimizer, lr, momentum, weight_decay of a training point: --optimizer and --lr are swept, and
// without them the points of an --lr sweep could not be told apart.
void set_optimizer_fields(Record& r, const ModelPoint& mp);

// GPU figures of a finished run (gpu_peak_mib; gpu_used_mib as sampled at the end of the timed
// iterations, while the network still exists; with NVML gpu_energy_j, joules_per_image,
// gpu_power_w from the energy used over `seconds` for `images`). Collective over comm (max or sum
// over ranks); sets the fields on rank 0. Nothing for CPU backends.
struct GpuFigures {
  double start_j = -1, end_j = -1, seconds = 0, images = 0;
  double used_mib = 0;  // device memory in use (cudaMemGetInfo) at the end of the timed iterations
};
void set_gpu_fields(Record& r, const Backend& backend, const GpuFigures& energy, MPI_Comm comm);

}  // namespace hpcnn
