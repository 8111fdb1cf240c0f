#include "suites/model_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "collectives/float_rates.hpp"
#include "engine/backend.hpp"
#include "engine/network.hpp"
#include "harness/cpu_usage.hpp"
#include "engine/op_cost.hpp"
#include "harness/progress.hpp"
#include "harness/provenance.hpp"
#include "harness/rank_series.hpp"
#include "harness/resources.hpp"
#include "harness/suite_runner.hpp"
#include "harness/synthetic_data.hpp"
#include "suites/compute_peak.hpp"
#include "harness/training_loop.hpp"

namespace hpcnn {


std::vector<OptionSpec> model_suite_options(Mode mode) {
  std::vector<OptionSpec> specs = model_options(mode);
  const std::vector<OptionSpec> timing = timing_options(), output = output_options();
  const std::vector<OptionSpec> measure = measurement_options();
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), measure.begin(), measure.end());
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

namespace {

// The stated tolerance of the phase check: phases must add up to the iteration time within 2%, in
// all but 1% of the timed iterations (a rank descheduled between two clock reads of an iteration
// is the machine, not the harness; a phase the harness does not measure misses in every one).
constexpr double kPhaseTolerance = 0.02, kPhaseMissShare = 0.01;

// Timed iterations (over every rank) whose phases miss the iteration time by more than the tolerance.
std::int64_t phase_misses(const PhaseArrays& a) {
  std::int64_t misses = 0;
  for (std::size_t k = 0; k < a.iter.data.size(); ++k) {
    const double total = a.iter.data[k];
    const double sum = a.load.data[k] + a.forward.data[k] + a.backward.data[k] + a.comm_wait.data[k] + a.update.data[k];
    misses += total > 0 && std::fabs(total - sum) / total > kPhaseTolerance;
  }
  return misses;
}

// A point of hpcnn-train / hpcnn-infer: the model point and how often to measure it.
struct MeasuredPoint {
  ModelPoint mp;
  int repeats = 1;
  bool profile_ops = false;  // --profile ops: one more pass that times every operator
};

MeasuredPoint measured_point(const Options& o, const SweepPoint& p, Mode mode) {
  const PointSettings s(o, p);
  return {model_point(s, mode), static_cast<int>(s.integer("repeat")), s.str("profile") == "ops"};
}

// Per operator kind, summed over a profiled pass (forward kinds in forward order, then backward
// kinds in backward order, then the optimizer; every rank builds the same list from the graph).
struct OpSums {
  std::vector<std::string> kinds;
  std::vector<double> seconds, calls, flops, bytes;
  std::size_t slot(const std::string& kind);
};

std::size_t OpSums::slot(const std::string& kind) {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == kind) return i;
  kinds.push_back(kind);
  for (auto* v : {&seconds, &calls, &flops, &bytes}) v->push_back(0);
  return kinds.size() - 1;
}

// What one rank measured for a point over all its passes.
struct RankTimes {
  PhaseSeries phases;            // the unprofiled passes, one after the other
  std::vector<double> rss;       // after every timed iteration (outside the clock)
  std::vector<UsageReport> cpu;  // one per unprofiled pass
  // GPU energy over the timed iterations of the unprofiled passes (joules; < 0: unknown).
  double energy_j = 0, energy_s = 0;
  double gpu_used_mib = 0;  // device memory in use at the end of the timed iterations, max over passes
  ActivationMemory activations;  // what the network's executor allocated (the same in every pass)
  std::vector<double> profiled_iter;  // --profile ops: the profiled pass
  OpSums ops;
};

void append_series(PhaseSeries& all, const PhaseSeries& pass) {
  auto add = [](std::vector<double>& to, const std::vector<double>& from) { to.insert(to.end(), from.begin(), from.end()); };
  add(all.warmup, pass.warmup);
  add(all.iter, pass.iter);
  add(all.load, pass.load);
  add(all.forward, pass.forward);
  add(all.backward, pass.backward);
  add(all.comm_wait, pass.comm_wait);
  add(all.update, pass.update);
  all.phase_gap_max = std::max(all.phase_gap_max, pass.phase_gap_max);
}

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

