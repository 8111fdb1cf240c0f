#include "suites/scale_suite.hpp"
#include "suites/scale_common.hpp"
#include "suites/scale_data.hpp"
#include "suites/accuracy_suite.hpp"
#include "data/dataset.hpp"
#include "data/sample_files.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/exchange.hpp"
#include "collectives/float_rates.hpp"
#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "engine/network.hpp"
#include "harness/main_wrapper.hpp"
#include "harness/rank_series.hpp"
#include "harness/provenance.hpp"
#include "harness/resources.hpp"
#include "harness/signals.hpp"
#include "harness/suite_runner.hpp"
#include "harness/synthetic_data.hpp"
#include "harness/training_loop.hpp"
#include "suites/model_point.hpp"
#include "suites/preflight.hpp"
#include "kernels/registry.hpp"

namespace hpcnn {

namespace {

// Default bucket size. Progress of non-blocking MPI on a single-threaded rank happens only inside
// MPI calls, i.e. when backward reports a bucket; smaller buckets give more such points (and
// start communicating earlier) at the cost of more messages. See docs/PERFORMANCE.md.
constexpr const char* kDefaultBucketMb = "4";

std::vector<OptionSpec> scale_options() {
  std::vector<OptionSpec> specs = model_options(Mode::Train);
  const std::vector<OptionSpec> extra = {
      {"exchange", OptType::String, true, "ring", "LIST", "gradient exchange schemes (see --list)"},
      {"bucket-mb", OptType::Float, true, kDefaultBucketMb, "LIST",
       "gradient bucket size in MiB (0: one bucket with every gradient)", {}, 0, 1e6},
      {"ps-servers", OptType::Int, false, "1", "K", "parameter-server ranks (the last K) for ps-sync/ps-async", {}, 1, 1e6},
      {"exchange-precision", OptType::Choice, true, "fp32", "LIST",
       "what the gradients travel and are summed in: fp32, or bf16 (each bucket rounded to bf16 and summed in bf16, "
       "half the bytes, widened to fp32 for the update, as PyTorch DDP's bf16 compression hook; mpi, ring, rhd)",
       "fp32|bf16"},
      {"scaling", OptType::Choice, true, "weak", "LIST",
       "weak: --batch per worker; strong: --batch is the global batch, split over the workers", "weak|strong"},
      {"baseline", OptType::Flag, false, "", "",
       "measure the 1-rank figure first (rank 0 alone, same settings) for the efficiency column"},
      {"baseline-file", OptType::String, false, "", "FILE",
       "read the 1-rank figure from this result file (a ranks=1 point of the same model, backend, data set and batch)"},
      {"preflight", OptType::Flag, false, "", "",
       "check every rank (host, local rank, GPU and bus id, --backend, NCCL, CUDA-aware MPI), print one table and "
       "exit: 0 when every check that could run passed, 1 otherwise; no timing, no result file"},
  };
  specs.insert(specs.end(), extra.begin(), extra.end());
  const std::vector<OptionSpec> timing = timing_options(), output = output_options(), data = scale_data_options();
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), data.begin(), data.end());
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

void print_list() {
  print_model_list();
  std::printf("exchange schemes (--exchange):\n");
  for (const ExchangeInfo& e : exchanges()) std::printf("  %-10s %s\n", e.name.c_str(), e.description.c_str());
  print_data_sets();
}

// Names only: what --preflight needs (it reports what works instead of refusing combinations).
void validate_names(const Options& o) {
  validate_model_names(o);
  for (const std::string& e : o.values("exchange")) find_exchange(e);
}

// bf16 gradients only through the allreduce schemes that sum bf16 in host memory.
void check_exchange_precision(const Options& o) {
  const std::vector<std::string> p = o.values("exchange-precision");
  if (std::find(p.begin(), p.end(), "bf16") == p.end()) return;
  for (const std::string& e : o.values("exchange")) {
    const ExchangeInfo& scheme = find_exchange(e);
    bool sums = false;
    if (scheme.make_allreduce && scheme.access != BufferAccess::Device) {
      MPI_Comm self = MPI_COMM_NULL;
      MPI_Comm_dup(MPI_COMM_SELF, &self);
      sums = scheme.make_allreduce(self)->sums_bf16();
      MPI_Comm_free(&self);
    }
    if (!sums)
      throw SettingError("exchange_precision", "bf16", "--exchange " + e + " sums fp32 only (bf16: mpi, ring, rhd)");
  }
}

// Ranks sharing this node (and so, usually, its $TMPDIR): each worker among them keeps its own
// decompressed copies.
int ranks_on_this_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int size = 1;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

// Cold reads need files whose pages can leave memory, on every node (each has its own page cache
// and $TMPDIR): one verdict for all ranks, with the first failing rank's reason. One rank per node
// probes, after every rank has arrived: a second rank of the node reading the files meanwhile
// would bring the dropped pages back and fail the probe.
void check_cold_storage_everywhere(const data::DataSet& set) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  MPI_Barrier(MPI_COMM_WORLD);
  std::string why;
  try {
    if (node_rank == 0) data::SampleFiles::check_cold_storage(set);
  } catch (const RuntimeError& e) {
    why = e.what();
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int first = why.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size) return;
  int length = static_cast<int>(why.size());
  MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
  why.resize(static_cast<std::size_t>(length));
  MPI_Bcast(why.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
  throw UsageError("--storage cold: " + why);
}

void validate(const Options& o) {
  validate_names(o);
  check_exchange_precision(o);
  // A GPU-only scheme with a CPU backend fails before any point runs (run_point checks again
  // through choose_exchange_memory). A backend that cannot be created here fails in its point.
  for (const std::string& e : o.values("exchange")) {
    const ExchangeInfo& scheme = find_exchange(e);
    if (scheme.access != BufferAccess::Device) continue;
    for (const std::string& b : o.values("backend")) {
      std::unique_ptr<Backend> backend;
      try {
        backend = make_backend(b);
      } catch (const std::exception&) {
        continue;
      }
      choose_exchange_memory(scheme, *backend);
    }
  }
  if (o.flag("baseline") && o.has("baseline-file"))
    throw UsageError("--baseline and --baseline-file: give one of them");
  if (o.real("min-time") > 0) {
    // The parameter servers serve an agreed number of steps, set before the first: they cannot
    // follow workers that go on until a time is reached.
    for (const std::string& e : o.values("exchange"))
      if (find_exchange(e).parameter_server)
        throw UsageError("--min-time with --exchange " + e + ": parameter servers serve a fixed number of steps (--iters)");
    if (scale_wants_data(o)) throw UsageError("--min-time: --data points train for --epochs, not for a time");
  }
  if (scale_wants_data(o)) {
    // A missing data set is a usage error before any work; so is scratch space too small for every
    // rank of this node to decompress gzip files it reads samples from (without --cache).
    const data::DataSet set = data::locate_dataset(o.str("data"));
    if (!o.flag("cache")) data::SampleFiles::check_scratch_space(set, ranks_on_this_node());
    // Cold reads: from files whose pages can leave memory, and only where there are reads per batch.
    const std::vector<std::string> storages = o.values("storage");
    if (std::find(storages.begin(), storages.end(), "cold") != storages.end()) {
      if (o.flag("cache"))
        throw UsageError("--storage cold with --cache: a cached point reads the files once, before training; cold "
                         "storage is for reading every batch from the files");
      check_cold_storage_everywhere(set);
    }
    if (o.flag("baseline") || o.has("baseline-file"))
      throw UsageError("--data: the efficiency baseline (--baseline, --baseline-file) is for synthetic batches");
    // Asynchronous workers (ps-async) are at different steps within an epoch: only an epoch's end
    // (every worker done with it) is a state to continue from.
    const std::vector<std::string> schemes = o.values("exchange");
    if (o.integer("checkpoint-every") > 0 && o.str("checkpoint-unit") == "step" &&
        std::any_of(schemes.begin(), schemes.end(), [](const std::string& s) { return find_exchange(s).asynchronous; }))
      throw UsageError("--checkpoint-unit step: ps-async workers are at different steps within an epoch; use epoch");
  } else if (o.integer("checkpoint-every") > 0) {
    throw UsageError("--checkpoint-every " + std::to_string(o.integer("checkpoint-every")) +
                     ": training checkpoints are for --data points (synthetic points are resumed whole by --resume)");
  }
}

// Test-only: HPCNN_TEST_EXIT_AT (base/fault_injection.hpp): a rank that leaves abruptly, as a
// crashed node would; tests/scale_suite.sh checks that the job then ends with an error.
void maybe_exit_for_test(int world_rank, int iteration) { inject_exit_at("hpcnn-scale", world_rank, iteration); }


// The backward phase less the exchange's calls during it: per iteration the slowest worker's, the
// median over the iterations (as backward_s is taken from backward_time_s).
double backward_compute_median(const Array& backward, const Array& in_exchange) {
  Array compute = backward;
  for (std::size_t i = 0; i < compute.data.size() && i < in_exchange.data.size(); ++i)
    compute.data[i] = std::max(0.0, compute.data[i] - in_exchange.data[i]);
  return slowest_rank_stats(compute).median;
}

// Fault injection before each iteration; the traffic counters when the timed iterations start;
// the exchange's share of every timed iteration's backward phase.
class WorkerObserver : public LoopObserver {
 public:
  WorkerObserver(Exchange* exchange, const ExchangeSync* sync) : exchange_(exchange), sync_(sync) {
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  }
  void before_iteration(int k) override {
    if (exchange_) maybe_exit_for_test(world_rank_, k);
  }
  void timed_start() override {
    timed_ = true;
    if (exchange_) before_ = exchange_->traffic();
  }
  void after_iteration(int /*k*/, const StepResult& /*r*/) override {
    if (timed_ && sync_) in_backward_.push_back(sync_->in_backward_seconds());
  }
  Traffic before() const { return before_; }
  const std::vector<double>& exchange_in_backward() const { return in_backward_; }

