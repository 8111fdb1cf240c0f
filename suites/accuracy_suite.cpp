// Real-data training with accuracy. One sweep point = one training run of `epochs`
// epochs: the training set is sharded over the ranks and reshuffled every epoch (data/sampler.hpp),
// batches come from the background loader (data/batch_loader.hpp), gradients of several ranks are
// averaged (weighted by their batch sizes, so a short last batch counts right), and after every
// epoch the whole test set is evaluated in inference mode by a separate Mode::Infer network given
// the training network's parameters and buffers (batch-norm running statistics), as PyTorch's
// model.eval() evaluates. A NaN or Inf loss ends the point with
// status "diverged"; the sweep goes on.
#include "suites/accuracy_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "config.h"
#include "data/batch_loader.hpp"
#include "data/dataset.hpp"
#include "data/sampler.hpp"
#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "base/median.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/main_wrapper.hpp"
#include "engine/optimizer.hpp"
#include "harness/provenance.hpp"
#include "harness/resources.hpp"
#include "harness/suite_runner.hpp"
#include "harness/checkpoint.hpp"
#include "harness/signals.hpp"
#include "harness/training_loop.hpp"
#include "suites/evaluator.hpp"
#include "suites/model_point.hpp"
#include "suites/real_data.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<OptionSpec> accuracy_options() {
  std::vector<OptionSpec> specs;
  for (const OptionSpec& s : model_options(Mode::Train))
    if (s.name != "dataset") specs.push_back(s);  // the data set is --data here
  const std::vector<OptionSpec> mine = {
      {"epochs", OptType::Int, true, "1", "LIST", "training epochs (each value a sweep point)", {}, 1, 1e7},
      {"seed", OptType::Int, true, "1", "LIST", "seeds of initialization, shuffling and augmentation (each a point)", {}, 0, 9.0e18},
      {"repeat", OptType::Int, false, "1", "N", "run every point with N seeds: --seed S becomes S,S+1,...,S+N-1", {}, 1, 1000},
      {"preset", OptType::String, false, "", "NAME", "framework default settings of the framework comparison ref. [5] (docs/EXPERIMENTS.md; see --list); options given win"},
      {"eval-every", OptType::Int, false, "0", "N", "also evaluate the test set every N optimizer steps (0: after each epoch only)", {}, 0, 1e12},
      {"lr-schedule", OptType::Choice, false, "constant", "NAME",
       "constant; step: x0.1 every --lr-step epochs; cosine: half cosine to 0 over all steps", "constant|step|cosine"},
      {"lr-step", OptType::Int, false, "30", "N", "epochs between the x0.1 steps of --lr-schedule step", {}, 1, 1e7},
  };
  specs.insert(specs.end(), mine.begin(), mine.end());
  const std::vector<OptionSpec> checkpoints = checkpoint_options();
  specs.insert(specs.end(), checkpoints.begin(), checkpoints.end());
  const std::vector<OptionSpec> data = real_data_options("keep every decoded sample in memory after its first use", "2");
  specs.insert(specs.end(), data.begin(), data.end());
  const std::vector<OptionSpec> output = output_options();
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

void print_list() {
  print_model_list();
  print_data_sets();
  std::printf("presets (--preset NAME; ref. [5] Tables II-V, docs/EXPERIMENTS.md; options given on the command line win):\n");
  for (const AccuracyPreset& p : accuracy_presets()) {
    std::string settings;
    for (const auto& [k, v] : p.settings) settings.append(" --").append(k).append(" ").append(v);
    std::printf("  %-20s%s\n  %-20s %s\n", p.name, settings.c_str(), "", p.source);
  }
}



// A point of hpcnn-train --data, in types.
struct AccuracyPoint {
  ModelPoint mp;  // sample and classes from the data set
  int epochs = 1;
  int test_batch = 1;
  std::string preset;
  std::string lr_schedule;
  long lr_step = 30;
  long eval_every = 0;
  bool shuffle = true, augment = false, cache = false;
  int prefetch = 2;
  long checkpoint_every = 0;  // epochs or steps; 0: no checkpoints
  bool checkpoint_steps = false;  // checkpoint_every counts optimizer steps, not epochs
  std::string reproducer;    // the point's command line: the settings a checkpoint belongs to
};

