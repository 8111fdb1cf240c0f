#include "suites/epoch_driver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "base/activity.hpp"
#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "suites/real_data.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Test-only: HPCNN_TEST_KILL_AFTER_CHECKPOINTS (base/fault_injection.hpp).
void maybe_kill_after_checkpoint() {
  static long written = 0;
  inject_kill_after("CHECKPOINTS", ++written);
}

// Every rank's `mine` in rank order on rank 0 (empty elsewhere); every rank gives as many.
template <class T>
std::vector<T> gather_to_root(const std::vector<T>& mine, MPI_Datatype type, int rank, int size, MPI_Comm comm) {
  std::vector<T> all(rank == 0 ? mine.size() * static_cast<std::size_t>(size) : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), type, all.data(), static_cast<int>(mine.size()), type, 0, comm);
  return all;
}

}  // namespace

void EpochPosition::unpack(const double* v) {
  std::copy(v, v + 3, sums);
  seconds = v[3];
  load = v[4];
}

std::vector<std::pair<const char*, std::vector<double>*>> EpochSeries::named() {
  return {{"train_loss", &train_loss}, {"train_acc", &train_acc}, {"test_loss", &test_loss},
          {"test_acc", &test_acc},     {"epoch_time", &time},     {"test_time", &test_time},
          {"epoch_load", &load},       {"wall", &wall},           {"step_loss", &step_loss},
          {"eval_step", &eval_step},   {"eval_loss", &eval_loss}, {"eval_acc", &eval_acc}};
}

void TrainingCheckpoint::write(const std::string& file, const std::string& reproducer) const {
  Checkpoint c;
  c.put("layout", kLayout);
  c.put("ranks", ranks);
  c.put("epoch", std::int64_t{epoch});
  c.put("epoch_step", epoch_step);
  c.put("steps", steps);
  c.put("params", params);
  c.put("optimizer_steps", optimizer.steps);
  c.put("optimizer_first", optimizer.first);
  c.put("optimizer_second", optimizer.second);
  c.put("buffers", buffers);
  c.put("net_steps", net_steps);
  c.put("positions", positions);
  c.put("phases", phases);
  c.put("file_reads", file_reads);
  EpochSeries s = series;
  for (auto& [name, values] : s.named()) c.put(name, *values);
  c.write(file, reproducer);
}

TrainingCheckpoint TrainingCheckpoint::from(const Checkpoint& c, const std::string& file) {
  if (!c.has_integer("layout") || c.integer("layout") != kLayout)
    throw RuntimeError(file + ": a checkpoint of another hpcnn (layout " +
                       (c.has_integer("layout") ? std::to_string(c.integer("layout")) : std::string("1")) + ", this one reads " +
                       std::to_string(kLayout) + "): remove it to run the point from the start");
  TrainingCheckpoint t;
  t.ranks = c.integer("ranks");
  t.epoch = static_cast<int>(c.integer("epoch"));
  t.epoch_step = c.integer("epoch_step");
  t.steps = c.integer("steps");
  t.params = c.floats("params");
  t.optimizer = {c.integer("optimizer_steps"), c.floats("optimizer_first"), c.floats("optimizer_second")};
  t.buffers = c.floats("buffers");
  t.net_steps = c.doubles("net_steps");
  t.positions = c.doubles("positions");
  t.phases = c.doubles("phases");
  t.file_reads = c.doubles("file_reads");
  for (auto& [name, values] : t.series.named()) *values = c.doubles(name);
  expect_checkpoint_size(file, "file_reads", t.file_reads.size(), 2);
  return t;
}

std::optional<TrainingCheckpoint> read_training_checkpoint(const std::string& file, const std::string& reproducer,
                                                           MPI_Comm comm) {
  const std::optional<Checkpoint> c = read_point_checkpoint(file, reproducer, comm);
  if (!c) return std::nullopt;
  return TrainingCheckpoint::from(*c, file);
}

void expect_checkpoint_size(const std::string& file, const char* name, std::size_t got, std::size_t want) {
  if (got != want)
    throw RuntimeError(file + ": '" + name + "' holds " + std::to_string(got) + " values, this point needs " +
                       std::to_string(want));
}

