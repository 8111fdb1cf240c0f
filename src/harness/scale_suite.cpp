#include "harness/scale_suite.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/exchange.hpp"
#include "engine/errors.hpp"
#include "engine/network.hpp"
#include "harness/main_wrapper.hpp"
#include "harness/model_suite.hpp"
#include "harness/preflight.hpp"
#include "harness/provenance.hpp"
#include "harness/rank_series.hpp"
#include "harness/suite_runner.hpp"
#include "harness/synthetic_data.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

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
  const std::vector<OptionSpec> timing = timing_options(), output = output_options();
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

void print_list() {
  print_model_list();
  std::printf("exchange schemes (--exchange):\n");
  for (const ExchangeInfo& e : exchanges()) std::printf("  %-10s %s\n", e.name.c_str(), e.description.c_str());
}

// Names only: what --preflight needs (it reports what works instead of refusing combinations).
void validate_names(const Options& o) {
  validate_model_names(o);
  for (const std::string& e : o.values("exchange")) find_exchange(e);
}

void validate(const Options& o) {
  validate_names(o);
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
}

// Test-only fault injection: HPCNN_TEST_EXIT_AT=RANK:ITER makes that world rank leave abruptly
// (_exit, no MPI_Finalize) at the start of that iteration, as a crashed node would. The test
// (tests/scale_suite.sh) checks that the job then ends with an error instead of hanging.
void maybe_exit_for_test(int world_rank, int iteration) {
  static const char* spec = std::getenv("HPCNN_TEST_EXIT_AT");
  if (!spec) return;
  int r = -1, k = -1;
  if (std::sscanf(spec, "%d:%d", &r, &k) == 2 && r == world_rank && k == iteration) {
    std::fprintf(stderr, "hpcnn-scale: rank %d exits at iteration %d (HPCNN_TEST_EXIT_AT)\n", r, k);
    std::fflush(stderr);
    _exit(3);
  }
}

// The communication a synchronous step really exposes. Iterations start together (a barrier),
// so the worker that finishes load + forward + backward last is the step's critical path: what it
// then waits for is communication not hidden behind its backward. The others' waits also contain
// the time they wait for that slowest worker (imbalance), which is not communication. Per
// iteration: the wait of the worker with the latest backward end; the median over iterations.
// Arrays are [workers][iterations].
double exposed_comm_median(const Array& load, const Array& forward, const Array& backward, const Array& wait) {
  if (wait.dims.size() != 2 || wait.data.empty()) return 0.0;
  const std::size_t workers = wait.dims[0], n = wait.dims[1];
  std::vector<double> exposed;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t last = 0;
    double latest = -1;
    for (std::size_t w = 0; w < workers; ++w) {
      const std::size_t i = w * n + k;
      const double end = load.data[i] + forward.data[i] + backward.data[i];
      if (end > latest) {
        latest = end;
        last = w;
      }
    }
    exposed.push_back(wait.data[last * n + k]);
  }
  return compute_stats(exposed).median;
}

struct WorkerTimes {
  std::vector<double> iter, warmup, load, forward, backward, comm_wait, update;
  Traffic traffic_timed;  // bytes over the timed iterations
  double isolated_comm = -1;
  float last_loss = 0;
  std::string diverged;  // "diverged: loss nan at iteration k ...": the first non-finite loss, or empty
};