AccuracyPoint accuracy_point(const PointSettings& s, const data::DataSet& set) {
  AccuracyPoint ap;
  ModelPoint& mp = ap.mp;
  mp = real_data_model_point(s, set, Mode::Train);
  ap.epochs = static_cast<int>(s.integer("epochs"));
  ap.test_batch = s.has("test-batch") ? static_cast<int>(s.integer("test-batch")) : mp.batch;
  if (s.has("preset")) ap.preset = s.str("preset");
  ap.lr_schedule = s.str("lr-schedule");
  ap.lr_step = static_cast<long>(s.integer("lr-step"));
  ap.eval_every = static_cast<long>(s.integer("eval-every"));
  ap.shuffle = !s.flag("no-shuffle");
  ap.augment = s.flag("augment");
  ap.cache = s.flag("cache");
  ap.prefetch = static_cast<int>(s.integer("prefetch"));
  ap.checkpoint_every = static_cast<long>(s.integer("checkpoint-every"));
  ap.checkpoint_steps = s.str("checkpoint-unit") == "step";
  return ap;
}

// The gradient synchronization of real-data training: the mean gradient of the global batch
// (each rank's batch-mean gradient weighted by its share of the images; a rank without images
// this step contributes zero), then the optimizer. The loss judged for divergence is the global
// one, so every rank stops at the same step.
class MeanOverRanks : public GradientSync {
 public:
  MeanOverRanks(Backend& backend, Optimizer& optimizer, std::size_t count, MPI_Comm comm)
      : backend_(backend), optimizer_(optimizer), count_(count), comm_(comm) {
    MPI_Comm_size(comm, &size_);
  }
  double wait(Network& net, const StepStats& local) override {
    double mine[3] = {local.loss * double(local.images), double(local.correct), double(local.images)};
    std::copy(mine, mine + 3, sums_);
    if (size_ > 1) MPI_Allreduce(mine, sums_, 3, MPI_DOUBLE, MPI_SUM, comm_);
    if (!std::isfinite(sums_[0])) return sums_[0];
    if (size_ > 1) {
      if (local.images > 0) grads_ = net.get_grads();
      else grads_.assign(count_, 0.0f);
      const float weight = static_cast<float>(double(local.images) / sums_[2]);
      for (float& g : grads_) g *= weight;
      MPI_Allreduce(MPI_IN_PLACE, grads_.data(), static_cast<int>(count_), MPI_FLOAT, MPI_SUM, comm_);
      backend_.copy_to_device(net.grads(), grads_.data(), count_ * sizeof(float));
    }
    return sums_[0] / sums_[2];
  }
  void update(float* params, Network& net) override { optimizer_.step(params, net.grads()); }
  // The last step over all ranks: loss x images, correct, images.
  const double* sums() const { return sums_; }

 private:
  Backend& backend_;
  Optimizer& optimizer_;
  std::size_t count_;
  MPI_Comm comm_;
  int size_ = 1;
  double sums_[3] = {0, 0, 0};
  std::vector<float> grads_;
};

// Everything a point records per epoch and per --eval-every evaluation.
struct EpochSeries {
  std::vector<double> train_loss, train_acc, test_loss, test_acc, epoch_time, test_time, load_wait;
  std::vector<double> eval_step, eval_loss, eval_acc;
  std::vector<double> step_loss;  // global mean loss of every optimizer step
  long steps = 0, diverged_step = -1;
  int resumed_epochs = 0;  // whole epochs restored from a checkpoint
  long resumed_steps = 0;  // optimizer steps restored from a checkpoint
  bool diverged() const { return diverged_step >= 0; }
  // Every series by name, for a checkpoint.
  std::vector<std::pair<const char*, std::vector<double>*>> named();
};

std::vector<std::pair<const char*, std::vector<double>*>> EpochSeries::named() {
  return {{"train_loss", &train_loss}, {"train_acc", &train_acc}, {"test_loss", &test_loss},
          {"test_acc", &test_acc},     {"epoch_time", &epoch_time}, {"test_time", &test_time},
          {"load_wait", &load_wait},   {"eval_step", &eval_step},   {"eval_loss", &eval_loss},
          {"eval_acc", &eval_acc},     {"step_loss", &step_loss}};
}

