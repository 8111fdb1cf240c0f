#include "suites/scale_data.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "base/errors.hpp"
#include "data/sample_files.hpp"
#include "data/sampler.hpp"
#include "harness/resources.hpp"
#include "harness/signals.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"
#include "suites/epoch_driver.hpp"
#include "suites/evaluator.hpp"
#include "suites/file_reads.hpp"
#include "suites/scale_common.hpp"

namespace hpcnn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A point of hpcnn-scale --data, in types.
struct DataPoint {
  ScalePoint sp;  // sp.mp shaped by the data set; sp.mp.batch per worker
  int epochs = 1;
  data::Sharding sharding = data::Sharding::Shard;
  bool cache = false, shuffle = true, augment = false;
  bool cold = false;  // --storage cold: the files' pages dropped from the page cache before every epoch
  int prefetch = 0, test_batch = 1;
  double target_accuracy = -1;  // percent; < 0: none
  std::size_t steps_per_epoch = 0;
  std::size_t dropped_per_epoch = 0;  // training images no worker takes in an epoch
  long checkpoint_every = 0;          // epochs or steps; 0: no checkpoints
  bool checkpoint_steps = false;      // checkpoint_every counts steps, not epochs
  std::string checkpoint;             // the point's checkpoint file in the run's journal
  std::string reproducer;             // the point's command line: the settings a checkpoint belongs to
  std::size_t total_steps() const { return steps_per_epoch * static_cast<std::size_t>(epochs); }
  bool checkpoints() const { return checkpoint_every > 0 && !checkpoint.empty(); }
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
  p.cold = s.str("storage") == "cold";
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
  p.checkpoint_every = static_cast<long>(s.integer("checkpoint-every"));
  p.checkpoint_steps = s.str("checkpoint-unit") == "step";
  return p;
}

// One worker's timed phases of every step so far, flattened for a checkpoint (and back).
std::vector<double> pack_phases(const PhaseSeries& s) {
  std::vector<double> v;
  for (const std::vector<double>* series : {&s.iter, &s.load, &s.forward, &s.backward, &s.comm_wait, &s.update})
    v.insert(v.end(), series->begin(), series->end());
  v.push_back(s.phase_gap_max);
  return v;
}
PhaseSeries unpack_phases(const double* v, std::size_t steps) {
  PhaseSeries s;
  for (std::vector<double>* series : {&s.iter, &s.load, &s.forward, &s.backward, &s.comm_wait, &s.update}) {
    series->assign(v, v + steps);
    v += steps;
  }
  s.phase_gap_max = *v;
  return s;
}

// One worker's training, as the epoch driver's steps: the data pipeline, the network, the
// exchange as the loop's sync, and its part of the checkpoints. Constructed after the exchange,
// whose init() it calls with the (restored) weights.
class DataWorker final : public EpochSteps {
 public:
  // resume: the point's checkpoint to continue from, or nullptr.
  // storage_failed: set when this worker's data files fail, which the parameter servers' stop
  // protocol asks (ExchangeSetup::stop_signalled).
  DataWorker(const DataPoint& p, const LoadedData& data, Backend& backend, const Graph& graph,
             const GradientBuckets& buckets, Exchange& exchange, const TrainingCheckpoint* resume,
             std::atomic<bool>& storage_failed)
      : p_(p),
        data_(data),
        exchange_(exchange),
        workers_(exchange.workers()),
        allreduce_(!p.sp.scheme->parameter_server),
        files_(p.cache ? nullptr : std::make_unique<data::SampleFiles>(data.set)),
        loader_(data.set.train, data.norm, pipeline(true)),
        evaluator_(backend, graph, network_options(p.sp.mp, p.test_batch, Mode::Infer), data.set.test, data.norm,
                   pipeline(false), p.test_batch, workers_),
        net_(backend, graph, network_options(p.sp.mp, p.sp.mp.batch, Mode::Train)),
        sync_(exchange, *p.sp.scheme, buckets),
        // Every worker runs every step: exchange partners (and servers) expect them all.
        loop_(backend, {Mode::Train, 0, 0, false, MPI_COMM_NULL, false}, &sync_),
        storage_failed_(storage_failed),
        driver_(plan(), workers_, loader_, *this) {
    MPI_Comm_rank(workers_, &worker_);
    if (resume) driver_.resume(*resume);
    exchange_.init(net_.params());
  }

