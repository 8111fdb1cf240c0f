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
#include "harness/checkpoint.hpp"
#include "harness/resources.hpp"
#include "harness/signals.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"
#include "suites/evaluator.hpp"
#include "suites/file_reads.hpp"
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

// Where a worker stands: the epoch in progress, its steps done, and what this worker gathered in
// it so far. With the weights, the exchange's state and the series, what a checkpoint needs to
// continue mid-epoch.
struct EpochPosition {
  int epoch = 0;
  std::size_t step = 0;           // steps of this epoch done
  double sums[3] = {0, 0, 0};     // this worker's loss x images, correct, images
  double seconds = 0, load = 0;   // this worker's step time and load time in this epoch
  static constexpr int kFields = 5;
  std::vector<double> packed() const { return {sums[0], sums[1], sums[2], seconds, load}; }
  void unpack(const double* v) {
    std::copy(v, v + 3, sums);
    seconds = v[3];
    load = v[4];
  }
};

// Per epoch, over all workers (the same on every worker).
struct EpochFigures {
  std::vector<double> train_loss, train_acc, test_loss, test_acc, time, test_time, load, wall;
  // Every series by name, for a checkpoint.
  std::vector<std::pair<const char*, std::vector<double>*>> named() {
    return {{"train_loss", &train_loss}, {"train_acc", &train_acc}, {"test_loss", &test_loss},
            {"test_acc", &test_acc},     {"epoch_time", &time},      {"test_time", &test_time},
            {"epoch_load", &load},       {"wall", &wall}};
  }
};

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

// One worker's training: the data pipeline, the network, the exchange as the loop's sync, and its
// checkpoints. Constructed after the exchange, whose init() it calls with the (restored) weights.
class DataWorker {
 public:
  // resume: the point's checkpoint to continue from, or nullptr.
  DataWorker(const DataPoint& p, const LoadedData& data, Backend& backend, const Graph& graph,
             const GradientBuckets& buckets, Exchange& exchange, const Checkpoint* resume)
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
        sync_(exchange, buckets, p.sp.synchronous()),
        // Every worker runs every step: exchange partners (and servers) expect them all.
        loop_(backend, {Mode::Train, 0, 0, false, MPI_COMM_NULL, false}, &sync_) {
    MPI_Comm_rank(workers_, &worker_);
    if (resume) restore(*resume);
    exchange_.init(net_.params());
  }

  // Every epoch from where the worker stands. Returns why a stop signal ended it (the point is
  // then Interrupted, after a checkpoint when there are checkpoints), or "" when it finished.
  std::string train();
  const PhaseSeries& phases() const { return phases_; }
  const EpochFigures& epochs() const { return epochs_; }
  float last_loss() const { return loop_.last_loss(); }
  const std::string& divergence() const { return loop_.divergence(); }
  const data::SampleFiles* files() const { return files_.get(); }
  // Worker 0: the files' reads and bytes of every worker before a restart (0 elsewhere).
  double reads_before(int k) const { return static_cast<double>(reads_before_[k]); }
  std::vector<float> params() { return net_.get_params(); }
  int resumed_epochs() const { return resumed_epochs_; }

 private:
  data::PipelineOptions pipeline(bool training) const {
    data::PipelineOptions pipe = real_data_pipeline(p_.sp.mp, p_.cache, p_.prefetch, training && p_.augment);
    if (training) pipe.files = files_.get();
    return pipe;
  }
  // The rest of the epoch from `at`; false when a stop signal ended it.
  bool run_epoch(EpochPosition& at);
  void finish_epoch(const EpochPosition& at);
  void evaluate();
  // A stop signal: allreduce schemes agree at every step boundary; parameter servers have agreed
  // when the last reply said so (Exchange::stop_agreed).
  bool stop_before_step() { return allreduce_ && stop_requested_anywhere(workers_); }
  bool stop_after_step() const { return !allreduce_ && exchange_.stop_agreed() && steps_ < p_.total_steps(); }
  bool checkpoint_due_after_step() const {
    return p_.checkpoints() && p_.checkpoint_steps && steps_ % static_cast<std::size_t>(p_.checkpoint_every) == 0 &&
           steps_ < p_.total_steps() && loop_.divergence().empty();
  }
  void save_checkpoint(const EpochPosition& at);
  void restore(const Checkpoint& c);

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
  EpochFigures epochs_;
  EpochPosition start_;              // where train() begins: restored, or the start
  std::size_t steps_ = 0;            // this worker's steps over all epochs
  double wall_ = 0;                  // training time so far (slowest worker's epochs), evaluations excluded
  std::uint64_t reads_before_[2] = {0, 0};  // worker 0: the files' reads and bytes of every worker before a restart
  int resumed_epochs_ = 0;
};