// Where training stands: the epoch in progress, its batches done, and what the epoch has gathered
// so far. With the weights, optimizer and series, what a checkpoint needs to continue mid-epoch.
struct EpochPosition {
  int epoch = 0;
  long batch = 0;                // batches of this epoch done
  double sums[3] = {0, 0, 0};    // loss x images, correct, images (all ranks)
  double waited = 0;             // waiting for the loader
  double seconds = 0;            // training time of this epoch before a restart
};

// One point's training state on this rank: the data pipelines, the networks, the optimizer and
// the loop. The main network of the full batch owns the parameters; the short last batch runs on
// a network of its size with main's parameters and running statistics.
class AccuracyRun {
 public:
  // checkpoint: the file of --checkpoint-every (restored first when it exists), or "".
  AccuracyRun(const AccuracyPoint& ap, const LoadedData& data, Backend& backend, const Graph& graph, MPI_Comm comm,
              std::string checkpoint);
  EpochSeries train();
  std::vector<float> params() { return main_.get_params(); }

 private:
  bool checkpoints() const { return ap_.checkpoint_every > 0 && !checkpoint_.empty(); }
  void save_checkpoint(EpochSeries& s, const EpochPosition& at);
  EpochPosition restore_checkpoint(EpochSeries& s);  // the start of training without a checkpoint
  data::PipelineOptions pipeline(bool training) const;
  // The epoch from `at` to its end; a stop signal ends it (and the point) after a checkpoint.
  void run_epoch(EpochPosition at, EpochSeries& s);
  void finish_epoch(const EpochPosition& at, EpochSeries& s);
  void step(const data::Batch& b, EpochSeries& s, double epoch_sums[3], double& eval_seconds);
  void evaluate_every(EpochSeries& s, double& eval_seconds);

  const AccuracyPoint& ap_;
  const LoadedData& data_;
  Backend& backend_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  data::BatchLoader loader_;
  Evaluator evaluator_;
  NetworkSet nets_;
  Network& main_;
  Optimizer optimizer_;
  MeanOverRanks sync_;
  TrainingLoop loop_;
  long steps_per_epoch_ = 0;
  std::string checkpoint_;
};

data::PipelineOptions AccuracyRun::pipeline(bool training) const {
  return real_data_pipeline(ap_.mp, ap_.cache, ap_.prefetch, training && ap_.augment);
}

AccuracyRun::AccuracyRun(const AccuracyPoint& ap, const LoadedData& data, Backend& backend, const Graph& graph,
                         MPI_Comm comm, std::string checkpoint)
    : ap_(ap),
      data_(data),
      backend_(backend),
      comm_(comm),
      loader_(data.set.train, data.norm, pipeline(true)),
      evaluator_(backend, graph, network_options(ap.mp, ap.test_batch, Mode::Infer), data.set.test, data.norm,
                 pipeline(false), ap.test_batch, comm),
      nets_(backend, graph, network_options(ap.mp, ap.mp.batch, Mode::Train)),
      main_(nets_.get(ap.mp.batch)),
      optimizer_(backend, main_.param_count(), ap.mp.optimizer),
      sync_(backend, optimizer_, main_.param_count(), comm),
      loop_(backend, {Mode::Train, 0, 0, true, MPI_COMM_NULL, false}, &sync_),
      checkpoint_(std::move(checkpoint)) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  steps_per_epoch_ = static_cast<long>(data::steps_per_epoch(data.set.train.size(), ap.mp.batch, size_));
}

void AccuracyRun::evaluate_every(EpochSeries& s, double& eval_seconds) {
  if (ap_.eval_every <= 0 || s.steps % ap_.eval_every != 0) return;
  const Evaluation e = evaluator_.run(main_.get_params(), main_.get_buffers());
  eval_seconds += e.seconds;
  s.eval_step.push_back(double(s.steps));
  s.eval_loss.push_back(e.loss);
  s.eval_acc.push_back(e.acc);
}