// The training loop of one worker. exchange == nullptr: a lone rank (the baseline), which applies
// the optimizer itself.
WorkerTimes train(const Options& o, const SweepPoint& p, const ModelPoint& mp, Backend& backend, const Graph& graph,
                  const GradientBuckets& buckets, Exchange* exchange, int worker_rank, bool synchronous) {
  const auto seed = static_cast<std::uint64_t>(o.integer("seed"));
  NetworkOptions nopt;
  nopt.batch = mp.batch;
  nopt.mode = Mode::Train;
  nopt.seed = seed;
  nopt.fuse_relu = mp.fuse_relu;
  Network net(backend, graph, nopt);  // same seed: every worker starts with the same weights
  SyntheticData data(mp.sample, mp.classes, mp.batch, seed + 7919ull * static_cast<std::uint64_t>(worker_rank));
  std::unique_ptr<Optimizer> local;
  if (!exchange) local = std::make_unique<Optimizer>(backend, net.param_count(), optimizer_settings(o, p));
  else exchange->init(net.params());
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);

  const int warmup = static_cast<int>(o.integer("warmup")), iters = static_cast<int>(o.integer("iters"));
  WorkerTimes t;
  Traffic before;
  auto on_bucket = [&](int b) {
    // No synchronize here: each exchange orders its reads after the backend's kernels itself
    // (nccl on the device, the others by synchronizing when the memory is the device's).
    exchange->start_bucket(b, net.params(), net.grads());
    exchange->progress();  // also advances the buckets already in flight
  };
  for (int k = 0; k < warmup + iters; ++k) {
    if (exchange) maybe_exit_for_test(world_rank, k);
    if (k == warmup && exchange) before = exchange->traffic();
    // Synchronous schemes align iterations (outside the timed region); async workers run free.
    if (exchange && synchronous) MPI_Barrier(exchange->workers());
    const auto t0 = Clock::now();
    net.set_input(data.images(k), data.labels(k));
    backend.synchronize();
    const auto t1 = Clock::now();
    const float loss = net.forward();
    backend.synchronize();
    const auto t2 = Clock::now();
    if (exchange) net.backward(&buckets, on_bucket);
    else net.backward();
    backend.synchronize();
    const auto t3 = Clock::now();
    if (exchange) exchange->wait(net.params(), net.grads());
    const auto t4 = Clock::now();
    if (exchange) exchange->update(net.params(), net.grads());
    else local->step(net.params(), net.grads());
    backend.synchronize();
    const auto t5 = Clock::now();
    // A non-finite loss is noted and the loop goes on: the other ranks (and the parameter servers)
    // expect every step's exchange, so stopping one rank here would hang them. run_point turns the
    // note into a `diverged` point on every rank together (agree_on_failure: the reason starts with
    // "diverged"), as hpcnn-train does.
    if (!std::isfinite(loss) && t.diverged.empty())
      t.diverged = std::string("diverged: loss ")
                       .append(std::to_string(loss))
                       .append(" at iteration ")
                       .append(std::to_string(k + 1))
                       .append(" (warm-up included)");
    t.last_loss = loss;
    if (k < warmup) {
      t.warmup.push_back(seconds_between(t0, t5));
      continue;
    }
    t.iter.push_back(seconds_between(t0, t5));
    t.load.push_back(seconds_between(t0, t1));
    t.forward.push_back(seconds_between(t1, t2));
    t.backward.push_back(seconds_between(t2, t3));
    t.comm_wait.push_back(seconds_between(t3, t4));
    t.update.push_back(seconds_between(t4, t5));
  }
  if (exchange) {
    const Traffic after = exchange->traffic();
    t.traffic_timed = {after.sent - before.sent, after.received - before.received};
    // The same exchange with nothing to hide behind, for the overlap figure (median of 5).
    std::vector<double> alone;
    for (int r = 0; r < 5; ++r) {
      const double s = exchange->isolated_exchange_seconds(net.grads());
      if (s < 0) break;
      alone.push_back(s);
    }
    if (!alone.empty()) t.isolated_comm = compute_stats(alone).median;
  }
  return t;
}

