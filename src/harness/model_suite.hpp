// The model suites (hpcnn-train, hpcnn-infer) and the pieces every model-running suite shares
// (hpcnn-scale, hpcnn-blas's model sweep): the model options, turning a sweep point into a model,
// backend and optimizer, and the record fields that describe a model point.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "harness/optimizer.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"
#include "results/record.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

struct ModelSuite {
  const char* program;  // "hpcnn-train"
  Mode mode;            // Train: forward + loss + backward + update; Infer: forward only
  const char* summary;  // one paragraph for --help
};

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_model_suite(const ModelSuite& suite, int argc, char** argv);

// ---- shared pieces ----
// model, backend, dataset, batch, threads, image-size, act, precision, cudnn-benchmark, layout, fusion;
// with Train also optimizer, lr, momentum, weight-decay.
std::vector<OptionSpec> model_options(Mode mode);
// iters, warmup, seed.
std::vector<OptionSpec> timing_options();
// repeat, profile (hpcnn-train/-infer; docs/RESULTS.md describes what they store).
std::vector<OptionSpec> measurement_options();
// The whole table of hpcnn-train / hpcnn-infer.
std::vector<OptionSpec> model_suite_options(Mode mode);

// Unknown model or backend names, and a --threads above what a --backend accepts (BackendInfo's
// max_threads) -> UsageError, before any work.
void validate_model_names(const Options& options);
void print_model_list();

// What a sweep point asks for.
struct ModelPoint {
  std::string model, backend, dataset;
  Shape sample;  // per sample; alexnet's native 64x64 unless --image-size
  int classes = 10;
  int batch = 1;
  int threads = 0;  // 0: the library's default
  BackendSettings settings;  // --precision, --cudnn-benchmark, --layout
  bool fuse_relu = true;     // --fusion (NetworkOptions::fuse_relu)
  std::string act = "relu";  // --act (lenet5)
};
ModelPoint model_point(const Options& options, const SweepPoint& point);
// The backend settings, fusion and activation of a point (--precision, --cudnn-benchmark, --layout,
// --fusion, --act), for suites that fill the rest of a ModelPoint themselves (hpcnn-train --data).
void set_point_settings(ModelPoint& mp, const Options& options, const SweepPoint& point);
// precision, cudnn_benchmark, layout, fusion, act.
void set_settings_fields(Record& r, const ModelPoint& mp);
Graph build_point_graph(const ModelPoint& mp, const SweepPoint& point, bool with_loss);
// The backend configured (settings) and with its threads set; adds its library versions to
// `libraries`.
std::unique_ptr<Backend> make_point_backend(const ModelPoint& mp, LibraryVersions& libraries);
OptimizerSettings optimizer_settings(const Options& options, const SweepPoint& point);

// suite, model, backend, dataset, batch, threads (read back), ranks, image_size, classes,
// params, iters, warmup, seed, precision, cudnn_benchmark, layout, fusion, act.
void set_model_fields(Record& r, const char* suite, const ModelPoint& mp, const Backend& backend,
                      const Graph& graph, const Options& options, int ranks);
// optimizer, lr, momentum, weight_decay of a training point: --optimizer and --lr are swept, and
// without them the points of an --lr sweep could not be told apart (failed and diverged points get
// them from the sweep point through the suite runner).
void set_optimizer_fields(Record& r, const Options& options, const SweepPoint& point);

// One point of hpcnn-train / hpcnn-infer run in-process, as run_model_suite runs it (hpcnn-blas
// --sweep model wraps it with its own CPU and memory sampling). `options` must hold
// model_options(mode), timing_options() and measurement_options(). Collective over comm; the
// record is complete on rank 0 only.
// GPU figures of a finished run (gpu_peak_mib; gpu_used_mib as sampled at the end of the timed
// iterations, while the network still exists; with NVML gpu_energy_j, joules_per_image,
// gpu_power_w from the energy used over `seconds` for `images`). Collective over comm (max or sum
// over ranks); sets the fields on rank 0. Nothing for CPU backends.
struct GpuFigures {
  double start_j = -1, end_j = -1, seconds = 0, images = 0;
  double used_mib = 0;  // device memory in use (cudaMemGetInfo) at the end of the timed iterations
};
void set_gpu_fields(Record& r, const Backend& backend, const GpuFigures& energy, MPI_Comm comm);

ResultPoint run_model_point(const ModelSuite& suite, const Options& options, const SweepPoint& point,
                            MPI_Comm comm, LibraryVersions& libraries);

}  // namespace hpcnn