void AccuracyRun::step(const data::Batch& b, EpochSeries& s, double epoch_sums[3], double& eval_seconds) {
  Network* net = &main_;
  if (b.size > 0) {
    net = &nets_.get(b.size);
    if (net != &main_) {  // the short last batch: main's parameters and running statistics
      net->set_params(main_.get_params());
      net->set_buffers(main_.get_buffers());
    }
  }
  const long total_steps = steps_per_epoch_ * ap_.epochs;
  optimizer_.set_lr(scheduled_lr(ap_.lr_schedule, ap_.mp.optimizer.lr, s.steps, steps_per_epoch_, total_steps, ap_.lr_step));
  const StepResult r = loop_.step(*net, {b.images.data(), b.labels.data(), b.size}, &main_);
  if (b.size > 0 && net != &main_) main_.set_buffers(net->get_buffers());  // its statistics update counts too
  ++s.steps;
  if (r.diverged) {
    s.diverged_step = s.steps;
    return;
  }
  s.step_loss.push_back(r.judged_loss);
  for (int i = 0; i < 3; ++i) epoch_sums[i] += sync_.sums()[i];
  evaluate_every(s, eval_seconds);
}

void AccuracyRun::run_epoch(EpochPosition at, EpochSeries& s) {
  const data::ImageSet& train = data_.set.train;
  const auto t0 = Clock::now();
  double excluded = 0;  // evaluations and checkpoints: not training time
  auto batches = data::rank_batches(data::epoch_order(train.size(), ap_.mp.seed, at.epoch, ap_.shuffle), ap_.mp.batch,
                                    rank_, size_);
  // Augmentation is a function of (seed, epoch, sample): the rest of the epoch is the same batches
  // whether or not it starts after a restart.
  batches.erase(batches.begin(), batches.begin() + std::min<long>(at.batch, static_cast<long>(batches.size())));
  loader_.start_epoch(static_cast<std::uint64_t>(at.epoch), std::move(batches));
  for (; at.batch < steps_per_epoch_ && !s.diverged(); ++at.batch) {
    // A stop signal ends the point at a step boundary on every rank together, after a checkpoint
    // of this very step (--resume continues from it; without checkpoints it reruns the point).
    if (stop_requested_anywhere(comm_)) {
      at.seconds += since(t0) - excluded;
      if (checkpoints()) save_checkpoint(s, at);
      agree_on_failure(comm_, {PointStatus::Interrupted, "interrupted by a signal at step " + std::to_string(s.steps) +
                                                             " (epoch " + std::to_string(at.epoch + 1) + ")"});
    }
    double w = 0;
    const data::Batch b = loader_.next(&w);
    at.waited += w;
    step(b, s, at.sums, excluded);
    if (checkpoints() && ap_.checkpoint_steps && s.steps % ap_.checkpoint_every == 0 && !s.diverged()) {
      const auto c0 = Clock::now();
      EpochPosition next = at;
      ++next.batch;
      next.seconds += since(t0) - excluded;
      save_checkpoint(s, next);
      excluded += since(c0);
    }
  }
  backend_.synchronize();
  at.seconds += since(t0) - excluded;
  finish_epoch(at, s);
}

void AccuracyRun::finish_epoch(const EpochPosition& at, EpochSeries& s) {
  double seconds = at.seconds;
  if (size_ > 1) MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm_);
  s.epoch_time.push_back(seconds);
  s.load_wait.push_back(at.waited);
  const double* sums = at.sums;
  if (s.diverged()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    s.train_loss.push_back(nan);
    s.train_acc.push_back(sums[2] > 0 ? 100.0 * sums[1] / sums[2] : nan);
    s.test_loss.push_back(nan);
    s.test_acc.push_back(nan);
    s.test_time.push_back(0.0);
    return;
  }
  s.train_loss.push_back(sums[0] / sums[2]);
  s.train_acc.push_back(100.0 * sums[1] / sums[2]);
  const Evaluation e = evaluator_.run(main_.get_params(), main_.get_buffers());
  s.test_loss.push_back(e.loss);
  s.test_acc.push_back(e.acc);
  s.test_time.push_back(e.seconds);
}

EpochSeries AccuracyRun::train() {
  EpochSeries s;
  EpochPosition at = restore_checkpoint(s);
  for (; at.epoch < ap_.epochs && !s.diverged(); at = EpochPosition{at.epoch + 1}) {
    run_epoch(at, s);
    const int done = at.epoch + 1;
    if (checkpoints() && !ap_.checkpoint_steps && done % ap_.checkpoint_every == 0 && done < ap_.epochs &&
        !s.diverged())
      save_checkpoint(s, EpochPosition{done});
  }
  return s;
}

// Test-only: HPCNN_TEST_KILL_AFTER_CHECKPOINTS (base/fault_injection.hpp).
void maybe_kill_after_checkpoint() {
  static long written = 0;
  inject_kill_after("CHECKPOINTS", ++written);
}

