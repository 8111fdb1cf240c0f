#include "suites/scale_data.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "base/errors.hpp"
#include "data/sample_files.hpp"
#include "data/sampler.hpp"
#include "harness/resources.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"
#include "suites/evaluator.hpp"
#include "suites/scale_common.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A point of hpcnn-scale --data, in types.
struct DataPoint {
  ScalePoint sp;  // sp.mp shaped by the data set; sp.mp.batch per worker
  int epochs = 1;
  data::Sharding sharding = data::Sharding::Shard;
  bool cache = false, shuffle = true, augment = false;
  int prefetch = 0, test_batch = 1;
  double target_accuracy = -1;  // percent; < 0: none
  std::size_t steps_per_epoch = 0;
  std::size_t dropped_per_epoch = 0;  // training images no worker takes in an epoch
};

DataPoint data_point(const PointSettings& s, MPI_Comm comm, const data::DataSet& set) {
  DataPoint p;
  p.sp = scale_point(s, comm);
  const int batch = p.sp.mp.batch;  // per worker, after --scaling
  p.sp.mp = real_data_model_point(s, set, Mode::Train);
  p.sp.mp.batch = batch;
  p.epochs = static_cast<int>(s.integer("epochs"));
  p.sharding = s.str("sharding") == "whole" ? data::Sharding::Whole : data::Sharding::Shard;
  p.cache = s.flag("cache");
  p.shuffle = !s.flag("no-shuffle");
  p.augment = s.flag("augment");
  p.prefetch = static_cast<int>(s.integer("prefetch"));
  p.test_batch = s.has("test-batch") ? static_cast<int>(s.integer("test-batch")) : batch;
  if (s.has("target-accuracy")) p.target_accuracy = s.real("target-accuracy");
  const std::size_t n = set.train.size();
  p.steps_per_epoch = data::full_steps_per_epoch(n, batch, p.sp.workers);
  if (p.steps_per_epoch == 0)
    throw UsageError("--batch " + std::to_string(batch) + ": " + std::to_string(p.sp.workers) + " workers need " +
                     std::to_string(std::size_t(batch) * p.sp.workers) + " training images per step, the set has " +
                     std::to_string(n));
  p.dropped_per_epoch = n - p.steps_per_epoch * std::size_t(batch) * std::size_t(p.sp.workers);
  return p;
}

// Per epoch, over all workers.
struct EpochFigures {
  std::vector<double> train_loss, train_acc, test_loss, test_acc, time, test_time, load, wall;
};

// One worker's training: the data pipeline, the network, the exchange as the loop's sync.
class DataWorker {
 public:
  DataWorker(const DataPoint& p, const LoadedData& data, Backend& backend, const Graph& graph,
             const GradientBuckets& buckets, Exchange& exchange)
      : p_(p),
        data_(data),
        exchange_(exchange),
        workers_(exchange.workers()),
        files_(p.cache ? nullptr : std::make_unique<data::SampleFiles>(data.set)),
        loader_(data.set.train, data.norm, pipeline(true)),
        evaluator_(backend, graph, network_options(p.sp.mp, p.test_batch, Mode::Infer), data.set.test, data.norm,
                   pipeline(false), p.test_batch, workers_),
        net_(backend, graph, network_options(p.sp.mp, p.sp.mp.batch, Mode::Train)),
        sync_(exchange, buckets, p.sp.synchronous()),
        // Every worker runs every step: exchange partners (and servers) expect them all.
        loop_(backend, {Mode::Train, 0, 0, false, MPI_COMM_NULL, false}, &sync_) {
    MPI_Comm_rank(workers_, &worker_);
    exchange_.init(net_.params());
  }

  void train();
  const PhaseSeries& phases() const { return phases_; }
  const EpochFigures& epochs() const { return epochs_; }
  float last_loss() const { return loop_.last_loss(); }
  const std::string& divergence() const { return loop_.divergence(); }
  std::uint64_t file_reads() const { return files_ ? files_->reads() : 0; }
  std::uint64_t file_bytes() const { return files_ ? files_->bytes() : 0; }