  // Every epoch from where the worker stands, until the end or a stop (a signal, a data file that failed).
  TrainingEnd train() { return driver_.train(); }
  const EpochDriver& driver() const { return driver_; }
  const PhaseSeries& phases() const { return phases_; }
  float last_loss() const { return loop_.last_loss(); }
  const std::string& divergence() const { return loop_.divergence(); }
  const data::SampleFiles* files() const { return files_.get(); }
  std::vector<float> params() { return net_.get_params(); }

  // This worker's data figures over the epochs this process ran, for the point's record (the
  // largest over the workers: max_over).
  struct DataFigures {
    double resident = 0;     // largest share of the files the page cache held before an epoch's reads
    double drop_s = 0;       // seconds spent dropping the files' pages (cold storage)
    double load_work_s = 0;  // mean time to read and decode a batch, waited for or not (prefetch)
    double set_bytes = 0;    // the decoded set (every worker loads it whole)
    double cache_bytes = 0;  // the loaders' caches of decoded float samples (--cache; the test set's too)
    void max_over(MPI_Comm comm) {
      double v[5] = {resident, drop_s, load_work_s, set_bytes, cache_bytes};
      MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE, MPI_MAX, comm);
      *this = {v[0], v[1], v[2], v[3], v[4]};
    }
  };
  DataFigures data_figures() const {
    return {resident_, drop_s_, made_batches_ ? made_s_ / double(made_batches_) : 0.0,
            double(data_.set.train.bytes() + data_.set.test.bytes()),
            double(loader_.cache_bytes() + evaluator_.cache_bytes())};
  }

  std::vector<std::vector<std::uint32_t>> batches(int epoch) override {
    return data::worker_batches(p_.sharding, data_.set.train.size(), p_.sp.mp.batch, worker_, p_.sp.workers,
                                p_.sp.mp.seed, static_cast<std::uint64_t>(epoch), p_.shuffle);
  }
  // A stop signal or a failed data file: allreduce schemes agree at every step boundary; parameter
  // servers have agreed when the last reply said so (Exchange::stop_agreed).
  StopCause stop_before_step(bool storage_failed) override {
    return allreduce_ ? stop_cause_anywhere(workers_, storage_failed) : StopCause::None;
  }
  void before_epoch(int epoch) override;
  void before_step() override { sync_.before_step(); }  // synchronous schemes: iterations start together
  Tally step(const data::Batch& b, double waited, std::int64_t done, EpochSeries& series) override;
  // ps-sync: every worker stopped after this step, whose state worker 0 takes from the servers
  // (ExchangeSetup::state_on_stop). ps-async workers stopped after different steps: their last
  // checkpoint (an epoch's end) stays the one to resume from.
  bool stop_after_step() override { return !allreduce_ && exchange_.stop_agreed(); }
  bool checkpoint_at_stop_after_step() override { return p_.sp.synchronous(); }
  bool diverged() const override { return !loop_.divergence().empty(); }
  bool divergence_ends_training() const override { return false; }
  Evaluation evaluate() override;
  void save_weights(TrainingCheckpoint& c) override;
  RankState rank_state() override;
  void restore(const TrainingCheckpoint& c, std::size_t rank, std::size_t ranks) override;

 private:
  data::PipelineOptions pipeline(bool training) const {
    data::PipelineOptions pipe = real_data_pipeline(p_.sp.mp, p_.cache, p_.prefetch, training && p_.augment);
    if (training) pipe.files = files_.get();
    return pipe;
  }
  EpochDriver::Plan plan() const {
    EpochDriver::Plan plan;
    plan.epochs = p_.epochs;
    plan.steps_per_epoch = p_.steps_per_epoch;
    plan.checkpoint_every = p_.checkpoint_every;
    plan.checkpoint_steps = p_.checkpoint_steps;
    plan.checkpoint = p_.checkpoint;
    plan.reproducer = p_.reproducer;
    return plan;
  }

  const DataPoint& p_;
  const LoadedData& data_;
  Exchange& exchange_;
  MPI_Comm workers_;
  int worker_ = 0;
  bool allreduce_;
  std::unique_ptr<data::SampleFiles> files_;
  data::BatchLoader loader_;
  Evaluator evaluator_;
  Network net_;
  ExchangeSync sync_;
  TrainingLoop loop_;
  PhaseSeries phases_;
  std::atomic<bool>& storage_failed_;
  double resident_ = 0, drop_s_ = 0;
  double made_s_ = 0;
  std::size_t made_batches_ = 0;
  EpochDriver driver_;
};