// Rank 0 writes what every rank needs to continue: the parameters, optimizer state and series
// (the same on every rank), and every rank's batch-norm statistics and dropout step counters
// (each rank's own).
void AccuracyRun::save_checkpoint(EpochSeries& s, const EpochPosition& at) {
  const std::vector<float> buffers = main_.get_buffers();
  std::vector<double> steps(4, 0.0);  // (batch, forward passes) of the full and the short network
  std::size_t k = 0;
  for (const auto& [batch, passes] : nets_.steps())
    if (k + 1 < steps.size()) {
      steps[k++] = batch;
      steps[k++] = static_cast<double>(passes);
    }
  std::vector<float> all_buffers(rank_ == 0 ? buffers.size() * static_cast<std::size_t>(size_) : 0);
  std::vector<double> all_steps(rank_ == 0 ? steps.size() * static_cast<std::size_t>(size_) : 0);
  MPI_Gather(buffers.data(), static_cast<int>(buffers.size()), MPI_FLOAT, all_buffers.data(),
             static_cast<int>(buffers.size()), MPI_FLOAT, 0, comm_);
  MPI_Gather(steps.data(), 4, MPI_DOUBLE, all_steps.data(), 4, MPI_DOUBLE, 0, comm_);
  const Optimizer::State opt = optimizer_.state();
  if (rank_ != 0) return;
  Checkpoint c;
  c.put("epoch", std::int64_t{at.epoch});
  c.put("epoch_batch", static_cast<std::int64_t>(at.batch));
  c.put("epoch_sums", std::vector<double>(at.sums, at.sums + 3));
  c.put("epoch_waited", std::vector<double>{at.waited});
  c.put("epoch_seconds", std::vector<double>{at.seconds});
  c.put("ranks", std::int64_t{size_});
  c.put("steps", static_cast<std::int64_t>(s.steps));
  c.put("params", main_.get_params());
  c.put("buffers", std::move(all_buffers));
  c.put("net_steps", std::move(all_steps));
  c.put("optimizer_steps", opt.steps);
  c.put("optimizer_first", opt.first);
  c.put("optimizer_second", opt.second);
  for (auto& [name, series] : s.named()) c.put(name, *series);
  c.write(checkpoint_, ap_.reproducer);
  maybe_kill_after_checkpoint();
}

EpochPosition AccuracyRun::restore_checkpoint(EpochSeries& s) {
  if (!checkpoints()) return {};
  const std::optional<Checkpoint> read = read_point_checkpoint(checkpoint_, ap_.reproducer, comm_);
  if (!read) return {};
  const Checkpoint& c = *read;
  // The CRC and the settings match, so the sizes should too; a file that still disagrees (another
  // build's model, a forged file) is refused naming the array, never read past its end.
  const auto expect_size = [&](const char* name, std::size_t got, std::size_t want) {
    if (got != want)
      throw RuntimeError(checkpoint_ + ": '" + name + "' holds " + std::to_string(got) + " values, this point needs " +
                         std::to_string(want));
  };
  expect_size("params", c.floats("params").size(), main_.param_count());
  expect_size("buffers", c.floats("buffers").size(), main_.get_buffers().size() * static_cast<std::size_t>(size_));
  expect_size("net_steps", c.doubles("net_steps").size(), 4 * static_cast<std::size_t>(size_));
  expect_size("epoch_waited", c.doubles("epoch_waited").size(), 1);
  expect_size("epoch_seconds", c.doubles("epoch_seconds").size(), 1);
  main_.set_params(c.floats("params"));
  const std::vector<float>& all = c.floats("buffers");
  const std::size_t n = all.size() / static_cast<std::size_t>(size_);
  main_.set_buffers(std::vector<float>(all.begin() + static_cast<long>(n * rank_), all.begin() + static_cast<long>(n * (rank_ + 1))));
  const std::vector<double>& steps = c.doubles("net_steps");
  for (std::size_t k = 4 * static_cast<std::size_t>(rank_); k + 1 < 4 * static_cast<std::size_t>(rank_ + 1); k += 2)
    if (steps[k] > 0) nets_.get(static_cast<int>(steps[k])).set_step(static_cast<std::uint64_t>(steps[k + 1]));
  optimizer_.restore({c.integer("optimizer_steps"), c.floats("optimizer_first"), c.floats("optimizer_second")});
  for (auto& [name, series] : s.named()) *series = c.doubles(name);
  s.steps = static_cast<long>(c.integer("steps"));
  EpochPosition at;
  at.epoch = static_cast<int>(c.integer("epoch"));
  at.batch = static_cast<long>(c.integer("epoch_batch"));
  const std::vector<double>& sums = c.doubles("epoch_sums");
  if (sums.size() != 3 || at.epoch < 0 || at.epoch > ap_.epochs || at.batch < 0 || at.batch > steps_per_epoch_)
    throw RuntimeError(checkpoint_ + ": a checkpoint of another training (epoch " + std::to_string(at.epoch) +
                       ", batch " + std::to_string(at.batch) + ")");
  std::copy(sums.begin(), sums.end(), at.sums);
  at.waited = c.doubles("epoch_waited").at(0);
  at.seconds = c.doubles("epoch_seconds").at(0);
  s.resumed_epochs = at.epoch;
  s.resumed_steps = s.steps;
  return at;
}




