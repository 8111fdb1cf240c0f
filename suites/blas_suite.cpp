// hpcnn-blas (blas_suite.hpp): the option table per sweep kind, validation before any work, and
// one run_point per sweep kind. Timing, sweeping, the result file and the live table are the
// shared suite runner's.
#include "suites/blas_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/backend.hpp"
#include "kernels/registry.hpp"
#include "engine/cpu_backend.hpp"
#include "base/bf16.hpp"
#include "base/errors.hpp"
#include "engine/models.hpp"
#include "base/rng.hpp"
#include "suites/compute_peak.hpp"
#include "suites/node_noise.hpp"
#include "suites/model_suite.hpp"
#include "suites/suite_options.hpp"
#include "harness/rank_series.hpp"
#include "harness/single_op.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"
#include "harness/timed_count.hpp"
#include "harness/training_loop.hpp"
#include "kernels/gemm/conv_lowering.hpp"
#include "engine/sgemm.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;
const char* const kProgram = "hpcnn-blas";
// Time budget of one GEMM point's timed calls without --min-time: at least 5 calls, at most --iters.
constexpr double kGemmPointSeconds = 3.0;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- options ------------------------------------------------------------------------------------

// --sweep is read before the table is built: only the GEMM sweep has a default --sizes (a list
// option with a value would otherwise multiply the other sweeps' points).
std::string sweep_kind(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sweep" && i + 1 < argc) return argv[i + 1];
    if (a.rfind("--sweep=", 0) == 0) return a.substr(8);
  }
  return "gemm";
}

// Square sizes, then the GEMM shapes resnet50-cifar's convolutions give the GEMM-lowered backends
// at batch 64 (M = output channels, N = images per GEMM x output pixels, K = C x KH x KW).
const std::string& default_gemm_sizes() {
  static const std::string sizes = [] {
    std::string s = "256,512,1024,2048";
    ModelConfig mc;
    mc.input = {1, 3, 32, 32};
    const Graph g = build_model("resnet50-cifar", mc);
    std::vector<std::string> seen;
    for (const Node& node : g.nodes()) {
      if (node.kind != OpKind::Conv) continue;
      Shape in = g.node(node.inputs[0]).out, out = node.out;
      in.n = out.n = 64;
      const std::string shape = gemm_conv::forward_gemm_shape(gemm_conv::Geometry::of(node.attr, in, out), 64);
      if (std::find(seen.begin(), seen.end(), shape) != seen.end()) continue;
      seen.push_back(shape);
      s.append(",").append(shape);
    }
    return s;
  }();
  return sizes;
}

// The default --backend: the CPU BLAS libraries this build has, in the registry's order: the
// backends that lower convolutions to a BLAS library's GEMM (their own setting gemm_columns:
// OpenBLAS, Eigen) and, for --sweep gemm, those libraries' SGEMM. Without any, --sweep gemm times
// the SGEMM libraries it has (oneDNN's) and the other sweeps the reference.
// (Kept for the process: an option's default is a string_view.)
const std::string& default_backends(const std::string& kind) {
  static std::map<std::string, std::string> chosen;
  if (auto it = chosen.find(kind); it != chosen.end()) return it->second;
  if (kind == "noise") return chosen[kind] = "cpu";  // the probe times the cores themselves
  std::vector<std::string> blas, have;
  for (const BackendInfo& b : backends())
    if (std::find(b.own_settings.begin(), b.own_settings.end(), "gemm_columns") != b.own_settings.end())
      blas.push_back(b.name);
  if (kind == "gemm")
    for (const SgemmInfo& s : sgemm_libraries()) have.push_back(s.name);
  else
    have = blas;
  std::string s;
  for (const std::string& name : have)
    if (std::find(blas.begin(), blas.end(), name) != blas.end()) s.append(s.empty() ? "" : ",").append(name);
  if (s.empty() && kind != "gemm") s = "reference";
  if (s.empty())
    for (const std::string& name : have) s.append(s.empty() ? "" : ",").append(name);
  return chosen[kind] = s;
}