 private:
  data::PipelineOptions pipeline(bool training) const {
    data::PipelineOptions pipe = real_data_pipeline(p_.sp.mp, p_.cache, p_.prefetch, training && p_.augment);
    if (training) pipe.files = files_.get();
    return pipe;
  }
  void run_epoch(int epoch);
  void evaluate();

  const DataPoint& p_;
  const LoadedData& data_;
  Exchange& exchange_;
  MPI_Comm workers_;
  int worker_ = 0;
  std::unique_ptr<data::SampleFiles> files_;
  data::BatchLoader loader_;
  Evaluator evaluator_;
  Network net_;
  ExchangeSync sync_;
  TrainingLoop loop_;
  PhaseSeries phases_;
  EpochFigures epochs_;
  double wall_ = 0;  // training time so far (slowest worker's epochs), evaluations excluded
};

void DataWorker::run_epoch(int epoch) {
  loader_.start_epoch(static_cast<std::uint64_t>(epoch),
                      data::worker_batches(p_.sharding, data_.set.train.size(), p_.sp.mp.batch, worker_,
                                           p_.sp.workers, p_.sp.mp.seed, static_cast<std::uint64_t>(epoch), p_.shuffle));
  double sums[3] = {0, 0, 0};  // loss x images, correct, images
  double seconds = 0, load = 0;
  for (std::size_t k = 0; k < p_.steps_per_epoch; ++k) {
    sync_.before_step();  // synchronous schemes: iterations start together, outside the clock
    const auto t0 = Clock::now();
    double waited = 0;
    const data::Batch b = loader_.next(&waited);  // the file reads and decoding (no prefetch)
    StepResult r = loop_.step(net_, {b.images.data(), b.labels.data(), b.size});
    r.times.load += waited;
    r.times.total += waited;
    phases_.add_timed(r.times);
    seconds += since(t0);
    load += r.times.load;
    sums[0] += r.local.loss * double(r.local.images);
    sums[1] += double(r.local.correct);
    sums[2] += double(r.local.images);
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, workers_);
  double slowest[2] = {seconds, load};
  MPI_Allreduce(MPI_IN_PLACE, slowest, 2, MPI_DOUBLE, MPI_MAX, workers_);
  wall_ += slowest[0];
  epochs_.train_loss.push_back(sums[0] / sums[2]);
  epochs_.train_acc.push_back(100.0 * sums[1] / sums[2]);
  epochs_.time.push_back(slowest[0]);
  epochs_.load.push_back(slowest[1]);
  epochs_.wall.push_back(wall_);
}

// Worker 0's weights (asynchronous workers each hold the last weights they fetched) and its
// batch-norm statistics, on the whole test set sharded over the workers.
void DataWorker::evaluate() {
  std::vector<float> params = net_.get_params();
  MPI_Bcast(params.data(), static_cast<int>(params.size()), MPI_FLOAT, 0, workers_);
  const Evaluation e = evaluator_.run(params, net_.get_buffers());
  epochs_.test_loss.push_back(e.loss);
  epochs_.test_acc.push_back(e.acc);
  epochs_.test_time.push_back(e.seconds);
}

void DataWorker::train() {
  for (int epoch = 0; epoch < p_.epochs; ++epoch) {
    run_epoch(epoch);
    if (loop_.divergence().empty()) {
      evaluate();
    } else {  // NaN weights: nothing to evaluate
      epochs_.test_loss.push_back(kNaN);
      epochs_.test_acc.push_back(kNaN);
      epochs_.test_time.push_back(0.0);
    }
  }
}