// What one pass does around the loop's iterations: progress lines, memory after every timed
// iteration, CPU usage and GPU energy over the timed ones (unprofiled passes), and the profile
// reset at the first timed iteration (profiled pass).
class PassObserver : public LoopObserver {
 public:
  PassObserver(Network& net, Backend& backend, bool profiled, long first, long all, double images, bool root)
      : net_(net), backend_(backend), profiled_(profiled), first_(first), all_(all), images_(images), root_(root) {}
  void timed_start() override {
    timed_ = true;
    if (profiled_) {
      net_.reset_profile();
      return;
    }
    usage_ = std::make_unique<UsageMonitor>();
    energy_start_ = backend_.device_energy_joules();
  }
  void after_iteration(int k, const StepResult& r) override {
    if (root_) progress().iteration(first_ + k + 1, all_, images_, r.times.total);
    if (timed_ && !profiled_) rss_.push_back(current_rss_mib());
  }
  // Adds this pass's usage, energy, memory and rss to `t` (unprofiled passes).
  void finish(RankTimes& t, double timed_s) {
    t.rss.insert(t.rss.end(), rss_.begin(), rss_.end());
    if (usage_) t.cpu.push_back(usage_->stop());
    const double energy_end = backend_.device_energy_joules();
    t.gpu_used_mib = std::max(t.gpu_used_mib, static_cast<double>(backend_.device_used_bytes()) / (1 << 20));
    if (energy_start_ < 0 || energy_end < energy_start_ || t.energy_j < 0) t.energy_j = -1;
    else t.energy_j += energy_end - energy_start_;
    t.energy_s += timed_s;
  }

 private:
  Network& net_;
  Backend& backend_;
  bool profiled_;
  long first_, all_;
  double images_;
  bool root_;
  bool timed_ = false;
  std::unique_ptr<UsageMonitor> usage_;
  double energy_start_ = -1;
  std::vector<double> rss_;
};

// The profiled pass's operator times, costs and call counts, summed by kind into `ops`.
void add_profile(OpSums& ops, Network& net, const Graph& graph, int batch, int iters, double update_s, bool train) {
  std::vector<const OpProfile*> fwd, bwd;
  for (const OpProfile& op : net.profile()) (op.kind.size() > 9 && op.kind.ends_with("_backward") ? bwd : fwd).push_back(&op);
  std::reverse(bwd.begin(), bwd.end());
  for (const auto* list : {&fwd, &bwd})
    for (const OpProfile* op : *list) {
      const std::size_t i = ops.slot(op->kind);
      const bool backward = list == &bwd;
      auto cost = [&](int node) {
        return backward ? op_backward_cost(graph, node, batch) : op_forward_cost(graph, node, batch);
      };
      OpCost c = cost(op->node);
      // An op with fused nodes (NetworkOptions::fuse_relu) also does their arithmetic; its bytes
      // stay the op's own (their traffic is what fusing saves).
      for (int f : op->fused) c.flops += cost(f).flops;
      ops.seconds[i] += op->seconds;
      ops.calls[i] += static_cast<double>(op->calls);
      ops.flops[i] += c.flops * static_cast<double>(op->calls);
      ops.bytes[i] += c.bytes * static_cast<double>(op->calls);
    }
  if (!train) return;
  const std::size_t i = ops.slot("weights_update");
  const OpCost c = weights_update_cost(graph.param_count());
  ops.seconds[i] += update_s;
  ops.calls[i] += iters;
  ops.flops[i] += c.flops * iters;
  ops.bytes[i] += c.bytes * iters;
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// One pass: warm-up + timed iterations on a fresh network through the training loop. Appends to
// `t` (profiled pass: only profiled_iter and the operator sums). Collective: a set-up error on any
// rank fails the point on every rank (PointFailure); the loop agrees on errors every iteration, so
// every rank returns the same kind of error after the same iteration.
PointError run_pass(const MeasuredPoint& point, Backend& backend, const Graph& graph, MPI_Comm comm, bool profiled,
                    long pass, long passes, RankTimes& t) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const ModelPoint& mp = point.mp;
  const bool train = mp.mode == Mode::Train;
  std::unique_ptr<Network> net;
  std::unique_ptr<SyntheticData> data;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<PinnedBatches> pinned;
  PointError setup;
  try {
    NetworkOptions nopt = network_options(mp, mp.batch, mp.mode);
    nopt.profile_ops = profiled;
    net = std::make_unique<Network>(backend, graph, nopt);
    t.activations = net->activation_memory();
    // Generated before timing.
    data = std::make_unique<SyntheticData>(mp.sample, mp.classes, mp.batch, rank_data_seed(mp.seed, rank));
    pinned = std::make_unique<PinnedBatches>(backend, *data, mp);
    if (train) optimizer = std::make_unique<Optimizer>(backend, net->param_count(), mp.optimizer);
  } catch (const std::exception& e) {
    setup = PointError::from(e);
  }
  agree_on_failure(comm, setup);
  std::optional<LocalUpdate> sync;
  if (train) sync.emplace(*optimizer);
  LoopSettings settings{mp.mode, mp.warmup, mp.iters, true, comm, true};
  // --min-time decides the first pass's count; the repeats and the profiled pass run as many
  // (run_point), so that every pass's series has the same length.
  if (pass == 0) settings.min_time = mp.min_time;
  TrainingLoop loop(backend, settings, sync ? &*sync : nullptr);
  const long per_pass = mp.warmup + mp.iters;
  PassObserver observer(*net, backend, profiled, pass * per_pass, passes * per_pass, mp.batch * double(size), rank == 0);
  const PointError error = loop.run(
      *net, [&](int k) { return BatchView{data->images(k), data->labels(k), mp.batch}; }, &observer);
  if (!error.none()) return error;
  const PhaseSeries& s = loop.series();
  if (profiled) {
    t.profiled_iter = s.iter;
    add_profile(t.ops, *net, graph, mp.batch, mp.iters, sum_of(s.update), train);
  } else {
    append_series(t.phases, s);
    observer.finish(t, sum_of(s.iter));
  }
  return {};
}