std::vector<OptionSpec> blas_options(const std::string& kind) {
  std::vector<OptionSpec> specs = {
      {"sweep", OptType::Choice, false, "gemm", "KIND",
       "gemm: SGEMM per library; layers: every conv/fc shape of --model; model: training runs; noise: the node's "
       "operating-system noise, a fixed work quantum timed over and over on every thread (FWQ)",
       "gemm|layers|model|noise"},
      {"sizes", OptType::String, true, kind == "gemm" ? std::string_view(default_gemm_sizes()) : std::string_view(),
       "LIST", "--sweep gemm: N (square) or MxNxK; default: squares and resnet50-cifar's conv GEMMs at batch 64"},
  };
  for (OptionSpec s : model_options(Mode::Train)) {
    if (s.name == "backend") {
      s.default_value = default_backends(kind);
      s.help = "backends (layers, model) or SGEMM libraries (gemm); see --list; 'cpu' (noise)";
    }
    if (s.name == "threads") s.help = "threads of the library; 'default' leaves the library's own choice";
    specs.push_back(s);
  }
  for (const auto& group : {timing_options(), measurement_options(), output_options()})
    specs.insert(specs.end(), group.begin(), group.end());
  return specs;
}

void print_list() {
  print_model_list();
  std::printf("SGEMM libraries (--sweep gemm):\n");
  for (const SgemmInfo& s : sgemm_libraries()) std::printf("  %-16s %s\n", s.name.c_str(), s.description.c_str());
  std::printf("default --sizes of --sweep gemm: %s\n", default_gemm_sizes().c_str());
}

// --precision of --sweep gemm: fp32 for every library, bf16 for those with a bf16 GEMM this CPU runs.
void check_gemm_precision(const std::string& library, const std::string& precision) {
  if (precision == "fp32") return;
  const SgemmInfo* info = find_sgemm(library);
  if (precision != "bf16" || !info || !info->create_bf16)
    throw SettingError("precision", precision, "library '" + library + "' has no " + precision + " GEMM");
  if (const std::string why = info->bf16_problem ? info->bf16_problem() : std::string(); !why.empty())
    throw SettingError("precision", precision, "library '" + library + "': " + why);
}

// Every name known and every thread count one the library accepts, before any work.
void validate(const Options& o) {
  const std::string kind = o.str("sweep");
  if (kind == "gemm") {
    for (const std::string& s : o.values("sizes")) {
      int m, n, k;
      parse_gemm_size(s, m, n, k);
    }
    for (const std::string& b : o.values("backend")) {
      std::unique_ptr<Sgemm> lib;
      try {
        lib = make_sgemm(b);
      } catch (const UsageError& e) {
        throw UsageError(std::string("--backend: ") + e.what());
      }
      for (const std::string& p : o.values("precision")) check_gemm_precision(b, p);
      // The same wording as the backends' check (check_thread_limit), naming the library.
      for (const std::string& t : o.values("threads"))
        if (t != "default" && std::stoi(t) > lib->max_threads())
          throw UsageError(std::string("--threads ")
                               .append(t)
                               .append(": library '")
                               .append(b)
                               .append("' accepts at most ")
                               .append(std::to_string(lib->max_threads()))
                               .append(" threads"));
    }
    return;
  }
  if (o.has("sizes")) throw UsageError("--sizes applies to --sweep gemm only");
  if (kind == "noise") {
    for (const std::string& b : o.values("backend"))
      if (b != "cpu") throw UsageError("--backend: '" + b + "': --sweep noise times the CPU itself (--backend cpu)");
    return;
  }
  validate_model_names(o);  // names, and --threads against each backend's registered limit
}

void add_versions(LibraryVersions& libraries, const LibraryVersions& add) {
  for (const auto& lib : add) {
    bool seen = false;
    for (const auto& have : libraries) seen = seen || have.first == lib.first;
    if (!seen) libraries.push_back(lib);
  }
}

void fill_random(float* x, std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i) x[i] = rng.uniform(-1.0f, 1.0f);
}