 private:
  Exchange* exchange_;
  const ExchangeSync* sync_;
  int world_rank_ = 0;
  bool timed_ = false;
  Traffic before_;
  std::vector<double> in_backward_;
};

// The same exchange with nothing to hide behind, for the overlap figure (median of 5).
double isolated_comm_seconds(Exchange& exchange, Network& net) {
  std::vector<double> alone;
  for (int r = 0; r < 5; ++r) {
    const double s = exchange.isolated_exchange_seconds(net.grads());
    if (s < 0) break;
    alone.push_back(s);
  }
  return alone.empty() ? -1 : compute_stats(alone).median;
}

// One worker's training through the training loop. exchange == nullptr: a lone rank (the
// baseline), which applies the optimizer itself. A non-finite loss is noted and the loop goes on:
// the other ranks (and the parameter servers) expect every step's exchange, so stopping one rank
// would hang them; run_point turns the note into a `diverged` point on every rank together.
WorkerTimes train(const ScalePoint& sp, Backend& backend, const Graph& graph, const GradientBuckets& buckets,
                  Exchange* exchange, int worker_rank) {
  const ModelPoint& mp = sp.mp;
  Network net(backend, graph, network_options(mp, mp.batch, Mode::Train));  // same weights on every worker
  const SyntheticData data(mp.sample, mp.classes, mp.batch, rank_data_seed(mp.seed, worker_rank));
  std::unique_ptr<Optimizer> local;
  std::unique_ptr<GradientSync> sync;
  const ExchangeSync* exchange_sync = nullptr;
  if (exchange) {
    exchange->init(net.params());
    auto s = std::make_unique<ExchangeSync>(*exchange, *sp.scheme, buckets);
    exchange_sync = s.get();
    sync = std::move(s);
  } else {
    local = std::make_unique<Optimizer>(backend, net.param_count(), mp.optimizer);
    sync = std::make_unique<LocalUpdate>(*local);
  }
  // A stop signal ends the loop at the next iteration on every worker together: allreduce schemes
  // (all ranks are workers) agree on it at each iteration; with parameter servers, which expect
  // an agreed number of steps, the first server decides and each worker learns it from its
  // weights (Exchange::stop_agreed): after the same step (ps-sync) or its next one (ps-async).
  const bool all_workers = exchange && !sp.scheme->parameter_server;
  LoopSettings settings{Mode::Train, mp.warmup, mp.iters, false, all_workers ? exchange->workers() : MPI_COMM_NULL,
                        all_workers};
  settings.min_time = mp.min_time;  // validate(): never with parameter servers
  TrainingLoop loop(backend, settings, sync.get());
  WorkerObserver observer(exchange, exchange_sync);
  const PointError error =
      loop.run(net, [&](int k) { return BatchView{data.images(k), data.labels(k), mp.batch}; }, &observer);
  if (error.status == PointStatus::Interrupted) {
    WorkerTimes stopped;
    stopped.interrupted = error.reason;
    return stopped;
  }
  if (!error.none()) throw RuntimeError(error.reason);  // not the user's data: ends the job
  WorkerTimes t;
  t.phases = loop.series();
  t.exchange_in_backward = observer.exchange_in_backward();
  t.last_loss = loop.last_loss();
  t.diverged = loop.divergence();
  if (exchange) {
    const Traffic after = exchange->traffic(), before = observer.before();
    t.traffic_timed = {after.sent - before.sent, after.received - before.received};
    t.isolated_comm = isolated_comm_seconds(*exchange, net);
  }
  return t;
}

// Images/s of one rank alone with the baseline batch, measured on rank 0 (the other ranks wait).
double measure_baseline(ScalePoint sp, LibraryVersions& libraries, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double img_per_s = 0;
  if (rank == 0) {
    sp.mp.batch = sp.baseline_batch;
    const Graph graph = build_point_graph(sp.mp, true);
    std::unique_ptr<Backend> backend = make_point_backend(sp.mp, libraries);
    const GradientBuckets none(graph, 0);
    // A diverging baseline still times the same arithmetic; the point itself reports the divergence.
    const WorkerTimes t = train(sp, *backend, graph, none, nullptr, 0);
    const double mean = compute_stats(t.phases.iter).mean;  // delivered, as the points' img_per_s
    img_per_s = mean > 0 ? sp.baseline_batch / mean : 0;
  }
  MPI_Bcast(&img_per_s, 1, MPI_DOUBLE, 0, comm);
  return img_per_s;
}

// The 1-rank figure from a result file: the last point with ranks == 1 and the same model, backend,
// data set and batch. Rank 0 reads; throws RuntimeError naming the file when there is none.
double read_baseline(const std::string& path, const ModelPoint& mp, int batch, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double img_per_s = -1;
  std::string error;
  if (rank == 0) {
    try {
      for (const ResultPoint& pt : read_result_file(path).points) {
        const Record& r = pt.record;
        if (r.number("ranks").value_or(0) == 1 && r.text("model") == mp.model && r.text("backend") == mp.backend &&
            r.text("dataset") == mp.dataset && r.number("batch").value_or(0) == batch && r.number("img_per_s"))
          img_per_s = *r.number("img_per_s");
      }
      if (img_per_s < 0)
        error = path + ": no 1-rank point of " + mp.model + "/" + mp.backend + "/" + mp.dataset + " with batch " +
                std::to_string(batch);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) throw RuntimeError("--baseline-file: " + (rank == 0 ? error : std::string("unreadable")));
  MPI_Bcast(&img_per_s, 1, MPI_DOUBLE, 0, comm);
  return img_per_s;
}

// Efficiency's denominator, measured (or read) once per distinct 1-rank configuration; -1 without one.
double baseline_for(const ScalePoint& sp, std::map<std::string, double>& baselines, LibraryVersions& libraries,
                    MPI_Comm comm) {
  if (!sp.measure_baseline && sp.baseline_file.empty()) return -1;
  const ModelPoint& mp = sp.mp;
  const std::string key = mp.model + "/" + mp.backend + "/" + mp.dataset + "/" + std::to_string(sp.baseline_batch) +
                          "/" + std::to_string(mp.threads) + "/" + mp.optimizer.kind + "/" + activation_name(mp.act);
  auto it = baselines.find(key);
  if (it == baselines.end())
    it = baselines
             .emplace(key, sp.measure_baseline ? measure_baseline(sp, libraries, comm)
                                               : read_baseline(sp.baseline_file, mp, sp.baseline_batch, comm))
             .first;
  return it->second;
}


ResultPoint run_point(ScalePoint sp, MPI_Comm comm, LibraryVersions& libraries,
                      std::map<std::string, double>& baselines) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const double baseline = baseline_for(sp, baselines, libraries, comm);
  if (rank == 0) node_float_rates();  // measured once, before the point's timing (recorded below)
  const Graph graph = build_point_graph(sp.mp, true);
  std::unique_ptr<Backend> backend = make_point_backend(sp.mp, libraries);
  const GradientBuckets buckets(graph, sp.bucket_mb * 1024.0 * 1024.0);
  const ExchangeSetup setup = exchange_setup(sp, graph, buckets, *backend, comm);
  std::unique_ptr<Exchange> exchange = make_exchange(*sp.scheme, setup, comm);

  WorkerTimes t;
  if (exchange->is_worker()) t = train(sp, *backend, graph, buckets, exchange.get(), rank);
  else exchange->serve();
  if (!t.interrupted.empty()) agree_on_failure(comm, {PointStatus::Interrupted, t.interrupted});
  // --min-time: the timed steps that ran (the same on every worker: they agree every step; without
  // it, and on parameter servers, --iters).
  if (exchange->is_worker() && sp.mp.min_time > 0) sp.mp.iters = static_cast<int>(t.phases.iter.size());
  // Servers have none; a diverged worker makes the point `diverged` on every rank.
  agree_on_failure(comm, t.diverged.empty() ? PointError{} : PointError{PointStatus::Diverged, t.diverged});

  ResultPoint out;
  PhaseArrays phases;  // per-iteration series of the workers ([workers][iters]); world rank 0 is worker 0
  Array in_backward;  // [workers][iters]: the exchange's share of each backward phase
  if (exchange->is_worker()) {
    phases = gather_phases(t.phases, exchange->workers());
    phases.append_to(out.arrays);
    in_backward = gather_series("exchange_in_backward_time_s", t.exchange_in_backward, exchange->workers());
    out.arrays.push_back(in_backward);
  }
  const RankFigures f = gather_rank_figures(*exchange, t, sp.mp, setup.steps, comm);
  exchange.reset();  // collective: frees the communicators on every rank
  if (rank != 0) return out;

  Record& r = out.record;
  set_model_fields(r, "hpcnn-scale", sp.mp, *backend, graph, size);
  set_iteration_settings(r, sp.mp);
  set_optimizer_fields(r, sp.mp);
  set_scale_fields(out, sp, phases, f, t, setup.memory, buckets.size(), baseline);
  r.set("backward_compute_s", backward_compute_median(phases.backward, in_backward));
  r.set("node_add_gbps", node_float_rates().add_gbps);
  r.set("node_copy_gbps", node_float_rates().copy_gbps);
  const double flops = static_cast<double>(graph.flops_training_per_sample());
  r.set("flops_per_image", flops);
  r.set("gflops", r.number("img_per_s").value_or(0) * flops * 1e-9);
  r.set("gflops_median", r.number("img_per_s_median").value_or(0) * flops * 1e-9);
  return out;
}

}  // namespace