// The measured peak of the point's precision on its ranks' threads (rank 0's cores, times the
// ranks: each rank is taken to have cores of its own), after the timed passes.
void set_precision_peak(Record& r, Precision p, int threads, int ranks) {
  const double peak = peak_for(p, threads) * ranks;
  if (peak <= 0) return;
  r.set("peak_gflops", peak);
  r.set("peak_fraction", r.number("gflops").value_or(0) / peak);
}

// Throughput of each repeat from the gathered [ranks][repeats * iters] iteration times.
std::vector<double> repeat_throughputs(const Array& iter, long repeats, long iters, double images) {
  const std::vector<double> slowest = max_over_ranks(iter);
  std::vector<double> out;
  for (long r = 0; r < repeats; ++r) {
    const std::vector<double> part(slowest.begin() + r * iters, slowest.begin() + (r + 1) * iters);
    const double mean = compute_stats(part).mean;
    out.push_back(mean > 0 ? images / mean : 0.0);
  }
  return out;
}

// "other": what the slowest rank's iteration spent outside the phases (median).
double other_median(const PhaseArrays& a) {
  std::vector<double> other;
  for (std::size_t k = 0; k < a.iter.data.size(); ++k)
    other.push_back(a.iter.data[k] - a.load.data[k] - a.forward.data[k] - a.backward.data[k] -
                    a.comm_wait.data[k] - a.update.data[k]);
  return compute_stats(other).median;
}

// Throughput, phases, FLOP rate, memory and the phase check (rank 0).
void set_timing_fields(Record& r, const PhaseArrays& phases, const Array& peak_rss, const Graph& graph,
                       const ModelPoint& mp, int ranks, double phase_gap) {
  const Stats it = set_phase_fields(r, phases);
  const double images = mp.batch * static_cast<double>(ranks);
  // Delivered: the timed images over the timed wall time; the median pace beside it.
  const double img_per_s = it.mean > 0 ? images / it.mean : 0.0;
  const double img_per_s_median = it.median > 0 ? images / it.median : 0.0;
  const bool train = mp.mode == Mode::Train;
  const double flops = static_cast<double>(train ? graph.flops_training_per_sample() : graph.flops_forward_per_sample());
  r.set("img_per_s", img_per_s);
  r.set("img_per_s_median", img_per_s_median);
  r.set("flops_per_image", flops);
  r.set("gflops", img_per_s * flops * 1e-9);  // all ranks together
  r.set("gflops_median", img_per_s_median * flops * 1e-9);
  double peak = 0;
  for (double v : peak_rss.data) peak = std::max(peak, v);
  r.set("peak_rss_mib", peak);
  r.set("other_s", other_median(phases));
  r.set("phase_gap_max", phase_gap);
  const std::int64_t misses = phase_misses(phases);
  r.set("phase_gap_iters", misses);
  const bool ok = static_cast<double>(misses) <= std::max(1.0, kPhaseMissShare * static_cast<double>(phases.iter.data.size()));
  r.set("phase_check", std::string(ok ? "ok" : "failed"));
}