std::shared_ptr<float> host_floats(std::size_t n) {
  std::shared_ptr<void> p = aligned_host_alloc(n * sizeof(float));
  return std::shared_ptr<float>(p, static_cast<float*>(p.get()));
}

// A point of hpcnn-blas, in types (the model of --sweep layers and model is a ModelPoint).
struct BlasPoint {
  std::string library;          // --backend: an SGEMM library (gemm) or a backend (layers, model)
  std::string threads_setting;  // as asked: a number or "default"
  int threads = 0;              // 0: the library's default
  int m = 0, n = 0, k = 0;      // --sweep gemm: C[M][N] += A[M][K] B[K][N]
  std::uint64_t seed = 1;
  int iters = 0, warmup = 0;
  double min_time = 0;  // --min-time (gemm and layers sweeps)
  bool bf16 = false;    // --sweep gemm --precision bf16: the library's bf16 GEMM
};

BlasPoint blas_point(const PointSettings& s, const std::string& sweep) {
  BlasPoint bp;
  bp.library = s.str("backend");
  bp.threads_setting = s.str("threads");
  bp.threads = static_cast<int>(s.integer("threads"));
  if (sweep == "gemm") parse_gemm_size(s.str("sizes"), bp.m, bp.n, bp.k);
  bp.bf16 = sweep == "gemm" && s.str("precision") == "bf16";
  bp.seed = static_cast<std::uint64_t>(s.integer("seed"));
  bp.iters = static_cast<int>(s.integer("iters"));
  bp.warmup = static_cast<int>(s.integer("warmup"));
  bp.min_time = s.real("min-time");
  return bp;
}

void set_common(Record& r, const char* sweep, const std::string& backend, int threads, const BlasPoint& bp, int ranks) {
  r.set("suite", std::string(kProgram));
  r.set("sweep", std::string(sweep));
  r.set("backend", backend);
  r.set("threads", std::int64_t{threads});
  r.set("threads_setting", bp.threads_setting);
  r.set("ranks", std::int64_t{ranks});
}

// peak_gflops: the measured peak of the point's arithmetic (bf16 dot products for bf16 math).
void set_peak(Record& r, double gflops, int threads, bool bf16 = false) {
  const double peak = bf16 ? bf16_peak_gflops(threads) : fp32_peak_gflops(threads);
  r.set("peak_gflops", peak);
  r.set("peak_fraction", peak > 0 ? gflops / peak : 0.0);
}

// ---- --sweep gemm -------------------------------------------------------------------------------

// After the timed calls: sampled entries of C against double-precision dot products. The stated
// rule is the deterministic bound of a length-k float dot product,
//   |c - ref| <= 2 k u sum_l |a_il b_lj|,  u = 2^-24;
// the largest |c - ref| / sum|a b| is recorded as gemm_check_error.
double gemm_check(const float* a, const float* b, const float* c, int m, int n, int k, bool& ok) {
  double worst = 0;
  ok = true;
  Rng rng(12345);
  for (int s = 0; s < 64; ++s) {
    const int i = static_cast<int>(rng.uniform() * m) % m, j = static_cast<int>(rng.uniform() * n) % n;
    double ref = 0, mag = 0;
    for (int l = 0; l < k; ++l) {
      const double p = double(a[std::size_t(i) * k + l]) * b[std::size_t(l) * n + j];
      ref += p;
      mag += std::fabs(p);
    }
    const double err = std::fabs(c[std::size_t(i) * n + j] - ref) / (mag > 0 ? mag : 1.0);
    worst = std::max(worst, err);
    if (err > 2.0 * k * std::ldexp(1.0, -24)) ok = false;
  }
  return worst;
}

// The values a bf16 GEMM multiplies: x rounded to bf16 (to nearest even), in a float.
std::vector<float> rounded_to_bf16(const float* x, std::size_t n) {
  std::vector<float> out(x, x + n);
  for (float& v : out) v = round_to_bf16(v);
  return out;
}