// Cold storage drops the files' pages before the epoch's first read; both storages measure what
// the page cache then holds. The workers of a node read the same files: none may be reading when
// another drops them, so they all meet before and after.
void DataWorker::before_epoch(int) {
  if (!files_) return;
  if (p_.cold) {
    MPI_Barrier(workers_);
    const double t0 = MPI_Wtime();
    files_->drop_pages();
    drop_s_ += MPI_Wtime() - t0;
    MPI_Barrier(workers_);
  }
  resident_ = std::max(resident_, files_->residency().fraction());
}

EpochSteps::Tally DataWorker::step(const data::Batch& b, double waited, std::int64_t, EpochSeries&) {
  if (!b.storage_error.empty()) storage_failed_ = true;  // before this step's push asks it
  StepResult r = loop_.step(net_, {b.images.data(), b.labels.data(), b.size});
  r.times.load += waited;  // the file reads and decoding (no prefetch)
  r.times.total += waited;
  phases_.add_timed(r.times);
  made_s_ += b.made_s;
  ++made_batches_;
  Tally t;
  t.load = r.times.load;
  t.sums[0] = r.local.loss * double(r.local.images);
  t.sums[1] = double(r.local.correct);
  t.sums[2] = double(r.local.images);
  return t;
}

// Worker 0's weights (asynchronous workers each hold the last weights they fetched) and its
// batch-norm statistics, on the whole test set sharded over the workers.
Evaluation DataWorker::evaluate() {
  std::vector<float> params = net_.get_params();
  MPI_Bcast(params.data(), static_cast<int>(params.size()), MPI_FLOAT, 0, workers_);
  return evaluator_.run(params, net_.get_buffers());
}

// The exchange's weights and optimizer state (from the servers for ps-*), on worker 0.
void DataWorker::save_weights(TrainingCheckpoint& c) {
  if (worker_ != 0) return;
  ExchangeState state = exchange_.checkpoint_state();
  c.params = state.weights.empty() ? net_.get_params() : std::move(state.weights);
  c.optimizer = std::move(state.optimizer);
}

// Every worker's own: batch-norm statistics, forward-pass count, timed phases, the files it read.
EpochSteps::RankState DataWorker::rank_state() {
  RankState mine;
  mine.buffers = net_.get_buffers();
  mine.net_steps = {static_cast<double>(net_.step())};
  mine.phases = pack_phases(phases_);
  if (files_) mine.file_reads[0] = double(files_->reads()), mine.file_reads[1] = double(files_->bytes());
  return mine;
}

void DataWorker::restore(const TrainingCheckpoint& c, std::size_t me, std::size_t workers) {
  const std::string& file = driver_.checkpoint_file();
  const auto steps = static_cast<std::size_t>(c.steps);
  const std::size_t buffer_count = net_.get_buffers().size(), phase_count = 6 * steps + 1;
  expect_checkpoint_size(file, "params", c.params.size(), net_.param_count());
  expect_checkpoint_size(file, "buffers", c.buffers.size(), buffer_count * workers);
  expect_checkpoint_size(file, "net_steps", c.net_steps.size(), workers);
  expect_checkpoint_size(file, "phases", c.phases.size(), phase_count * workers);
  net_.set_params(c.params);
  net_.set_buffers(std::vector<float>(c.buffers.begin() + static_cast<long>(buffer_count * me),
                                      c.buffers.begin() + static_cast<long>(buffer_count * (me + 1))));
  net_.set_step(static_cast<std::uint64_t>(c.net_steps[me]));
  phases_ = unpack_phases(c.phases.data() + phase_count * me, steps);
}