// Images/s of one rank alone with `batch`, measured on rank 0 (the other ranks wait).
double measure_baseline(const Options& o, const SweepPoint& p, ModelPoint mp, int batch, LibraryVersions& libraries,
                        MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double img_per_s = 0;
  if (rank == 0) {
    mp.batch = batch;
    const Graph graph = build_point_graph(mp, p, true);
    std::unique_ptr<Backend> backend = make_point_backend(mp, libraries);
    const GradientBuckets none(graph, 0);
    // A diverging baseline still times the same arithmetic; the point itself reports the divergence.
    const WorkerTimes t = train(o, p, mp, *backend, graph, none, nullptr, 0, true);
    const double median = compute_stats(t.iter).median;
    img_per_s = median > 0 ? batch / median : 0;
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

// Variable-length gather of doubles to rank 0 of comm.
std::vector<double> gather_all(const std::vector<double>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < size && rank == 0; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<double> all(static_cast<std::size_t>(total));
  MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, comm);
  return all;
}

ResultPoint run_point(const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libraries,
                      std::map<std::string, double>& baselines) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const ExchangeInfo& scheme = find_exchange(p.str("exchange"));
  const int servers = scheme.parameter_server ? static_cast<int>(o.integer("ps-servers")) : 0;
  const int workers = size - servers;
  if (workers < 1)
    throw UsageError("--ps-servers " + std::to_string(servers) + ": leaves no worker among " + std::to_string(size) + " ranks");
  ModelPoint mp = model_point(o, p);
  const bool strong = p.str("scaling") == "strong";
  const int global_batch = strong ? mp.batch : mp.batch * workers;
  if (strong && mp.batch % workers != 0)
    throw UsageError("--scaling strong: --batch " + std::to_string(mp.batch) + " does not divide over " +
                     std::to_string(workers) + " workers");
  if (strong) mp.batch /= workers;
  const int baseline_batch = strong ? global_batch : mp.batch;  // what one rank alone would run

  // Efficiency's denominator, measured once per distinct 1-rank configuration.
  double baseline = -1;
  if (o.flag("baseline") || o.has("baseline-file")) {
    const std::string key = mp.model + "/" + mp.backend + "/" + mp.dataset + "/" + std::to_string(baseline_batch) + "/" +
                            std::to_string(mp.threads) + "/" + p.str("optimizer") + "/" + p.str("act");
    auto it = baselines.find(key);
    if (it == baselines.end())
      it = baselines
               .emplace(key, o.flag("baseline") ? measure_baseline(o, p, mp, baseline_batch, libraries, comm)
                                                : read_baseline(o.str("baseline-file"), mp, baseline_batch, comm))
               .first;
    baseline = it->second;
  }

  const Graph graph = build_point_graph(mp, p, true);
  std::unique_ptr<Backend> backend = make_point_backend(mp, libraries);
  const double bucket_mb = p.real("bucket-mb");
  const GradientBuckets buckets(graph, bucket_mb * 1024.0 * 1024.0);
  ExchangeSetup setup;
  setup.world = comm;
  setup.servers = servers;
  setup.param_count = graph.param_count();
  setup.buckets = &buckets;
  setup.steps = o.integer("warmup") + o.integer("iters");
  setup.optimizer = optimizer_settings(o, p);
  setup.backend = backend.get();
  setup.memory = choose_exchange_memory(scheme, *backend);  // UsageError: nccl with a CPU backend
  // Set-up failures that are not the user's (no GPU, NCCL refusing the placement) fail the point
  // on every rank together instead of aborting the job.
  std::unique_ptr<Exchange> exchange;
  std::string error;
  try {
    exchange = scheme.make_exchange(setup);
  } catch (const UsageError&) {
    throw;  // the same on every rank (bad --ps-servers): exit 2
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_on_failure(comm, error);
  const bool synchronous = p.str("exchange") != "ps-async";

  WorkerTimes t;
  if (exchange->is_worker()) t = train(o, p, mp, *backend, graph, buckets, exchange.get(), rank, synchronous);
  else exchange->serve();
  agree_on_failure(comm, t.diverged);  // servers: empty; a diverged worker makes the point `diverged`

  ResultPoint out;
  // Per-iteration series of the workers ([workers][iters]); world rank 0 is worker 0.
  if (exchange->is_worker()) {
    MPI_Comm w = exchange->workers();
    out.arrays.push_back(gather_series("iter_time_s", "s", t.iter, w));
    out.arrays.push_back(gather_series("warmup_time_s", "s", t.warmup, w));
    out.arrays.push_back(gather_series("load_time_s", "s", t.load, w));
    out.arrays.push_back(gather_series("forward_time_s", "s", t.forward, w));
    out.arrays.push_back(gather_series("backward_time_s", "s", t.backward, w));
    out.arrays.push_back(gather_series("comm_wait_time_s", "s", t.comm_wait, w));
    out.arrays.push_back(gather_series("update_time_s", "s", t.update, w));
  }
  // Bytes per iteration of every rank (servers: over the whole run / steps).
  const Traffic total = exchange->traffic();
  const double steps = static_cast<double>(std::max<std::int64_t>(setup.steps, 1));
  const double iters = static_cast<double>(o.integer("iters"));
  std::vector<double> mine = exchange->is_worker()
                                 ? std::vector<double>{t.traffic_timed.sent / iters, t.traffic_timed.received / iters}
                                 : std::vector<double>{total.sent / steps, total.received / steps};
  std::vector<double> traffic(2 * static_cast<std::size_t>(size));
  MPI_Gather(mine.data(), 2, MPI_DOUBLE, traffic.data(), 2, MPI_DOUBLE, 0, comm);
  const std::vector<double> staleness = gather_all(exchange->staleness(), comm);
  double rss = peak_rss_mib(), max_rss = 0;
  MPI_Reduce(&rss, &max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  exchange.reset();  // collective: frees the communicators on every rank
  if (rank != 0) return out;

  Array sent{"bytes_sent_per_rank", "B", {static_cast<std::size_t>(size)}, {}};
  Array received{"bytes_received_per_rank", "B", {static_cast<std::size_t>(size)}, {}};
  for (int r = 0; r < size; ++r) {
    sent.data.push_back(traffic[2 * static_cast<std::size_t>(r)]);
    received.data.push_back(traffic[2 * static_cast<std::size_t>(r) + 1]);
  }
  out.arrays.push_back(sent);
  out.arrays.push_back(received);
  if (!staleness.empty()) out.arrays.push_back({"staleness", "", {staleness.size()}, staleness});

  Record& r = out.record;
  set_model_fields(r, "hpcnn-scale", mp, *backend, graph, o, size);
  set_optimizer_fields(r, o, p);
  r.set("mode", std::string("train"));
  r.set("exchange", scheme.name);
  r.set("exchange_memory", std::string(exchange_memory_name(setup.memory)));
  r.set("workers", std::int64_t{workers});
  r.set("ps_servers", std::int64_t{servers});
  r.set("scaling", p.str("scaling"));
  r.set("global_batch", std::int64_t{global_batch});
  r.set("bucket_mb", bucket_mb);
  r.set("buckets", static_cast<std::int64_t>(buckets.size()));
  // Aggregate throughput: global images / the iteration time of the slowest worker (median over
  // iterations of the per-iteration maximum over workers), not rank 0's rate times N.
  const Stats it = slowest_rank_stats(out.arrays[0]);
  const double img_per_s = it.median > 0 ? global_batch / it.median : 0.0;
  r.set("img_per_s", img_per_s);
  set_iteration_fields(r, it);
  r.set("load_s", slowest_rank_stats(out.arrays[2]).median);
  r.set("forward_s", slowest_rank_stats(out.arrays[3]).median);
  r.set("backward_s", slowest_rank_stats(out.arrays[4]).median);
  const double wait = slowest_rank_stats(out.arrays[5]).median;
  r.set("comm_wait_s", wait);
  r.set("update_s", slowest_rank_stats(out.arrays[6]).median);
  // Overlap = communication time hidden behind backward / total communication time, where the
  // total is the same step's exchange run alone (comm_s: every bucket started back to back and
  // waited for, median of 5, slowest worker) and the exposed part is what the step's critical path
  // still waits for after backward (comm_exposed_s, see exposed_comm_median):
  //   overlap = (comm_s - comm_exposed_s) / comm_s, clamped to [0, 1].
  // Parameter servers have no isolated exchange (their servers hold state), so no overlap there.
  if (t.isolated_comm > 0) {
    const double exposed = exposed_comm_median(out.arrays[2], out.arrays[3], out.arrays[4], out.arrays[5]);
    r.set("comm_s", t.isolated_comm);
    r.set("comm_exposed_s", exposed);
    r.set("overlap", std::clamp((t.isolated_comm - exposed) / t.isolated_comm, 0.0, 1.0));
  }
  r.set("bytes_sent", static_cast<std::int64_t>(*std::max_element(sent.data.begin(), sent.data.end())));
  r.set("bytes_received", static_cast<std::int64_t>(*std::max_element(received.data.begin(), received.data.end())));
  if (!staleness.empty()) {
    const Stats st = compute_stats(staleness);
    r.set("staleness_mean", st.mean);
    r.set("staleness_max", st.max);
  }
  if (baseline > 0) {
    r.set("baseline_img_per_s", baseline);
    r.set("linear_img_per_s", baseline * workers);
    r.set("efficiency", img_per_s / (baseline * workers));
  }
  const double flops = static_cast<double>(graph.flops_training_per_sample());
  r.set("flops_per_image", flops);
  r.set("gflops", img_per_s * flops * 1e-9);
  r.set("peak_rss_mib", max_rss);
  r.set("final_loss", static_cast<double>(t.last_loss));
  r.set("status", std::string("ok"));
  return out;
}

}  // namespace

int run_scale_suite(int argc, char** argv) {
  static const std::vector<OptionSpec> options = scale_options();
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
      "the 1-rank figure (--baseline or --baseline-file). Exchange schemes: allreduce per gradient\n"
      "bucket (mpi, ring, rhd, nccl) or a parameter server (ps-sync, ps-async on the last --ps-servers\n"
      "ranks). With a GPU backend, nccl (and mpi when the MPI is CUDA-aware) sum GPU memory directly;\n"
      "the other schemes copy each gradient bucket through host memory (exchange_memory host-staged).\n"
      "--preflight checks every rank's GPU, NCCL and CUDA-aware MPI and exits without timing.\n";
  def.options = options;
  def.live_columns = {"model", "exchange", "exchange_memory", "ranks", "workers", "batch", "global_batch", "img_per_s",
                      "efficiency", "comm_wait_s", "overlap", "iter_median_s"};
  def.print_list = print_list;
  def.validate = validate;
  def.run_point = [&](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs) {
    return run_point(o, p, comm, libs, baselines);
  };
  return run_suite(def, argc, argv);
}

}  // namespace hpcnn