bool DataWorker::run_epoch(EpochPosition& at) {
  auto batches = data::worker_batches(p_.sharding, data_.set.train.size(), p_.sp.mp.batch, worker_, p_.sp.workers,
                                      p_.sp.mp.seed, static_cast<std::uint64_t>(at.epoch), p_.shuffle);
  // Order and augmentation are functions of (seed, epoch, sample): after a restart the rest of
  // the epoch is the same batches.
  batches.erase(batches.begin(), batches.begin() + static_cast<long>(std::min(at.step, batches.size())));
  loader_.start_epoch(static_cast<std::uint64_t>(at.epoch), std::move(batches));
  for (; at.step < p_.steps_per_epoch; ++at.step) {
    if (stop_before_step()) {  // every worker together, before this step: a checkpoint of it
      if (p_.checkpoints()) save_checkpoint(at);
      return false;
    }
    sync_.before_step();  // synchronous schemes: iterations start together, outside the clock
    const auto t0 = Clock::now();
    double waited = 0;
    const data::Batch b = loader_.next(&waited);  // the file reads and decoding (no prefetch)
    StepResult r = loop_.step(net_, {b.images.data(), b.labels.data(), b.size});
    r.times.load += waited;
    r.times.total += waited;
    phases_.add_timed(r.times);
    at.seconds += since(t0);
    at.load += r.times.load;
    at.sums[0] += r.local.loss * double(r.local.images);
    at.sums[1] += double(r.local.correct);
    at.sums[2] += double(r.local.images);
    ++steps_;
    if (stop_after_step()) {
      // ps-sync: every worker stopped after this step, whose state worker 0 took from the servers
      // (ExchangeSetup::state_on_stop). ps-async workers stopped after different steps: their
      // last checkpoint (an epoch's end) stays the one to resume from.
      EpochPosition next = at;
      ++next.step;
      if (p_.checkpoints() && p_.sp.synchronous()) save_checkpoint(next);
      return false;
    }
    if (checkpoint_due_after_step()) {
      EpochPosition next = at;
      ++next.step;
      save_checkpoint(next);
    }
  }
  return true;
}

void DataWorker::finish_epoch(const EpochPosition& at) {
  double sums[3] = {at.sums[0], at.sums[1], at.sums[2]};
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, workers_);
  double slowest[2] = {at.seconds, at.load};
  MPI_Allreduce(MPI_IN_PLACE, slowest, 2, MPI_DOUBLE, MPI_MAX, workers_);
  wall_ += slowest[0];
  epochs_.train_loss.push_back(sums[0] / sums[2]);
  epochs_.train_acc.push_back(100.0 * sums[1] / sums[2]);
  epochs_.time.push_back(slowest[0]);
  epochs_.load.push_back(slowest[1]);
  epochs_.wall.push_back(wall_);
  if (loop_.divergence().empty()) {
    evaluate();
  } else {  // NaN weights: nothing to evaluate
    epochs_.test_loss.push_back(kNaN);
    epochs_.test_acc.push_back(kNaN);
    epochs_.test_time.push_back(0.0);
  }
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

std::string DataWorker::train() {
  for (EpochPosition at = start_; at.epoch < p_.epochs; at = EpochPosition{at.epoch + 1}) {
    if (!run_epoch(at))
      return "interrupted by a signal at step " + std::to_string(steps_) + " (epoch " + std::to_string(at.epoch + 1) +
             ")";
    finish_epoch(at);
    const int done = at.epoch + 1;
    if (p_.checkpoints() && !p_.checkpoint_steps && done % p_.checkpoint_every == 0 && done < p_.epochs &&
        loop_.divergence().empty())
      save_checkpoint(EpochPosition{done});
  }
  return "";
}