// Time to accuracy: the training time (slowest worker's epochs, evaluations excluded) at the end
// of the first epoch whose test accuracy reaches the target.
void set_target_fields(Record& r, const DataPoint& p, const EpochSeries& e) {
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

void set_data_point_fields(Record& r, const DataPoint& p, const LoadedData& data, const EpochSeries& e) {
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

void add_data_arrays(ResultPoint& out, const EpochSeries& e) {
  out.arrays.push_back(epoch_array("epoch_train_loss", e.train_loss));
  out.arrays.push_back(epoch_array("epoch_train_acc", e.train_acc));
  out.arrays.push_back(epoch_array("epoch_test_loss", e.test_loss));
  out.arrays.push_back(epoch_array("epoch_test_acc", e.test_acc));
  out.arrays.push_back(epoch_array("epoch_time_s", e.time));
  out.arrays.push_back(epoch_array("epoch_test_time_s", e.test_time));
  out.arrays.push_back(epoch_array("epoch_load_s", e.load));
  out.arrays.push_back(epoch_array("epoch_wall_s", e.wall));
}

// How the workers read their data: the storage setting and what loading cost (largest over the workers).
void set_loading_fields(Record& r, const DataPoint& p, const DataWorker::DataFigures& figures) {
  r.set("storage", std::string(p.cold ? "cold" : "warm"));
  r.set("load_work_s", figures.load_work_s);
  r.set("data_set_mib", figures.set_bytes / (1024.0 * 1024.0));
  r.set("data_cache_mib", figures.cache_bytes / (1024.0 * 1024.0));
  if (!p.cache) {
    r.set("page_cache_resident", figures.resident);
    if (p.cold) r.set("page_drop_s", figures.drop_s);
  }
}

}  // namespace

std::vector<OptionSpec> scale_data_options() {
  std::vector<OptionSpec> specs = real_data_options(
      "keep every decoded sample in memory (TensorFlow's cache); without it every batch is read from the files and "
      "decoded again (PyTorch, MXNet); gzip files are first decompressed by each worker, once per point, into $TMPDIR",
      "0");
  specs.front().default_value = "";  // --data switches to real data: no default data set here
  const std::vector<OptionSpec> mine = {
      {"epochs", OptType::Int, true, "1", "LIST", "with --data: training epochs (each value a sweep point)", {}, 1, 1e7},
      {"sharding", OptType::Choice, true, "shard", "LIST",
       "with --data: shard: each worker its disjoint shard of a shared per-epoch permutation; whole: each worker its "
       "own permutation of the whole set, 1/workers of it per epoch (the asynchronous TensorFlow workers of ref. [4])",
       "shard|whole"},
      {"storage", OptType::Choice, true, "warm", "LIST",
       "with --data, without --cache: warm: the files as the page cache holds them; cold: their pages dropped from it "
       "before every epoch, so every read goes to the storage (the data's file system, or $TMPDIR for the copies of gzip "
       "files); refused where the file system keeps its files in memory (tmpfs)",
       "warm|cold"},
      {"preset", OptType::String, false, "", "NAME",
       "framework default settings of ref. [5] as in hpcnn-train --preset (names: hpcnn-train --preset list); "
       "options given win"},
      {"target-accuracy", OptType::Float, false, "", "PERCENT",
       "with --data: record the time to accuracy, the training time until the test accuracy first reaches PERCENT",
       {}, 0, 100},
  };
  specs.insert(specs.end(), mine.begin(), mine.end());
  const std::vector<OptionSpec> checkpoints = checkpoint_options();
  specs.insert(specs.end(), checkpoints.begin(), checkpoints.end());
  return specs;
}

bool scale_wants_data(const Options& o) { return o.has("data") && !o.str("data").empty(); }

ResultPoint run_scale_data_point(const PointSettings& s, MPI_Comm comm, LibraryVersions& libraries,
                                 const LoadedData& data, const std::string& checkpoint, const std::string& reproducer) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  DataPoint p = data_point(s, comm, data.set);
  p.checkpoint = checkpoint;
  p.reproducer = reproducer;
  const ScalePoint& sp = p.sp;
  const Graph graph = build_point_graph(sp.mp, true);
  check_point_memory(sp.mp, graph, {sp.mp.batch, p.test_batch});
  std::unique_ptr<Backend> backend = make_point_backend(sp.mp, libraries);
  const GradientBuckets buckets(graph, sp.bucket_mb * 1024.0 * 1024.0);
  // A checkpoint of this point (--resume): every rank parses it; the servers need their shard.
  std::optional<TrainingCheckpoint> resume;
  if (p.checkpoints()) resume = read_training_checkpoint(p.checkpoint, p.reproducer, comm);
  ExchangeState resumed_state;
  const std::size_t done = resume ? static_cast<std::size_t>(std::max<std::int64_t>(resume->steps, 0)) : 0;
  if (done >= p.total_steps() && resume)
    throw RuntimeError(p.checkpoint + ": a checkpoint after step " + std::to_string(done) + " of a training of " +
                       std::to_string(p.total_steps()));
  // A worker's data files failed: its next push asks the parameter servers to stop (declared
  // before the exchange, which asks it).
  std::atomic<bool> storage_failed{false};
  ExchangeSetup setup = exchange_setup(sp, graph, buckets, *backend, comm);
  setup.stop_signalled = [&storage_failed] { return stop_signal() != 0 || storage_failed.load(); };
  setup.steps = static_cast<std::int64_t>(p.total_steps() - done);  // what the servers serve from here
  if (resume) {
    resumed_state.optimizer = resume->optimizer;
    setup.resume = &resumed_state;
  }
  setup.state_on_stop = p.checkpoints() && sp.scheme->parameter_server && sp.synchronous();
  std::unique_ptr<Exchange> exchange = make_exchange(*sp.scheme, setup, comm);

  WorkerTimes t;
  EpochSeries epochs;
  FileReads reads;
  std::string digest;
  DataWorker::DataFigures figures;
  int resumed_epochs = 0;
  std::string storage;  // what failed, on the workers whose files failed
  if (exchange->is_worker()) {
    DataWorker worker(p, data, *backend, graph, buckets, *exchange, resume ? &*resume : nullptr, storage_failed);
    const TrainingEnd end = worker.train();
    t.interrupted = end.signal;
    storage = end.storage;
    t.phases = worker.phases();
    t.last_loss = worker.last_loss();
    t.diverged = worker.divergence();
    epochs = worker.driver().series();
    reads = file_reads_of(worker.files());  // before its scratch copies go with it
    figures = worker.data_figures();
    figures.max_over(exchange->workers());
    reads.reads += worker.driver().file_reads_before(0);
    reads.bytes += worker.driver().file_reads_before(1);
    digest = params_digest(worker.params());
    resumed_epochs = worker.driver().resumed_epochs();
  } else {
    exchange->serve();
  }
  // A failed data file, then a stop signal, ends the point on every rank (servers included) once
  // the workers have stopped: Interrupted, with the failed file's worker speaking for the point,
  // after a checkpoint when a signal stopped it with checkpoints (the runner keeps the journal).
  agree_on_failure(comm, storage.empty() ? PointError{} : PointError{PointStatus::Interrupted, storage});
  agree_on_failure(comm, t.interrupted.empty() ? PointError{} : PointError{PointStatus::Interrupted, t.interrupted});
  reads = gather_file_reads(reads, comm);
  agree_on_failure(comm, t.diverged.empty() ? PointError{} : PointError{PointStatus::Diverged, t.diverged});

  ResultPoint out;
  PhaseArrays phases;  // [workers][steps]; world rank 0 is worker 0
  if (exchange->is_worker()) {
    phases = gather_phases(t.phases, exchange->workers());
    phases.append_to(out.arrays);
  }
  // Every step of every epoch is in the phase arrays, those before a restart included.
  ModelPoint counted = sp.mp;
  counted.iters = static_cast<int>(p.total_steps());
  counted.warmup = 0;
  // Traffic and staleness: counted by the exchange since this process started, so per step of
  // this process (gather_rank_figures divides by mp.iters).
  ModelPoint ran = counted;
  ran.iters = static_cast<int>(setup.steps);
  t.traffic_timed = exchange->traffic();
  const RankFigures f = gather_rank_figures(*exchange, t, ran, setup.steps, comm);
  exchange.reset();
  if (rank != 0) return out;

  add_data_arrays(out, epochs);
  Record& r = out.record;
  set_model_fields(r, "hpcnn-scale", sp.mp, *backend, graph, size);
  set_iteration_settings(r, counted);  // iters: the steps of the phase arrays, per worker
  set_optimizer_fields(r, sp.mp);
  set_scale_fields(out, sp, phases, f, t, setup.memory, buckets.size(), -1);
  set_data_point_fields(r, p, data, epochs);
  set_file_read_fields(r, reads, p.cache);
  set_loading_fields(r, p, figures);
  r.set("checkpoint_every", static_cast<std::int64_t>(p.checkpoint_every));
  r.set("checkpoint_unit", std::string(p.checkpoint_steps ? "step" : "epoch"));
  r.set("resumed_epochs", std::int64_t{resumed_epochs});
  r.set("resumed_steps", static_cast<std::int64_t>(done));
  r.set("params_digest", digest);
  const double flops = static_cast<double>(graph.flops_training_per_sample());
  r.set("flops_per_image", flops);
  r.set("gflops", r.number("img_per_s").value_or(0) * flops * 1e-9);
  r.set("gflops_median", r.number("img_per_s_median").value_or(0) * flops * 1e-9);
  return out;
}

}  // namespace hpcnn