void add_epoch_arrays(ResultPoint& out, const EpochSeries& s, bool evaluations) {
  out.arrays.push_back(epoch_array("epoch_train_loss", s.train_loss));
  out.arrays.push_back(epoch_array("epoch_train_acc", s.train_acc));
  out.arrays.push_back(epoch_array("epoch_test_loss", s.test_loss));
  out.arrays.push_back(epoch_array("epoch_test_acc", s.test_acc));
  out.arrays.push_back(epoch_array("epoch_time_s", s.epoch_time));
  out.arrays.push_back(epoch_array("epoch_test_time_s", s.test_time));
  out.arrays.push_back(epoch_array("epoch_load_wait_s", s.load_wait));
  out.arrays.push_back(epoch_array("step_loss", s.step_loss));
  if (!evaluations) return;
  out.arrays.push_back(epoch_array("eval_step", s.eval_step));
  out.arrays.push_back(epoch_array("eval_test_loss", s.eval_loss));
  out.arrays.push_back(epoch_array("eval_test_acc", s.eval_acc));
}

// The data set and the real-data settings of a point.
void set_data_fields(Record& r, const AccuracyPoint& ap, const LoadedData& data) {
  set_data_set_fields(r, data);
  r.set("preset", ap.preset);
  r.set("lr_schedule", ap.lr_schedule);
  r.set("lr_step", static_cast<std::int64_t>(ap.lr_step));
  r.set("epochs", std::int64_t{ap.epochs});
  r.set("augment", std::int64_t{ap.augment ? 1 : 0});
  r.set("cache", std::int64_t{ap.cache ? 1 : 0});
  r.set("prefetch", std::int64_t{ap.prefetch});
  r.set("test_batch", std::int64_t{ap.test_batch});
  r.set("test_eval", std::string("inference"));  // batch-norm models too: running statistics
}

// Accuracy and time of the finished (or diverged) training.
void set_epoch_fields(Record& r, const EpochSeries& s, std::size_t train_size) {
  const int done = s.diverged() ? static_cast<int>(s.epoch_time.size()) - 1 : static_cast<int>(s.epoch_time.size());
  double train_total = 0, wait_total = 0;
  for (double t : s.epoch_time) train_total += t;
  for (double t : s.load_wait) wait_total += t;
  r.set("epochs_done", std::int64_t{done});
  r.set("steps", static_cast<std::int64_t>(s.diverged() ? s.diverged_step - 1 : s.steps));
  r.set("diverged_step", static_cast<std::int64_t>(s.diverged_step));
  r.set("train_loss", s.train_loss.back());
  r.set("train_acc", s.train_acc.back());
  r.set("test_loss", s.test_loss.back());
  r.set("test_acc", s.test_acc.back());
  r.set("epoch_s", median(s.epoch_time));
  r.set("test_s", s.test_time.back());
  r.set("train_time_s", train_total);
  r.set("load_wait_s", wait_total);
  r.set("img_per_s", train_total > 0 ? double(train_size) * done / train_total : 0.0);
}