// Worker 0 writes what every rank needs to continue: the weights, the exchange's optimizer state
// (from the servers for ps-*), the epoch series (the same on every worker), and every worker's own
// batch-norm statistics, forward-pass count, position in the epoch and phase series. Collective
// over the workers; no worker starts another step before worker 0 has the servers' state.
void DataWorker::save_checkpoint(const EpochPosition& at) {
  ExchangeState state;
  if (worker_ == 0) state = exchange_.checkpoint_state();
  const auto gather = [&](std::vector<double> mine) {
    std::vector<double> all(worker_ == 0 ? mine.size() * static_cast<std::size_t>(p_.sp.workers) : 0);
    MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
               MPI_DOUBLE, 0, workers_);
    return all;
  };
  const std::vector<float> buffers = net_.get_buffers();
  std::vector<float> all_buffers(worker_ == 0 ? buffers.size() * static_cast<std::size_t>(p_.sp.workers) : 0);
  MPI_Gather(buffers.data(), static_cast<int>(buffers.size()), MPI_FLOAT, all_buffers.data(),
             static_cast<int>(buffers.size()), MPI_FLOAT, 0, workers_);
  std::vector<double> positions = gather(at.packed());
  std::vector<double> phases = gather(pack_phases(phases_));
  std::vector<double> passes = gather({static_cast<double>(net_.step())});
  double reads[2] = {files_ ? double(files_->reads()) : 0.0, files_ ? double(files_->bytes()) : 0.0};
  MPI_Reduce(worker_ == 0 ? MPI_IN_PLACE : reads, reads, 2, MPI_DOUBLE, MPI_SUM, 0, workers_);
  if (worker_ == 0) {
    int ranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    Checkpoint c;
    c.put("ranks", std::int64_t{ranks});
    c.put("epoch", std::int64_t{at.epoch});
    c.put("epoch_step", static_cast<std::int64_t>(at.step));
    c.put("steps", static_cast<std::int64_t>(steps_));
    c.put("params", state.weights.empty() ? net_.get_params() : state.weights);
    c.put("buffers", std::move(all_buffers));
    c.put("net_steps", std::move(passes));
    c.put("optimizer_steps", state.optimizer.steps);
    c.put("optimizer_first", std::move(state.optimizer.first));
    c.put("optimizer_second", std::move(state.optimizer.second));
    c.put("positions", std::move(positions));
    c.put("phases", std::move(phases));
    c.put("file_reads", std::vector<double>{reads[0] + double(reads_before_[0]), reads[1] + double(reads_before_[1])});
    for (auto& [name, series] : epochs_.named()) c.put(name, *series);
    c.write(p_.checkpoint, p_.reproducer);
  }
  MPI_Barrier(workers_);
}

void DataWorker::restore(const Checkpoint& c) {
  const std::string& file = p_.checkpoint;
  const auto workers = static_cast<std::size_t>(p_.sp.workers), me = static_cast<std::size_t>(worker_);
  const auto steps = static_cast<std::size_t>(std::max<std::int64_t>(c.integer("steps"), 0));
  start_.epoch = static_cast<int>(c.integer("epoch"));
  start_.step = static_cast<std::size_t>(std::max<std::int64_t>(c.integer("epoch_step"), 0));
  if (start_.epoch < 0 || start_.epoch > p_.epochs || start_.step > p_.steps_per_epoch ||
      steps != static_cast<std::size_t>(start_.epoch) * p_.steps_per_epoch + start_.step)
    throw RuntimeError(file + ": a checkpoint of another training (epoch " + std::to_string(start_.epoch) + ", step " +
                       std::to_string(start_.step) + ")");
  // The CRC and the settings match, so the sizes should too; a file that still disagrees (another
  // build's model, a forged file) is refused naming the array, never read past its end.
  const std::size_t buffer_count = net_.get_buffers().size(), phase_count = 6 * steps + 1;
  const auto expect = [&](const char* name, std::size_t got, std::size_t want) {
    if (got != want)
      throw RuntimeError(file + ": '" + name + "' holds " + std::to_string(got) + " values, this point needs " +
                         std::to_string(want));
  };
  expect("params", c.floats("params").size(), net_.param_count());
  expect("buffers", c.floats("buffers").size(), buffer_count * workers);
  expect("net_steps", c.doubles("net_steps").size(), workers);
  expect("positions", c.doubles("positions").size(), EpochPosition::kFields * workers);
  expect("phases", c.doubles("phases").size(), phase_count * workers);
  expect("file_reads", c.doubles("file_reads").size(), 2);
  net_.set_params(c.floats("params"));
  const std::vector<float>& buffers = c.floats("buffers");
  net_.set_buffers(std::vector<float>(buffers.begin() + static_cast<long>(buffer_count * me),
                                      buffers.begin() + static_cast<long>(buffer_count * (me + 1))));
  net_.set_step(static_cast<std::uint64_t>(c.doubles("net_steps")[me]));
  start_.unpack(c.doubles("positions").data() + EpochPosition::kFields * me);
  phases_ = unpack_phases(c.doubles("phases").data() + phase_count * me, steps);
  for (auto& [name, series] : epochs_.named()) *series = c.doubles(name);
  if (epochs_.train_loss.size() != static_cast<std::size_t>(start_.epoch))
    throw RuntimeError(file + ": epoch series of " + std::to_string(epochs_.train_loss.size()) + " epochs at epoch " +
                       std::to_string(start_.epoch));
  wall_ = epochs_.wall.empty() ? 0.0 : epochs_.wall.back();
  if (worker_ == 0)
    for (int i = 0; i < 2; ++i) reads_before_[i] = static_cast<std::uint64_t>(c.doubles("file_reads")[static_cast<std::size_t>(i)]);
  steps_ = steps;
  resumed_epochs_ = start_.epoch;
}

