// The one table of result fields. Everything else derives from it: Record's type checks, the
// HDF5 attribute types, hpcnn-summary's columns, headers and units.
//
// Adding a field is one line below plus one row in docs/RESULTS.md ("Fields"), which lists every
// field with the same name, type, unit and meaning (tests/test_results.cpp checks that the two
// agree). Adding a field does not change the schema version; renaming, removing or changing the
// type of one does (see docs/RESULTS.md, "Schema version policy").
//
// Formats are printf formats applied to the value as: Int -> long long, Float -> double,
// String -> const char*.
#include <string>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

namespace {
constexpr FieldType I = FieldType::Int;
constexpr FieldType F = FieldType::Float;
constexpr FieldType S = FieldType::String;
}  // namespace

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      // name            type unit        format    help
      {"suite",           S, "",         "%s",     "suite that produced the point (hpcnn-train, hpcnn-infer, ...)"},
      {"model",           S, "",         "%s",     "network model (resnet50, ...)"},
      {"backend",         S, "",         "%s",     "compute backend (reference, dnnl, ...)"},
      {"dataset",         S, "",         "%s",     "input data set (synthetic, ...)"},
      {"mode",            S, "",         "%s",     "train | infer"},
      {"batch",           I, "",         "%lld",   "mini-batch size per rank (images per iteration)"},
      {"threads",         I, "",         "%lld",   "threads per rank, as read back from the backend library"},
      {"ranks",           I, "",         "%lld",   "MPI ranks taking part"},
      {"image_size",      I, "px",       "%lld",   "input image height and width"},
      {"classes",         I, "",         "%lld",   "output classes of the model"},
      {"params",          I, "",         "%lld",   "trainable parameters of the model (count)"},
      {"iters",           I, "",         "%lld",   "timed iterations"},
      {"warmup",          I, "",         "%lld",   "untimed warm-up iterations before the timed ones"},
      {"seed",            I, "",         "%lld",   "random seed of weights and synthetic data"},
      {"img_per_s",       F, "images/s", "%.1f",   "throughput over all ranks: ranks * batch / median iteration time"},
      {"iter_median_s",   F, "s",        "%.4g",   "median time of one iteration"},
      {"iter_mean_s",     F, "s",        "%.4g",   "mean time of one iteration"},
      {"iter_std_s",      F, "s",        "%.3g",   "standard deviation of the iteration time"},
      {"iter_min_s",      F, "s",        "%.4g",   "fastest iteration"},
      {"iter_max_s",      F, "s",        "%.4g",   "slowest iteration"},
      {"iter_p5_s",       F, "s",        "%.4g",   "5th percentile of the iteration time"},
      {"iter_p95_s",      F, "s",        "%.4g",   "95th percentile of the iteration time"},
      {"load_s",          F, "s",        "%.4g",   "data loading, median per iteration"},
      {"forward_s",       F, "s",        "%.4g",   "forward pass, median per iteration"},
      {"backward_s",      F, "s",        "%.4g",   "backward pass, median per iteration"},
      {"update_s",        F, "s",        "%.4g",   "weight update, median per iteration"},
      {"flops_per_image", F, "FLOP",     "%.4g",   "floating-point operations per image (forward, plus backward when training)"},
      {"gflops",          F, "GFLOP/s",  "%.1f",   "achieved rate over all ranks: flops_per_image * img_per_s / 1e9"},
      {"peak_rss_mib",    F, "MiB",      "%.1f",   "peak resident memory of rank 0"},
      {"status",          S, "",         "%s",     "ok | failed | diverged | skipped"},
      {"status_reason",   S, "",         "%s",     "why the status is not ok; empty when ok"},
      {"reproducer",      S, "",         "%s",     "command line that reruns exactly this point"},
  };
  return table;
}

const Field* find_field(const std::string& name) {
  for (const Field& f : fields())
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace hpcnn