// The call a gemm point times: the library's SGEMM, or its bf16 GEMM on A and B converted once.
std::function<void()> gemm_call(const BlasPoint& bp, Sgemm& lib, const float* a, const float* b, float* c,
                                LibraryVersions& libraries) {
  const int m = bp.m, n = bp.n, k = bp.k;
  if (!bp.bf16) return [&lib, m, n, k, a, b, c] { lib.run(false, false, m, n, k, 1.0f, a, b, 0.0f, c); };
  const SgemmInfo* info = find_sgemm(bp.library);
  std::shared_ptr<Bf16Gemm> g = info && info->create_bf16 ? info->create_bf16() : nullptr;
  if (!g) throw std::logic_error("library '" + bp.library + "' has no bf16 GEMM (validate() checks it)");
  g->prepare(m, n, k, a, b);
  add_versions(libraries, {{bp.library + "_bf16_gemm_kernel", g->kernel()}});
  return [g, c] { g->run(c); };
}

ResultPoint gemm_point(const BlasPoint& bp, MPI_Comm comm, LibraryVersions& libraries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int m = bp.m, n = bp.n, k = bp.k;
  std::unique_ptr<Sgemm> lib = make_sgemm(bp.library);
  lib->set_threads(bp.threads);
  add_versions(libraries, lib->versions());
  const std::uint64_t seed = bp.seed;
  std::shared_ptr<float> a = host_floats(std::size_t(m) * k), b = host_floats(std::size_t(k) * n),
                         c = host_floats(std::size_t(m) * n);
  fill_random(a.get(), std::size_t(m) * k, seed);
  fill_random(b.get(), std::size_t(k) * n, seed + 1);
  const int warmup = bp.warmup, iters = bp.iters;
  const std::function<void()> call = gemm_call(bp, *lib, a.get(), b.get(), c.get(), libraries);
  for (int i = 0; i < warmup; ++i) call();
  // Every rank times the same number of calls (the series are gathered as one array).
  std::vector<double> calls;
  const auto start = Clock::now();
  int count = iters;
  const int decide_at = std::min(4, iters - 1);  // after the first (up to) 5 calls
  for (int i = 0; i < count; ++i) {
    const auto t0 = Clock::now();
    call();
    calls.push_back(since(t0));
    if (i != decide_at) continue;
    const double per_call = since(start) / (i + 1);
    if (bp.min_time > 0) {  // at least --iters calls and --min-time seconds
      count = timed_count(iters, bp.min_time, per_call, comm);
    } else if (i == 4) {  // --iters at most, as many as fill the time budget, agreed over ranks
      int want = std::clamp(static_cast<int>(kGemmPointSeconds / std::max(per_call, 1e-9)), 5, iters);
      MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MIN, comm);
      count = want;
    }
  }
  // bf16: against the products of the rounded operands (exact in fp32), so the same fp32 bound holds.
  bool ok = true;
  const double error =
      bp.bf16 ? gemm_check(rounded_to_bf16(a.get(), std::size_t(m) * k).data(),
                           rounded_to_bf16(b.get(), std::size_t(k) * n).data(), c.get(), m, n, k, ok)
              : gemm_check(a.get(), b.get(), c.get(), m, n, k, ok);

  ResultPoint out;
  out.arrays.push_back(gather_series("call_time_s", calls, comm));
  if (rank != 0) return out;
  Record& r = out.record;
  // Delivered: the calls' work over their total time (per call the slowest rank's); the median
  // call's rate beside it.
  const Stats st = set_slowest_rank_fields(r, out.arrays[0]);
  const double flops = 2.0 * m * n * k, gflops = st.mean > 0 ? flops / st.mean * 1e-9 : 0.0;
  set_common(r, "gemm", lib->name(), lib->threads(), bp, size);
  r.set("size", std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
  r.set("iters", std::int64_t{count});
  r.set("warmup", std::int64_t{warmup});
  r.set("min_time_s", bp.min_time);
  r.set("seed", static_cast<std::int64_t>(seed));
  r.set("sec_per_iter", st.mean);
  r.set("gflops", gflops);
  r.set("gflops_median", st.median > 0 ? flops / st.median * 1e-9 : 0.0);
  r.set("precision", std::string(bp.bf16 ? "bf16" : "fp32"));
  set_peak(r, gflops, lib->threads(), bp.bf16);
  r.set("gemm_check_error", error);
  if (!ok) {
    out.status = PointStatus::Failed;
    out.status_reason = std::string(bp.bf16 ? "bf16 GEMM" : "SGEMM") +
                        " result outside the float dot-product bound 2 k u sum|a b|";
  }
  return out;
}