EpochDriver::EpochDriver(Plan plan, MPI_Comm ranks, data::BatchLoader& loader, EpochSteps& steps)
    : plan_(std::move(plan)), ranks_(ranks), loader_(loader), steps_(steps) {
  MPI_Comm_rank(ranks, &rank_);
  MPI_Comm_size(ranks, &size_);
}

void EpochDriver::resume(const TrainingCheckpoint& c) {
  const std::string& file = plan_.checkpoint;
  const auto ranks = static_cast<std::size_t>(size_), me = static_cast<std::size_t>(rank_);
  if (c.epoch < 0 || c.epoch > plan_.epochs || c.epoch_step < 0 ||
      static_cast<std::size_t>(c.epoch_step) > plan_.steps_per_epoch ||
      c.steps != static_cast<std::int64_t>(static_cast<std::size_t>(c.epoch) * plan_.steps_per_epoch) + c.epoch_step ||
      c.series.train_loss.size() != static_cast<std::size_t>(c.epoch))
    throw RuntimeError(file + ": a checkpoint of another training (epoch " + std::to_string(c.epoch) + ", step " +
                       std::to_string(c.epoch_step) + " after " + std::to_string(c.steps) + " steps)");
  expect_checkpoint_size(file, "positions", c.positions.size(), EpochPosition::kPacked * ranks);
  start_.epoch = c.epoch;
  start_.step = static_cast<std::size_t>(c.epoch_step);
  start_.unpack(c.positions.data() + EpochPosition::kPacked * me);
  series_ = c.series;
  steps_done_ = c.steps;
  wall_ = series_.wall.empty() ? 0.0 : series_.wall.back();
  if (rank_ == 0) std::copy(c.file_reads.begin(), c.file_reads.end(), file_reads_before_);
  resumed_epochs_ = c.epoch;
  resumed_steps_ = c.steps;
  steps_.restore(c, me, ranks);
}

TrainingEnd EpochDriver::train() {
  for (EpochPosition at = start_; at.epoch < plan_.epochs && !ended(); at = EpochPosition{at.epoch + 1}) {
    if (!run_epoch(at))
      return end_of_training("interrupted by a signal at step " + std::to_string(steps_done_) + " (epoch " +
                             std::to_string(at.epoch + 1) + ")");
    finish_epoch(at);
    const int done = at.epoch + 1;
    if (plan_.checkpoints() && !plan_.checkpoint_steps && done % plan_.checkpoint_every == 0 && done < plan_.epochs &&
        !steps_.diverged())
      save_checkpoint(EpochPosition{done});
  }
  return end_of_training("");
}

// Every training rank gets here together (a stop is agreed, or the last epoch ended): whether a
// data file failed anywhere, which outranks a stop signal.
TrainingEnd EpochDriver::end_of_training(const std::string& signal) {
  TrainingEnd end;
  end.storage_stop = storage_failed_anywhere();
  if (end.storage_stop) end.storage = storage_failure_;
  else end.signal = signal;
  return end;
}

bool EpochDriver::storage_failed_anywhere() {
  int failed = storage_failure_.empty() ? 0 : 1;
  if (size_ > 1) {
    const activity::WaitScope waiting("storage-failure agreement");
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, ranks_);
  }
  storage_stop_ = storage_stop_ || failed != 0;
  return storage_stop_;
}

bool EpochDriver::run_epoch(EpochPosition& at) {
  auto batches = steps_.batches(at.epoch);
  // Order and augmentation are functions of (seed, epoch, sample): after a restart the rest of
  // the epoch is the same batches.
  batches.erase(batches.begin(), batches.begin() + static_cast<long>(std::min(at.step, batches.size())));
  if (!storage_stop_) steps_.before_epoch(at.epoch);  // the files may be gone: no page drop
  loader_.start_epoch(static_cast<std::uint64_t>(at.epoch), std::move(batches));
  for (; at.step < plan_.steps_per_epoch && !ended(); ++at.step) {
    const StopCause cause = steps_.stop_before_step(!storage_failure_.empty());  // every rank together
    if (cause == StopCause::Storage) storage_stop_ = true;
    if (cause != StopCause::None) {
      if (plan_.checkpoints()) save_checkpoint(at);  // a checkpoint of this step, unless a file failed
      return false;
    }
    steps_.before_step();
    const auto t0 = Clock::now();
    double waited = 0;
    const data::Batch b = loader_.next(&waited);
    if (!b.storage_error.empty() && storage_failure_.empty()) storage_failure_ = b.storage_error;
    const EpochSteps::Tally t = steps_.step(b, waited, steps_done_, series_);
    at.seconds += since(t0) - t.excluded;
    at.load += t.load;
    for (int i = 0; i < 3; ++i) at.sums[i] += t.sums[i];
    ++steps_done_;
    EpochPosition next = at;
    ++next.step;
    if (steps_.stop_after_step() && static_cast<std::size_t>(steps_done_) < plan_.total_steps()) {
      if (plan_.checkpoints() && steps_.checkpoint_at_stop_after_step()) save_checkpoint(next);
      return false;
    }
    if (step_checkpoint_due()) save_checkpoint(next);
  }
  return true;
}