// The executor's activation and gradient bytes (every rank allocates the same).
void set_activation_fields(Record& r, const ActivationMemory& m) {
  constexpr double kMiB = 1 << 20;
  r.set("planned_activation_mib", static_cast<double>(m.planned_bytes) / kMiB);
  r.set("unplanned_activation_mib", static_cast<double>(m.unplanned_bytes) / kMiB);
}

// The spread of images/s over the repeats (rank 0).
void set_repeat_fields(ResultPoint& out, const Array& iter, const MeasuredPoint& point, int ranks) {
  const std::vector<double> reps =
      repeat_throughputs(iter, point.repeats, point.mp.iters, point.mp.batch * static_cast<double>(ranks));
  const Stats rs = compute_stats(reps);
  const Interval ci = mean_confidence_95(reps);
  out.arrays.push_back(make_array("repeat_img_per_s", {reps.size()}, reps));
  Record& r = out.record;
  r.set("repeats", std::int64_t{point.repeats});
  r.set("img_per_s_rep_min", rs.min);
  r.set("img_per_s_rep_max", rs.max);
  r.set("img_per_s_rep_std", rs.stddev);
  r.set("img_per_s_ci_low", ci.low);
  r.set("img_per_s_ci_high", ci.high);
}

// Rank 0's CPU and sampled memory, averaged over the repeats.
void set_usage_fields(Record& r, const std::vector<UsageReport>& cpu) {
  if (cpu.empty()) return;
  const double n = static_cast<double>(cpu.size());
  double user = 0, sys = 0, iowait = 0, total = 0, mem_avg = 0, mem_max = 0;
  for (const UsageReport& u : cpu) {
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

// --profile ops: the profiled pass's iteration median, its overhead, and per kind the time (an
// array gathered over the ranks, added by the caller), calls, FLOPs and bytes per call (rank 0).
void set_profile_fields(ResultPoint& out, const OpSums& ops, const Array& profiled_iter, double iter_median, int iters) {
  Record& r = out.record;
  const double prof_median = slowest_rank_stats(profiled_iter).median;
  r.set("profile_iter_median_s", prof_median);
  r.set("profile_overhead", iter_median > 0 ? prof_median / iter_median - 1.0 : 0.0);
  std::string kinds;
  for (const std::string& k : ops.kinds) kinds.append(kinds.empty() ? "" : ",").append(k);
  r.set("op_kinds", kinds);
  const std::size_t nk = ops.kinds.size();
  std::vector<double> calls(nk), fl(nk), by(nk);
  for (std::size_t i = 0; i < nk; ++i) {
    calls[i] = ops.calls[i] / static_cast<double>(iters);
    fl[i] = ops.calls[i] > 0 ? ops.flops[i] / ops.calls[i] : 0.0;
    by[i] = ops.calls[i] > 0 ? ops.bytes[i] / ops.calls[i] : 0.0;
  }
  out.arrays.push_back(make_array("op_calls", {nk}, calls));
  out.arrays.push_back(make_array("op_flops", {nk}, fl));
  out.arrays.push_back(make_array("op_bytes", {nk}, by));
}

GpuFigures gpu_figures(const RankTimes& t, const MeasuredPoint& point, int ranks) {
  GpuFigures e;
  if (t.energy_j >= 0)
    e = {0.0, t.energy_j, t.energy_s, double(point.mp.batch) * point.mp.iters * double(point.repeats) * ranks};
  e.seconds = t.energy_s;
  e.used_mib = t.gpu_used_mib;
  return e;
}

// The per-rank arrays of a point, gathered to rank 0 in the file's order.
struct GatheredTimes {
  PhaseArrays phases;
  Array rss, peak_rss, profiled_iter, op_time;
  double phase_gap = 0;  // largest over ranks
};

GatheredTimes gather_times(const RankTimes& t, bool profiled, int iters, MPI_Comm comm) {
  GatheredTimes g;
  g.phases = gather_phases(t.phases, comm);
  g.rss = gather_series("rss_mib", t.rss, comm);
  g.peak_rss = gather_series("peak_rss_mib", {peak_rss_mib()}, comm);
  MPI_Reduce(&t.phases.phase_gap_max, &g.phase_gap, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (profiled) {
    g.profiled_iter = gather_series("profile_iter_time_s", t.profiled_iter, comm);
    std::vector<double> per_iter(t.ops.seconds.size());
    for (std::size_t i = 0; i < per_iter.size(); ++i) per_iter[i] = t.ops.seconds[i] / static_cast<double>(iters);
    g.op_time = gather_series("op_time_s", per_iter, comm);  // [ranks][kinds], seconds per iteration
  }
  return g;
}

ResultPoint run_point(const ModelSuite& suite, const Options& o, const SweepPoint& p, MPI_Comm comm,
                      LibraryVersions& libraries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MeasuredPoint point = measured_point(o, p, suite.mode);
  const ModelPoint& mp = point.mp;
  // The node's add and copy rates, for a simulation of this node's exchange (hpcnn-simulate):
  // measured once, on rank 0, before anything of the point is timed.
  if (rank == 0 && mp.mode == Mode::Train) node_float_rates();
  std::optional<Graph> graph;  // a model that does not fit the image size fails this point only
  std::unique_ptr<Backend> backend;
  PointError setup;
  try {
    graph.emplace(build_point_graph(mp, mp.mode == Mode::Train));
    check_point_memory(mp, *graph, {mp.batch});
  } catch (const std::exception& e) {
    setup = PointError::from(e);
  }
  agree_on_failure(comm, setup);
  // int8: the calibration pass (collective, untimed), before the backend is made with its ranges.
  if (mp.settings.precision == Precision::Int8) point.mp.settings.calibration = calibrate_on_synthetic(mp, *graph, comm);
  try {
    backend = make_point_backend(mp, libraries);
  } catch (const std::exception& e) {
    setup = PointError::from(e);
  }
  agree_on_failure(comm, setup);
  const long passes = point.repeats + (point.profile_ops ? 1 : 0);
  RankTimes t;
  for (long pass = 0; pass < passes; ++pass) {  // agree after every pass, so all ranks stop together
    agree_on_failure(comm, run_pass(point, *backend, *graph, comm, pass == point.repeats, pass, passes, t));
    // The count --min-time decided (agreed over the ranks) is the point's iters from now on.
    if (pass == 0) point.mp.iters = static_cast<int>(t.phases.iter.size());
  }

  const GatheredTimes g = gather_times(t, point.profile_ops, mp.iters, comm);
  ResultPoint out;
  g.phases.append_to(out.arrays);
  out.arrays.push_back(g.rss);
  out.arrays.push_back(g.peak_rss);
  if (point.profile_ops) {
    out.arrays.push_back(g.profiled_iter);
    out.arrays.push_back(g.op_time);
  }
  set_gpu_fields(out.record, *backend, gpu_figures(t, point, size), comm);  // collective
  if (rank != 0) return out;  // only rank 0 holds the gathered series and writes the record

  Record& r = out.record;
  set_model_fields(r, suite.program, mp, *backend, *graph, size);
  set_iteration_settings(r, mp);
  r.set("mode", std::string(mp.mode == Mode::Train ? "train" : "infer"));
  if (mp.mode == Mode::Train) {
    set_optimizer_fields(r, mp);
    r.set("node_add_gbps", node_float_rates().add_gbps);
    r.set("node_copy_gbps", node_float_rates().copy_gbps);
  }
  set_timing_fields(r, g.phases, g.peak_rss, *graph, mp, size, g.phase_gap);
  if (!backend->is_gpu()) set_precision_peak(r, mp.settings.precision, backend->threads(), size);
  set_repeat_fields(out, g.phases.iter, point, size);
  set_usage_fields(r, t.cpu);
  set_activation_fields(r, t.activations);
  r.set("profile", std::string(point.profile_ops ? "ops" : "none"));
  if (const std::string e = backend->precision_exceptions(); !e.empty()) r.set("precision_exceptions", e);
  if (point.profile_ops) set_profile_fields(out, t.ops, g.profiled_iter, r.number("iter_median_s").value_or(0), mp.iters);
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
  def.default_table = [](const Options&) { return std::string("throughput"); };
  def.validate = validate_model_names;
  def.run_point = [&suite](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs,
                      const PointPlace&) {
    return run_point(suite, o, p, comm, libs);
  };
  return run_suite(def, argc, argv);
}

}  // namespace hpcnn