// ---- --sweep layers ------------------------------------------------------------------------------

struct LayerShape {
  const Node* node = nullptr;  // first layer of this shape
  Shape in;                    // with the batch
  std::string names;           // every layer of this shape
  int count = 0;
  bool data_grad = true;       // training computes the input gradient (not for the first layer)
};

bool same_layer(const Node& a, const Shape& ia, const Node& b, const Shape& ib) {
  const OpAttr &x = a.attr, &y = b.attr;
  return a.kind == b.kind && ia == ib && a.out == b.out && x.out_channels == y.out_channels && x.bias == y.bias &&
         x.kh == y.kh && x.kw == y.kw && x.sh == y.sh && x.sw == y.sw && x.ph == y.ph && x.pw == y.pw;
}

std::vector<LayerShape> distinct_layers(const Graph& g, int batch) {
  std::vector<LayerShape> out;
  for (const Node& node : g.nodes()) {
    if (node.kind != OpKind::Conv && node.kind != OpKind::FullyConnected) continue;
    Shape in = g.node(node.inputs[0]).out;
    in.n = batch;
    const bool data_grad = node.inputs[0] != g.input();
    auto it = std::find_if(out.begin(), out.end(), [&](const LayerShape& l) {
      return l.data_grad == data_grad && same_layer(*l.node, l.in, node, in);
    });
    if (it == out.end()) {
      out.push_back({&node, in, node.name, 0, data_grad});
      it = out.end() - 1;
    } else {
      it->names.append("+").append(node.name);
    }
    ++it->count;
  }
  return out;
}

// "MxNxK" of the layer's forward GEMM as the GEMM-lowered backends run it.
std::string layer_gemm_shape(const LayerShape& l, const Shape& out) {
  if (l.node->kind == OpKind::Conv) return gemm_conv::forward_gemm_shape(gemm_conv::Geometry::of(l.node->attr, l.in, out), l.in.n);
  return std::to_string(l.in.n) + "x" + std::to_string(out.c) + "x" + std::to_string(l.in.per_sample());
}

struct LayerTimes {
  double forward_s = 0, backward_s = 0, forward_flops = 0, backward_flops = 0;
  std::string shape;
};

LayerTimes time_layer(Backend& be, const LayerShape& l, const BlasPoint& bp) {
  const Node& node = *l.node;
  SingleOp op(be, node, l.in, l.data_grad, bp.seed, 0.05f);
  const int warmup = bp.warmup, iters = bp.iters;
  std::vector<double> fwd, bwd;
  double timed = 0;  // --min-time: this rank's timed seconds so far (only means leave the rank)
  for (int i = 0; i < warmup + iters || (timed < bp.min_time && i - warmup < kMaxTimedIterations); ++i) {
    auto t0 = Clock::now();
    op.forward();
    be.synchronize();
    const double f = since(t0);
    t0 = Clock::now();
    op.backward();
    be.synchronize();
    const double b = since(t0);
    if (i < warmup) continue;
    fwd.push_back(f);
    bwd.push_back(b);
    timed += f + b;
  }
  LayerTimes t;
  // Delivered: the timed calls' total over their count, stalls included.
  t.forward_s = compute_stats(fwd).mean;
  t.backward_s = compute_stats(bwd).mean;
  const Shape& out = op.output_shape();
  const double macs = node.kind == OpKind::Conv
                          ? double(out.count()) * l.in.c * node.attr.kh * node.attr.kw
                          : double(l.in.n) * out.c * l.in.per_sample();
  t.forward_flops = 2.0 * macs;
  t.backward_flops = 2.0 * macs * (l.data_grad ? 2 : 1);
  t.shape = layer_gemm_shape(l, out);
  return t;
}