ResultPoint run_point(const AccuracyPoint& ap, MPI_Comm comm, LibraryVersions& libraries, const LoadedData& data,
                      const std::string& checkpoint) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Graph graph = build_point_graph(ap.mp, true);
  // The training and the test network: refused before either
  // is built when they cannot fit (a 4096x4096 data set used to grow until the kernel killed it).
  check_point_memory(ap.mp, graph, {ap.mp.batch, ap.test_batch});
  std::unique_ptr<Backend> backend = make_point_backend(ap.mp, libraries);
  AccuracyRun run(ap, data, *backend, graph, comm, checkpoint);
  const EpochSeries s = run.train();
  const std::string digest = params_digest(run.params());

  ResultPoint out;
  add_epoch_arrays(out, s, ap.eval_every > 0);
  double rss = peak_rss_mib(), max_rss = 0;
  MPI_Reduce(&rss, &max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank != 0) return out;

  Record& r = out.record;
  set_model_fields(r, "hpcnn-train", ap.mp, *backend, graph, size);
  r.set("mode", std::string("train"));
  set_optimizer_fields(r, ap.mp);
  set_data_fields(r, ap, data);
  set_epoch_fields(r, s, data.set.train.size());
  r.set("checkpoint_every", static_cast<std::int64_t>(ap.checkpoint_every));
  r.set("checkpoint_unit", std::string(ap.checkpoint_steps ? "step" : "epoch"));
  r.set("resumed_epochs", std::int64_t{s.resumed_epochs});
  r.set("resumed_steps", static_cast<std::int64_t>(s.resumed_steps));
  r.set("params_digest", digest);
  r.set("peak_rss_mib", max_rss);
  if (s.diverged()) {
    out.status = PointStatus::Diverged;
    out.status_reason = "diverged: loss NaN or Inf at step " + std::to_string(s.diverged_step) + " (epoch " +
                        std::to_string(s.epoch_time.size()) + ")";
  }
  return out;
}

}  // namespace

float scheduled_lr(const std::string& schedule, float base, long step, long steps_per_epoch, long total_steps,
                   long step_epochs) {
  if (schedule == "step") {
    const long epoch = steps_per_epoch > 0 ? step / steps_per_epoch : 0;
    return static_cast<float>(base * std::pow(0.1, double(epoch / std::max(1L, step_epochs))));
  }
  if (schedule == "cosine" && total_steps > 0)
    return static_cast<float>(0.5 * base * (1.0 + std::cos(M_PI * double(step) / double(total_steps))));
  return base;
}

bool wants_accuracy_suite(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const char* name : {"--data", "--preset", "--epochs"})
      if (a == name || a.rfind(std::string(name) + "=", 0) == 0) return true;
  }
  return false;
}

int run_accuracy_suite(const char* program, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (preset_list_requested(args)) {
    if (is_root_rank()) print_list();
    return 0;
  }
  args = expand_accuracy_args(args);
  std::vector<char*> ptrs;
  for (std::string& a : args) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);

  auto loaded = std::make_shared<std::unique_ptr<LoadedData>>();
  SuiteDef def;
  def.program = program;
  def.summary =
      "Training on a real data set (--data): per epoch the training loss and accuracy, the test loss and\n"
      "accuracy (inference mode, whole test set), the epoch time and the test time. Lists sweep (batch, lr,\n"
      "epochs, optimizer, seed); a point whose loss becomes NaN or Inf is recorded as diverged and the sweep\n"
      "goes on. Data sets: MNIST/Fashion-MNIST idx files (gzipped or not), CIFAR-10/100 binary files.";
  def.options = accuracy_options();
  def.live_columns = {"model", "backend", "dataset", "batch", "lr", "optimizer", "epochs", "seed",
                      "train_acc", "test_acc", "epoch_s", "test_s"};
  def.print_list = print_list;
  def.default_table = [](const Options&) { return std::string("accuracy"); };
  def.validate = [](const Options& o) {
    validate_model_names(o);
    data::locate_dataset(o.str("data"));  // a missing data set is a usage error, before any work
  };
  def.run_point = [loaded, program](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs,
                           const PointPlace& place) {
    if (!*loaded) *loaded = load_real_data(o);
    AccuracyPoint ap = accuracy_point(PointSettings(o, p), (*loaded)->set);
    ap.reproducer = point_reproducer(program, o, p);
    return run_point(ap, comm, libs, **loaded, place.checkpoint);
  };
  return run_suite(def, static_cast<int>(args.size()), ptrs.data());
}

}  // namespace hpcnn