int run_scale_suite(int argc, char** argv) {
  static const std::vector<OptionSpec> options = scale_options();
  // --preset NAME: hpcnn-train's framework settings (with --data among them), options given win.
  std::vector<std::string> args = expand_accuracy_args(std::vector<std::string>(argv, argv + argc));
  std::vector<char*> expanded;
  for (std::string& a : args) expanded.push_back(a.data());
  expanded.push_back(nullptr);
  argc = static_cast<int>(args.size());
  argv = expanded.data();
  {
    // --preflight answers before the suite runner opens a result file or runs any point.
    const Options o = parse_options(options, argc, argv);
    if (o.flag("preflight") && !o.flag("help") && !o.flag("version") && !o.flag("list")) {
      validate_names(o);
      return run_preflight(o, MPI_COMM_WORLD);
    }
  }
  std::map<std::string, double> baselines;
  SuiteDef def;
  def.program = "hpcnn-scale";
  def.summary =
      "Data-parallel training over the MPI ranks it is launched with: per worker and iteration load,\n"
      "forward, backward, communication wait and update; bytes per rank; aggregate images/s (global\n"
      "images / slowest worker's time); overlap of communication with backward; efficiency against\n"
      "the 1-rank figure (--baseline or --baseline-file). Exchange schemes (--list): an allreduce per\n"
      "gradient bucket, or a parameter server on the last --ps-servers ranks. With a GPU backend, nccl (and mpi when the MPI is CUDA-aware) sum GPU memory directly;\n"
      "the other schemes copy each gradient bucket through host memory (exchange_memory host-staged).\n"
      "--preflight checks every rank's GPU, NCCL and CUDA-aware MPI and exits without timing.\n"
      "--data DIR|NAME trains on a real data set for --epochs (shards or the whole set per worker, cached\n"
      "or read from the files every batch) with the test accuracy after every epoch and the time to\n"
      "--target-accuracy.\n";
  def.options = options;
  def.live_columns = {"model", "exchange", "exchange_memory", "ranks", "workers", "batch", "global_batch", "img_per_s",
                      "efficiency", "comm_wait_s", "overlap", "iter_median_s"};
  def.print_list = print_list;
  def.default_table = [](const Options& o) { return std::string(scale_wants_data(o) ? "e8" : "scaling"); };
  def.validate = validate;
  std::unique_ptr<LoadedData> loaded;  // --data: read once, shared by every point
  def.run_point = [&](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs,
                      const PointPlace& place) {
    if (scale_wants_data(o)) {
      if (!loaded) loaded = load_real_data(o);
      return run_scale_data_point(PointSettings(o, p), comm, libs, *loaded, place.checkpoint,
                                  point_reproducer(def.program, o, p));
    }
    return run_point(scale_point(PointSettings(o, p), comm), comm, libs, baselines);
  };
  return run_suite(def, argc, argv);
}

}  // namespace hpcnn