// Time to accuracy: the training time (slowest worker's epochs, evaluations excluded) at the end
// of the first epoch whose test accuracy reaches the target.
void set_target_fields(Record& r, const DataPoint& p, const EpochFigures& e) {
  if (p.target_accuracy < 0) return;
  r.set("target_accuracy", p.target_accuracy);
  for (std::size_t k = 0; k < e.test_acc.size(); ++k)
    if (e.test_acc[k] >= p.target_accuracy) {
      r.set("time_to_accuracy_s", e.wall[k]);
      r.set("epochs_to_accuracy", static_cast<std::int64_t>(k + 1));
      r.set("target_status", std::string("reached"));
      return;
    }
  double best = kNaN;
  for (double a : e.test_acc)
    if (std::isfinite(a)) best = std::isfinite(best) ? std::max(best, a) : a;
  r.set("time_to_accuracy_s", kNaN);
  char note[128];
  std::snprintf(note, sizeof note, "not reached in %zu epochs (best %.2f %%)", e.test_acc.size(), best);
  r.set("target_status", std::string(note));
}

void set_data_point_fields(Record& r, const DataPoint& p, const LoadedData& data, const EpochFigures& e) {
  set_data_set_fields(r, data);
  r.set("epochs", std::int64_t{p.epochs});
  r.set("epochs_done", static_cast<std::int64_t>(e.train_loss.size()));
  r.set("steps_per_epoch", static_cast<std::int64_t>(p.steps_per_epoch));
  r.set("steps", static_cast<std::int64_t>(p.steps_per_epoch * e.train_loss.size()));
  r.set("dropped_per_epoch", static_cast<std::int64_t>(p.dropped_per_epoch));
  r.set("sharding", std::string(p.sharding == data::Sharding::Whole ? "whole" : "shard"));
  r.set("cache", std::int64_t{p.cache ? 1 : 0});
  r.set("prefetch", std::int64_t{p.prefetch});
  r.set("augment", std::int64_t{p.augment ? 1 : 0});
  r.set("test_batch", std::int64_t{p.test_batch});
  r.set("test_eval", std::string("inference"));
  r.set("train_loss", e.train_loss.back());
  r.set("train_acc", e.train_acc.back());
  r.set("test_loss", e.test_loss.back());
  r.set("test_acc", e.test_acc.back());
  std::vector<double> times = e.time;
  r.set("epoch_s", compute_stats(times).median);
  r.set("test_s", e.test_time.back());
  r.set("train_time_s", e.wall.back());
  set_target_fields(r, p, e);
}

void add_data_arrays(ResultPoint& out, const EpochFigures& e) {
  out.arrays.push_back(epoch_array("epoch_train_loss", e.train_loss));
  out.arrays.push_back(epoch_array("epoch_train_acc", e.train_acc));
  out.arrays.push_back(epoch_array("epoch_test_loss", e.test_loss));
  out.arrays.push_back(epoch_array("epoch_test_acc", e.test_acc));
  out.arrays.push_back(epoch_array("epoch_time_s", e.time));
  out.arrays.push_back(epoch_array("epoch_test_time_s", e.test_time));
  out.arrays.push_back(epoch_array("epoch_load_s", e.load));
  out.arrays.push_back(epoch_array("epoch_wall_s", e.wall));
}

}  // namespace

std::vector<OptionSpec> scale_data_options() {
  std::vector<OptionSpec> specs = real_data_options(
      "keep every decoded sample in memory (TensorFlow's cache); without it every batch is read from the files and "
      "decoded again (PyTorch, MXNet), which needs uncompressed files",
      "0");
  specs.front().default_value = "";  // --data switches to real data: no default data set here
  const std::vector<OptionSpec> mine = {
      {"epochs", OptType::Int, true, "1", "LIST", "with --data: training epochs (each value a sweep point)", {}, 1, 1e7},
      {"sharding", OptType::Choice, true, "shard", "LIST",
       "with --data: shard: each worker its disjoint shard of a shared per-epoch permutation; whole: each worker its "
       "own permutation of the whole set, 1/workers of it per epoch (paper 003's asynchronous TensorFlow)",
       "shard|whole"},
      {"preset", OptType::String, false, "", "NAME",
       "framework default settings of paper 004 as in hpcnn-train --preset (names: hpcnn-train --preset list); "
       "options given win"},
      {"target-accuracy", OptType::Float, false, "", "PERCENT",
       "with --data: record the time to accuracy, the training time until the test accuracy first reaches PERCENT",
       {}, 0, 100},
  };
  specs.insert(specs.end(), mine.begin(), mine.end());
  return specs;
}