ResultPoint layers_point(const ModelPoint& mp, const BlasPoint& bp, MPI_Comm comm, LibraryVersions& libraries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Graph graph = build_point_graph(mp, false);
  std::unique_ptr<Backend> be = make_point_backend(mp, libraries);
  const std::vector<LayerShape> layers = distinct_layers(graph, mp.batch);
  std::vector<double> fwd_s, bwd_s, fwd_gf, bwd_gf, counts;
  std::string shapes, names;
  double total_fwd = 0, total_bwd = 0, total_flops = 0;
  for (const LayerShape& l : layers) {
    const LayerTimes t = time_layer(*be, l, bp);
    fwd_s.push_back(t.forward_s);
    bwd_s.push_back(t.backward_s);
    fwd_gf.push_back(t.forward_s > 0 ? t.forward_flops / t.forward_s * 1e-9 : 0.0);
    bwd_gf.push_back(t.backward_s > 0 ? t.backward_flops / t.backward_s * 1e-9 : 0.0);
    counts.push_back(l.count);
    shapes.append(shapes.empty() ? "" : ",").append(t.shape);
    names.append(names.empty() ? "" : ",").append(l.names);
    total_fwd += l.count * t.forward_s;
    total_bwd += l.count * t.backward_s;
    total_flops += l.count * (t.forward_flops + t.backward_flops);
  }
  ResultPoint out;
  if (rank != 0) return out;  // every rank measured its own copy; rank 0 reports
  const std::size_t nl = layers.size();
  out.arrays.push_back(make_array("layer_forward_s", {nl}, fwd_s));
  out.arrays.push_back(make_array("layer_backward_s", {nl}, bwd_s));
  out.arrays.push_back(make_array("layer_forward_gflops", {nl}, fwd_gf));
  out.arrays.push_back(make_array("layer_backward_gflops", {nl}, bwd_gf));
  out.arrays.push_back(make_array("layer_count", {nl}, counts));
  Record& r = out.record;
  set_model_fields(r, kProgram, mp, *be, graph, size);
  set_iteration_settings(r, mp);
  set_common(r, "layers", mp.backend, be->threads(), bp, size);
  r.set("mode", std::string("train"));
  r.set("layer_shapes", shapes);
  r.set("layer", names);
  r.set("forward_s", total_fwd);
  r.set("backward_s", total_bwd);
  r.set("sec_per_iter", total_fwd + total_bwd);
  const double gflops = total_fwd + total_bwd > 0 ? total_flops / (total_fwd + total_bwd) * 1e-9 : 0.0;
  r.set("gflops", gflops);
  set_peak(r, gflops, be->threads(), mp.settings.precision == Precision::Bf16);
  return out;
}

// ---- --sweep noise -------------------------------------------------------------------------------

ResultPoint noise_sweep_point(const BlasPoint& bp, MPI_Comm comm) {
  NoiseProbe probe;
  probe.threads = bp.threads > 0 ? bp.threads : allowed_cpus();  // default: every CPU this rank may use
  probe.iters = bp.iters, probe.warmup = bp.warmup, probe.min_time = bp.min_time;
  ResultPoint out = noise_point(probe, comm);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank != 0) return out;
  set_common(out.record, "noise", "cpu", probe.threads, bp, size);
  out.record.set("size", std::string("fwq"));
  out.record.set("seed", static_cast<std::int64_t>(bp.seed));
  set_peak(out.record, out.record.number("gflops").value_or(0), probe.threads);
  return out;
}

// ---- --sweep model -------------------------------------------------------------------------------

