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
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "config.h"
#include "data/batch_loader.hpp"
#include "data/dataset.hpp"
#include "data/sampler.hpp"
#include "base/errors.hpp"
#include "base/median.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/main_wrapper.hpp"
#include "engine/optimizer.hpp"
#include "harness/provenance.hpp"
#include "harness/resources.hpp"
#include "harness/suite_runner.hpp"
#include "harness/signals.hpp"
#include "harness/training_loop.hpp"
#include "suites/epoch_driver.hpp"
#include "suites/evaluator.hpp"
#include "kernels/registry.hpp"
#include "suites/int8_evaluation.hpp"
#include "suites/model_point.hpp"
#include "suites/real_data.hpp"

namespace hpcnn {

namespace {


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
      {"eval-int8", OptType::Flag, false, "", "",
       "after training, evaluate the test set once more in int8 (dnnl: post-training quantization calibrated on "
       "the first --calibration-batches training batches): int8_test_acc beside test_acc"},
      {"calibration-batches", OptType::Int, false, "4", "N", "--eval-int8: training batches of the calibration pass",
       {}, 1, 1 << 20},
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
  int int8_calibration_batches = 0;  // --eval-int8 (0: not asked)
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
  if (s.flag("eval-int8")) ap.int8_calibration_batches = static_cast<int>(s.integer("calibration-batches"));
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

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}
int ranks_in(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

// One point's training on this rank, as the epoch driver's steps: the data pipelines, the
// networks, the optimizer and the global mean gradient. The main network of the full batch owns
// the parameters; the short last batch runs on a network of its size with main's parameters and
// running statistics.
class AccuracyRun final : public EpochSteps {
 public:
  // checkpoint: the file of --checkpoint-every, or ""; resume: its contents to continue from.
  AccuracyRun(const AccuracyPoint& ap, const LoadedData& data, Backend& backend, const Graph& graph, MPI_Comm comm,
              const std::string& checkpoint, const TrainingCheckpoint* resume);
  // "" when the training finished (or diverged), else why a stop signal ended it.
  TrainingEnd train() { return driver_.train(); }
  const EpochDriver& driver() const { return driver_; }
  std::vector<float> params() { return main_.get_params(); }
  std::vector<float> buffers() { return main_.get_buffers(); }
  std::int64_t diverged_step() const { return diverged_step_; }

  std::vector<std::vector<std::uint32_t>> batches(int epoch) override;
  StopCause stop_before_step(bool storage_failed) override { return stop_cause_anywhere(comm_, storage_failed); }
  Tally step(const data::Batch& b, double waited, std::int64_t done, EpochSeries& series) override;
  bool diverged() const override { return diverged_step_ >= 0; }
  bool divergence_ends_training() const override { return true; }
  Evaluation evaluate() override { return evaluator_.run(main_.get_params(), main_.get_buffers()); }
  void save_weights(TrainingCheckpoint& c) override;
  RankState rank_state() override;
  void restore(const TrainingCheckpoint& c, std::size_t rank, std::size_t ranks) override;

 private:
  data::PipelineOptions pipeline(bool training) const;
  EpochDriver::Plan plan(const std::string& checkpoint) const;
  void evaluate_every(std::int64_t steps, EpochSeries& series, double& seconds);

  const AccuracyPoint& ap_;
  const LoadedData& data_;
  MPI_Comm comm_;
  int rank_, size_;
  data::BatchLoader loader_;
  Evaluator evaluator_;
  NetworkSet nets_;
  Network& main_;
  Optimizer optimizer_;
  MeanOverRanks sync_;
  TrainingLoop loop_;
  std::size_t steps_per_epoch_ = 0;
  std::int64_t diverged_step_ = -1;  // the step whose loss was NaN or Inf (1-based)
  EpochDriver driver_;
};

data::PipelineOptions AccuracyRun::pipeline(bool training) const {
  return real_data_pipeline(ap_.mp, ap_.cache, ap_.prefetch, training && ap_.augment);
}

EpochDriver::Plan AccuracyRun::plan(const std::string& checkpoint) const {
  EpochDriver::Plan p;
  p.epochs = ap_.epochs;
  p.steps_per_epoch = steps_per_epoch_;
  p.checkpoint_every = ap_.checkpoint_every;
  p.checkpoint_steps = ap_.checkpoint_steps;
  p.checkpoint = checkpoint;
  p.reproducer = ap_.reproducer;
  return p;
}

AccuracyRun::AccuracyRun(const AccuracyPoint& ap, const LoadedData& data, Backend& backend, const Graph& graph,
                         MPI_Comm comm, const std::string& checkpoint, const TrainingCheckpoint* resume)
    : ap_(ap),
      data_(data),
      comm_(comm),
      rank_(rank_in(comm)),
      size_(ranks_in(comm)),
      loader_(data.set.train, data.norm, pipeline(true)),
      evaluator_(backend, graph, network_options(ap.mp, ap.test_batch, Mode::Infer), data.set.test, data.norm,
                 pipeline(false), ap.test_batch, comm),
      nets_(backend, graph, network_options(ap.mp, ap.mp.batch, Mode::Train)),
      main_(nets_.get(ap.mp.batch)),
      optimizer_(backend, main_.param_count(), ap.mp.optimizer),
      sync_(backend, optimizer_, main_.param_count(), comm),
      loop_(backend, {Mode::Train, 0, 0, true, MPI_COMM_NULL, false}, &sync_),
      steps_per_epoch_(data::steps_per_epoch(data.set.train.size(), ap.mp.batch, size_)),
      driver_(plan(checkpoint), comm, loader_, *this) {
  if (resume) driver_.resume(*resume);
}

std::vector<std::vector<std::uint32_t>> AccuracyRun::batches(int epoch) {
  return data::rank_batches(data::epoch_order(data_.set.train.size(), ap_.mp.seed, static_cast<std::uint64_t>(epoch),
                                              ap_.shuffle),
                            ap_.mp.batch, rank_, size_);
}

void AccuracyRun::evaluate_every(std::int64_t steps, EpochSeries& series, double& seconds) {
  if (ap_.eval_every <= 0 || steps % ap_.eval_every != 0) return;
  const Evaluation e = evaluator_.run(main_.get_params(), main_.get_buffers());
  seconds += e.seconds;
  series.eval_step.push_back(double(steps));
  series.eval_loss.push_back(e.loss);
  series.eval_acc.push_back(e.acc);
}

EpochSteps::Tally AccuracyRun::step(const data::Batch& b, double waited, std::int64_t done, EpochSeries& series) {
  Network* net = &main_;
  if (b.size > 0) {
    net = &nets_.get(b.size);
    if (net != &main_) {  // the short last batch: main's parameters and running statistics
      net->set_params(main_.get_params());
      net->set_buffers(main_.get_buffers());
    }
  }
  const long total_steps = static_cast<long>(steps_per_epoch_) * ap_.epochs;
  optimizer_.set_lr(scheduled_lr(ap_.lr_schedule, ap_.mp.optimizer.lr, static_cast<long>(done),
                                 static_cast<long>(steps_per_epoch_), total_steps, ap_.lr_step));
  const StepResult r = loop_.step(*net, {b.images.data(), b.labels.data(), b.size}, &main_);
  if (b.size > 0 && net != &main_) main_.set_buffers(net->get_buffers());  // its statistics update counts too
  Tally t;
  t.load = waited;
  if (r.diverged) {
    diverged_step_ = done + 1;
    return t;
  }
  series.step_loss.push_back(r.judged_loss);
  t.sums[0] = r.local.loss * double(r.local.images);
  t.sums[1] = double(r.local.correct);
  t.sums[2] = double(r.local.images);
  evaluate_every(done + 1, series, t.excluded);
  return t;
}

// The parameters and optimizer state are the same on every rank: rank 0's.
void AccuracyRun::save_weights(TrainingCheckpoint& c) {
  if (rank_ != 0) return;
  c.params = main_.get_params();
  c.optimizer = optimizer_.state();
}

// Every rank's own: its batch-norm statistics and its networks' dropout step counters, as (batch,
// forward passes) of the full and the short network.
EpochSteps::RankState AccuracyRun::rank_state() {
  RankState mine;
  mine.buffers = main_.get_buffers();
  mine.net_steps.assign(4, 0.0);
  std::size_t k = 0;
  for (const auto& [batch, passes] : nets_.steps())
    if (k + 1 < mine.net_steps.size()) {
      mine.net_steps[k++] = batch;
      mine.net_steps[k++] = static_cast<double>(passes);
    }
  return mine;
}

void AccuracyRun::restore(const TrainingCheckpoint& c, std::size_t rank, std::size_t ranks) {
  const std::string& file = driver_.checkpoint_file();
  const std::size_t n = main_.get_buffers().size();
  expect_checkpoint_size(file, "params", c.params.size(), main_.param_count());
  expect_checkpoint_size(file, "buffers", c.buffers.size(), n * ranks);
  expect_checkpoint_size(file, "net_steps", c.net_steps.size(), 4 * ranks);
  main_.set_params(c.params);
  main_.set_buffers(std::vector<float>(c.buffers.begin() + static_cast<long>(n * rank),
                                       c.buffers.begin() + static_cast<long>(n * (rank + 1))));
  for (std::size_t k = 4 * rank; k + 1 < 4 * (rank + 1); k += 2)
    if (c.net_steps[k] > 0) nets_.get(static_cast<int>(c.net_steps[k])).set_step(static_cast<std::uint64_t>(c.net_steps[k + 1]));
  optimizer_.restore(c.optimizer);
}

void add_epoch_arrays(ResultPoint& out, const EpochSeries& s, bool evaluations) {
  out.arrays.push_back(epoch_array("epoch_train_loss", s.train_loss));
  out.arrays.push_back(epoch_array("epoch_train_acc", s.train_acc));
  out.arrays.push_back(epoch_array("epoch_test_loss", s.test_loss));
  out.arrays.push_back(epoch_array("epoch_test_acc", s.test_acc));
  out.arrays.push_back(epoch_array("epoch_time_s", s.time));
  out.arrays.push_back(epoch_array("epoch_test_time_s", s.test_time));
  out.arrays.push_back(epoch_array("epoch_load_wait_s", s.load));
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
void set_epoch_fields(Record& r, const AccuracyRun& run, std::size_t train_size) {
  const EpochSeries& s = run.driver().series();
  const bool diverged = run.diverged();
  const int done = diverged ? static_cast<int>(s.time.size()) - 1 : static_cast<int>(s.time.size());
  double train_total = 0, wait_total = 0;
  for (double t : s.time) train_total += t;
  for (double t : s.load) wait_total += t;
  r.set("epochs_done", std::int64_t{done});
  r.set("steps", static_cast<std::int64_t>(diverged ? run.diverged_step() - 1 : run.driver().steps()));
  r.set("diverged_step", static_cast<std::int64_t>(run.diverged_step()));
  r.set("train_loss", s.train_loss.back());
  r.set("train_acc", s.train_acc.back());
  r.set("test_loss", s.test_loss.back());
  r.set("test_acc", s.test_acc.back());
  r.set("epoch_s", median(s.time));
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
  std::optional<TrainingCheckpoint> resume;
  if (ap.checkpoint_every > 0 && !checkpoint.empty()) resume = read_training_checkpoint(checkpoint, ap.reproducer, comm);
  AccuracyRun run(ap, data, *backend, graph, comm, checkpoint, resume ? &*resume : nullptr);
  resume.reset();
  // A failed data file (named by the rank it failed on), then a stop signal, ends the point on
  // every rank together; a signal after a checkpoint of the step it stopped before (--resume
  // continues from it; without checkpoints it reruns the point).
  const TrainingEnd end = run.train();
  agree_on_failure(comm, end.storage.empty() ? PointError{} : PointError{PointStatus::Interrupted, end.storage});
  agree_on_failure(comm, end.signal.empty() ? PointError{} : PointError{PointStatus::Interrupted, end.signal});
  const std::string digest = params_digest(run.params());
  const EpochSeries& s = run.driver().series();

  std::optional<Int8Evaluation> int8;
  if (ap.int8_calibration_batches > 0 && !run.diverged())
    int8 = evaluate_int8(ap.mp, ap.int8_calibration_batches, ap.test_batch, data.set.train, data.set.test, data.norm,
                         graph, run.params(), run.buffers(), comm, libraries);

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
  set_epoch_fields(r, run, data.set.train.size());
  r.set("checkpoint_every", static_cast<std::int64_t>(ap.checkpoint_every));
  r.set("checkpoint_unit", std::string(ap.checkpoint_steps ? "step" : "epoch"));
  r.set("resumed_epochs", std::int64_t{run.driver().resumed_epochs()});
  r.set("resumed_steps", static_cast<std::int64_t>(run.driver().resumed_steps()));
  r.set("params_digest", digest);
  r.set("peak_rss_mib", max_rss);
  if (int8) {
    r.set("int8_test_acc", int8->test.acc);
    r.set("int8_test_loss", int8->test.loss);
    r.set("int8_test_s", int8->test.seconds);
    r.set("calibration_batches", std::int64_t{ap.int8_calibration_batches});
    if (!int8->exceptions.empty()) r.set("precision_exceptions", int8->exceptions);
  }
  if (run.diverged()) {
    out.status = PointStatus::Diverged;
    out.status_reason = "diverged: loss NaN or Inf at step " + std::to_string(run.diverged_step()) + " (epoch " +
                        std::to_string(s.time.size()) + ")";
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
    if (o.flag("eval-int8"))
      for (const std::string& b : o.values("backend")) {
        const BackendInfo* info = backend_registry().find(b);
        if (!info->precision_problem || !info->precision_problem(Precision::Int8).empty())
          throw UsageError("--eval-int8: backend '" + b + "' has no int8 inference (dnnl has; see --list)");
      }
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