bool scale_wants_data(const Options& o) { return o.has("data") && !o.str("data").empty(); }

ResultPoint run_scale_data_point(const PointSettings& s, MPI_Comm comm, LibraryVersions& libraries,
                                 const LoadedData& data) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const DataPoint p = data_point(s, comm, data.set);
  const ScalePoint& sp = p.sp;
  const Graph graph = build_point_graph(sp.mp, true);
  check_point_memory(sp.mp, graph, {sp.mp.batch, p.test_batch});
  std::unique_ptr<Backend> backend = make_point_backend(sp.mp, libraries);
  const GradientBuckets buckets(graph, sp.bucket_mb * 1024.0 * 1024.0);
  ExchangeSetup setup = exchange_setup(sp, graph, buckets, *backend, comm);
  setup.steps = static_cast<std::int64_t>(p.steps_per_epoch) * p.epochs;  // what the servers serve
  // Real-data points stop between points (the suite runner), not within one: their epoch loop
  // does not end early, so the parameter servers must not be asked to end it.
  setup.stop_signalled = nullptr;
  std::unique_ptr<Exchange> exchange = make_exchange(*sp.scheme, setup, comm);

  WorkerTimes t;
  EpochFigures epochs;
  double reads[2] = {0, 0};  // file reads and bytes, summed over the workers
  if (exchange->is_worker()) {
    DataWorker worker(p, data, *backend, graph, buckets, *exchange);
    worker.train();
    t.phases = worker.phases();
    t.last_loss = worker.last_loss();
    t.diverged = worker.divergence();
    epochs = worker.epochs();
    reads[0] = static_cast<double>(worker.file_reads());
    reads[1] = static_cast<double>(worker.file_bytes());
  } else {
    exchange->serve();
  }
  MPI_Allreduce(MPI_IN_PLACE, reads, 2, MPI_DOUBLE, MPI_SUM, comm);
  agree_on_failure(comm, t.diverged.empty() ? PointError{} : PointError{PointStatus::Diverged, t.diverged});

  ResultPoint out;
  PhaseArrays phases;  // [workers][steps]; world rank 0 is worker 0
  if (exchange->is_worker()) {
    phases = gather_phases(t.phases, exchange->workers());
    phases.append_to(out.arrays);
  }
  // The workers' traffic over every step (gather_rank_figures divides by mp.iters).
  ModelPoint counted = sp.mp;
  counted.iters = static_cast<int>(setup.steps);
  counted.warmup = 0;  // every step of every epoch is in the phase arrays
  t.traffic_timed = exchange->traffic();
  const RankFigures f = gather_rank_figures(*exchange, t, counted, setup.steps, comm);
  exchange.reset();
  if (rank != 0) return out;

  add_data_arrays(out, epochs);
  Record& r = out.record;
  set_model_fields(r, "hpcnn-scale", sp.mp, *backend, graph, size);
  set_iteration_settings(r, counted);  // iters: the steps of the phase arrays, per worker
  set_optimizer_fields(r, sp.mp);
  set_scale_fields(out, sp, phases, f, t, setup.memory, buckets.size(), -1);
  set_data_point_fields(r, p, data, epochs);
  r.set("file_reads", static_cast<std::int64_t>(reads[0]));
  r.set("file_read_bytes", static_cast<std::int64_t>(reads[1]));
  const double flops = static_cast<double>(graph.flops_training_per_sample());
  r.set("flops_per_image", flops);
  r.set("gflops", r.number("img_per_s").value_or(0) * flops * 1e-9);
  return out;
}

}  // namespace hpcnn