// The exchange's state in a checkpoint (every rank parses it; servers need their shard).
ExchangeState exchange_state_of(const Checkpoint& c) {
  ExchangeState s;
  s.optimizer.steps = c.integer("optimizer_steps");
  s.optimizer.first = c.floats("optimizer_first");
  s.optimizer.second = c.floats("optimizer_second");
  return s;
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
      "decoded again (PyTorch, MXNet); gzip files are first decompressed by each worker, once per point, into $TMPDIR",
      "0");
  specs.front().default_value = "";  // --data switches to real data: no default data set here
  const std::vector<OptionSpec> mine = {
      {"epochs", OptType::Int, true, "1", "LIST", "with --data: training epochs (each value a sweep point)", {}, 1, 1e7},
      {"sharding", OptType::Choice, true, "shard", "LIST",
       "with --data: shard: each worker its disjoint shard of a shared per-epoch permutation; whole: each worker its "
       "own permutation of the whole set, 1/workers of it per epoch (the asynchronous TensorFlow workers of ref. [4])",
       "shard|whole"},
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
  std::optional<Checkpoint> resume;
  if (p.checkpoints()) resume = read_point_checkpoint(p.checkpoint, p.reproducer, comm);
  ExchangeState resumed_state;
  const std::size_t done = resume ? static_cast<std::size_t>(std::max<std::int64_t>(resume->integer("steps"), 0)) : 0;
  if (done >= p.total_steps() && resume)
    throw RuntimeError(p.checkpoint + ": a checkpoint after step " + std::to_string(done) + " of a training of " +
                       std::to_string(p.total_steps()));
  ExchangeSetup setup = exchange_setup(sp, graph, buckets, *backend, comm);
  setup.steps = static_cast<std::int64_t>(p.total_steps() - done);  // what the servers serve from here
  if (resume) {
    resumed_state = exchange_state_of(*resume);
    setup.resume = &resumed_state;
  }
  setup.state_on_stop = p.checkpoints() && sp.scheme->parameter_server && sp.synchronous();
  std::unique_ptr<Exchange> exchange = make_exchange(*sp.scheme, setup, comm);

  WorkerTimes t;
  EpochFigures epochs;
  FileReads reads;
  std::string digest;
  int resumed_epochs = 0;
  if (exchange->is_worker()) {
    DataWorker worker(p, data, *backend, graph, buckets, *exchange, resume ? &*resume : nullptr);
    t.interrupted = worker.train();
    t.phases = worker.phases();
    t.last_loss = worker.last_loss();
    t.diverged = worker.divergence();
    epochs = worker.epochs();
    reads = file_reads_of(worker.files());  // before its scratch copies go with it
    reads.reads += worker.reads_before(0);
    reads.bytes += worker.reads_before(1);
    digest = params_digest(worker.params());
    resumed_epochs = worker.resumed_epochs();
  } else {
    exchange->serve();
  }
  // A stop signal ends the point on every rank (servers included) once the workers have stopped:
  // Interrupted, after a checkpoint when there are checkpoints (the runner keeps the journal).
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
  r.set("checkpoint_every", static_cast<std::int64_t>(p.checkpoint_every));
  r.set("checkpoint_unit", std::string(p.checkpoint_steps ? "step" : "epoch"));
  r.set("resumed_epochs", std::int64_t{resumed_epochs});
  r.set("resumed_steps", static_cast<std::int64_t>(done));
  r.set("params_digest", digest);
  const double flops = static_cast<double>(graph.flops_training_per_sample());
  r.set("flops_per_image", flops);
  r.set("gflops", r.number("img_per_s").value_or(0) * flops * 1e-9);
  return out;
}

}  // namespace hpcnn