ResultPoint model_sweep_point(const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libraries) {
  // Libraries whose thread setting is process-wide (OpenBLAS, OpenMP) start again from their
  // default: constructing an Sgemm restores it, so `default` after `1` really is the default.
  for (const SgemmInfo& s : sgemm_libraries()) s.create();
  // CPU usage and sampled memory (mem_avg_mib, mem_max_mib) come with the model suite's record:
  // it runs a UsageMonitor (cpu_usage.hpp) over the timed iterations.
  static const ModelSuite suite{kProgram, Mode::Train, ""};
  ResultPoint out = run_model_point(suite, o, p, comm, libraries);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return out;
  Record& r = out.record;
  r.set("sweep", std::string("model"));
  r.set("threads_setting", PointSettings(o, p).str("threads"));
  if (const auto t = r.number("iter_mean_s")) r.set("sec_per_iter", *t);
  const auto threads = r.number("threads"), gflops = r.number("gflops");
  if (threads && gflops) set_peak(r, *gflops, static_cast<int>(*threads), r.text("precision") == "bf16");
  return out;
}

}  // namespace

void parse_gemm_size(const std::string& text, int& m, int& n, int& k) {
  std::vector<std::string> parts(1);
  for (char ch : text) {
    if (ch == 'x') parts.emplace_back();
    else parts.back() += ch;
  }
  std::vector<int> dims;
  for (const std::string& part : parts) {
    if (part.empty() || part.size() > 7 || part.find_first_not_of("0123456789") != std::string::npos ||
        (parts.size() != 1 && parts.size() != 3))
      throw UsageError("--sizes: '" + text + "' is not N or MxNxK (positive integers)");
    dims.push_back(std::stoi(part));
    if (dims.back() == 0) throw UsageError("--sizes: '" + text + "' has a dimension of 0");
  }
  m = dims[0];
  n = dims.size() == 3 ? dims[1] : dims[0];
  k = dims.size() == 3 ? dims[2] : dims[0];
}

int run_blas_suite(int argc, char** argv) {
  const std::string kind = sweep_kind(argc, argv);
  SuiteDef def;
  def.program = kProgram;
  def.summary =
      "CPU compute libraries (experiments E10, E11: ref. [5] Tables X-XII, docs/EXPERIMENTS.md): SGEMM GFLOP/s per library (--sweep gemm), the\n"
      "conv and fc layers of a model (--sweep layers), or training runs with CPU usage and memory\n"
      "(--sweep model), or the node's operating-system noise (--sweep noise: a fixed work quantum timed on\n"
      "every thread, FWQ), over --backend x --threads; `hpcnn-summary --table blas` shows the table.";
  def.options = blas_options(kind);
  if (kind == "gemm")
    def.live_columns = {"backend", "threads", "size", "sec_per_iter", "gflops", "peak_fraction"};
  else if (kind == "noise")
    def.live_columns = {"threads", "iters", "iter_median_s", "iter_p95_s", "iter_max_s", "stall_share", "gflops"};
  else if (kind == "layers")
    def.live_columns = {"model", "backend", "batch", "threads", "forward_s", "backward_s", "gflops", "peak_fraction"};
  else
    def.live_columns = {"model", "backend", "batch", "threads", "sec_per_iter", "gflops", "cpu_user_pct",
                        "cpu_sys_pct", "cpu_total_pct", "mem_avg_mib", "mem_max_mib"};
  def.print_list = print_list;
  def.default_table = [](const Options&) { return std::string("blas"); };
  def.validate = validate;
  def.run_point = [](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs,
                      const PointPlace&) {
    const std::string k = o.str("sweep");
    if (k == "gemm") return gemm_point(blas_point(PointSettings(o, p), k), comm, libs);
    if (k == "noise") return noise_sweep_point(blas_point(PointSettings(o, p), k), comm);
    if (k == "layers")
      return layers_point(model_point(PointSettings(o, p), Mode::Train), blas_point(PointSettings(o, p), k), comm, libs);
    return model_sweep_point(o, p, comm, libs);
  };
  return run_suite(def, argc, argv);
}

}  // namespace hpcnn