bool EpochDriver::step_checkpoint_due() const {
  return plan_.checkpoints() && plan_.checkpoint_steps && steps_done_ % plan_.checkpoint_every == 0 &&
         static_cast<std::size_t>(steps_done_) < plan_.total_steps() && !steps_.diverged();
}

void EpochDriver::finish_epoch(const EpochPosition& at) {
  double sums[3] = {at.sums[0], at.sums[1], at.sums[2]};
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, ranks_);
  double slowest[3] = {at.seconds, at.load, storage_failure_.empty() ? 0.0 : 1.0};
  MPI_Allreduce(MPI_IN_PLACE, slowest, 3, MPI_DOUBLE, MPI_MAX, ranks_);
  if (slowest[2] > 0) storage_stop_ = true;
  wall_ += slowest[0];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool diverged = steps_.diverged();
  series_.train_loss.push_back(diverged || sums[2] <= 0 ? nan : sums[0] / sums[2]);
  series_.train_acc.push_back(sums[2] > 0 ? 100.0 * sums[1] / sums[2] : nan);
  series_.time.push_back(slowest[0]);
  series_.load.push_back(slowest[1]);
  series_.wall.push_back(wall_);
  if (diverged || storage_stop_) {  // NaN weights, or weights trained on missing data: nothing to evaluate
    series_.test_loss.push_back(nan);
    series_.test_acc.push_back(nan);
    series_.test_time.push_back(0.0);
    return;
  }
  const Evaluation e = steps_.evaluate();
  series_.test_loss.push_back(e.loss);
  series_.test_acc.push_back(e.acc);
  series_.test_time.push_back(e.seconds);
}

// Collective over the training ranks; rank 0 writes. No rank starts another step before the
// file is written (and, for parameter servers, before rank 0 has the servers' state). Nothing is
// written once a data file failed anywhere: the steps since trained on zeros where samples were
// missing, and the last checkpoint is the one to resume from.
void EpochDriver::save_checkpoint(const EpochPosition& at) {
  if (storage_failed_anywhere()) return;
  TrainingCheckpoint c;
  steps_.save_weights(c);
  const EpochSteps::RankState mine = steps_.rank_state();
  c.buffers = gather_to_root(mine.buffers, MPI_FLOAT, rank_, size_, ranks_);
  c.net_steps = gather_to_root(mine.net_steps, MPI_DOUBLE, rank_, size_, ranks_);
  c.phases = gather_to_root(mine.phases, MPI_DOUBLE, rank_, size_, ranks_);
  c.positions = gather_to_root(at.packed(), MPI_DOUBLE, rank_, size_, ranks_);
  double reads[2] = {mine.file_reads[0], mine.file_reads[1]};
  MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : reads, reads, 2, MPI_DOUBLE, MPI_SUM, 0, ranks_);
  if (rank_ == 0) {
    int ranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    c.ranks = ranks;
    c.epoch = at.epoch;
    c.epoch_step = static_cast<std::int64_t>(at.step);
    c.steps = static_cast<std::int64_t>(static_cast<std::size_t>(at.epoch) * plan_.steps_per_epoch + at.step);
    c.series = series_;
    c.file_reads = {reads[0] + file_reads_before_[0], reads[1] + file_reads_before_[1]};
    c.write(plan_.checkpoint, plan_.reproducer);
    maybe_kill_after_checkpoint();
  }
  MPI_Barrier(ranks_);
}

}  // namespace hpcnn
