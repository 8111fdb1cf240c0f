// Real-data training as hpcnn-train --data and hpcnn-scale --data run it: epochs of steps over
// this rank's batches, each epoch's training time, loss and accuracy over the ranks and a test
// evaluation after it, a stop signal honoured at a step boundary, and checkpoints every N steps
// or epochs with a restart from one (bit-identical to a training that was never stopped). The two
// suites differ in what a step is (this rank's share of a global mean gradient, or an exchange
// scheme), in what a checkpoint carries besides the loop's own state, and in how a parameter
// server stops its workers: each brings that as an EpochSteps.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/batch_loader.hpp"
#include "engine/optimizer.hpp"
#include "harness/checkpoint.hpp"
#include "harness/signals.hpp"
#include "suites/evaluator.hpp"

namespace hpcnn {

// Where a rank stands: the epoch in progress, its steps done, and what this rank gathered in it.
struct EpochPosition {
  int epoch = 0;
  std::size_t step = 0;        // steps of this epoch done
  double sums[3] = {0, 0, 0};  // this rank's loss x images, correct, images
  double seconds = 0;          // this rank's training time in the epoch (its steps; evaluations excluded)
  double load = 0;             // of which the data: waiting for the loader, or reading the files
  static constexpr std::size_t kPacked = 5;
  std::vector<double> packed() const { return {sums[0], sums[1], sums[2], seconds, load}; }
  void unpack(const double* v);
};

// Per epoch over the ranks (the same on every rank), and per step and per --eval-every evaluation.
struct EpochSeries {
  std::vector<double> train_loss, train_acc, test_loss, test_acc;
  std::vector<double> time;       // each epoch's training time, slowest rank
  std::vector<double> test_time;  // the evaluation after each epoch
  std::vector<double> load;       // each epoch's data time, slowest rank
  std::vector<double> wall;       // the training time so far at each epoch's end
  std::vector<double> step_loss;  // the loss every step judged (hpcnn-train --data)
  std::vector<double> eval_step, eval_loss, eval_acc;  // --eval-every (hpcnn-train --data)
  // Every series by name, for a checkpoint.
  std::vector<std::pair<const char*, std::vector<double>*>> named();
};

// A checkpoint of a real-data training, in types: the loop's state, the weights and optimizer
// state, and per training rank (in rank order) its batch-norm statistics, forward-pass counts
// (dropout's step), position in the epoch and, for hpcnn-scale, its timed phases; the files'
// reads so far. Rank 0 of the training ranks writes it; every rank reads it.
struct TrainingCheckpoint {
  static constexpr std::int64_t kLayout = 2;  // checkpoints of another layout are refused
  std::int64_t ranks = 0;                     // the job's MPI ranks, servers included
  int epoch = 0;                              // the epoch in progress
  std::int64_t epoch_step = 0;                // its steps done
  std::int64_t steps = 0;                     // steps over all epochs
  std::vector<float> params;
  Optimizer::State optimizer;
  EpochSeries series;
  std::vector<float> buffers;                     // per rank
  std::vector<double> net_steps, positions, phases;  // per rank
  std::vector<double> file_reads = {0, 0};        // reads and bytes, all ranks

  void write(const std::string& file, const std::string& reproducer) const;
  // RuntimeError naming the file for a checkpoint of another layout (written by an older hpcnn)
  // or one that lacks an entry.
  static TrainingCheckpoint from(const Checkpoint& c, const std::string& file);
};

// The point's checkpoint file parsed on every rank (rank 0 reads it), or nothing when there is none.
std::optional<TrainingCheckpoint> read_training_checkpoint(const std::string& file, const std::string& reproducer,
                                                           MPI_Comm comm);

// RuntimeError "FILE: 'NAME' holds GOT values, this point needs WANT" when got != want: the CRC and
// the settings matched, so a size that still disagrees is another build's model or a forged file.
void expect_checkpoint_size(const std::string& file, const char* name, std::size_t got, std::size_t want);

// How a training ended: "" in both when it finished (or diverged).
struct TrainingEnd {
  std::string signal;   // every rank: why a stop signal ended it (after a checkpoint where there are)
  // A data file failed: true on every rank; `storage` says what on the ranks whose files failed
  // ("" on the others). The training stopped at the next step boundary without a checkpoint of
  // the steps after the failure, so the last checkpoint written stays the one to resume from.
  bool storage_stop = false;
  std::string storage;
  bool stopped() const { return storage_stop || !signal.empty(); }
};

// What a suite's training brings to the loop. Every call is made on every training rank.
class EpochSteps {
 public:
  struct Tally {
    double sums[3] = {0, 0, 0};  // this rank's loss x images, correct, images in the step
    double load = 0;             // seconds of the step spent on the data
    double excluded = 0;         // seconds of the step that are not training (an evaluation)
  };
  // This rank's state in a checkpoint, gathered in rank order.
  struct RankState {
    std::vector<float> buffers;
    std::vector<double> net_steps, phases;
    double file_reads[2] = {0, 0};
  };
  virtual ~EpochSteps() = default;
  // This rank's batches of `epoch` (sample indices), in order.
  virtual std::vector<std::vector<std::uint32_t>> batches(int epoch) = 0;
  // Before the loader reads the first batch of `epoch` (a resumed epoch's too), outside every
  // step's clock: where cold storage drops the files' pages. Collective where it is.
  virtual void before_epoch(int /*epoch*/) {}
  // Has a stop signal or a storage failure (`storage_failed`: this rank's) reached any rank?
  // Asked before every step (a collective where it is; stop_cause_anywhere).
  virtual StopCause stop_before_step(bool storage_failed) = 0;
  // Before a step, outside its clock (a synchronous scheme's barrier).
  virtual void before_step() {}
  // One step on `b`; `waited`: the seconds the loader took to hand it over; `done`: the steps
  // before it. A batch with a storage_error still makes its step (exchange partners and servers
  // expect it); its figures are never kept.
  virtual Tally step(const data::Batch& b, double waited, std::int64_t done, EpochSeries& series) = 0;
  // After a step: all ranks stop here (a parameter server's reply said so); and whether that stop
  // is a state worth a checkpoint (every worker stopped after the same step).
  virtual bool stop_after_step() { return false; }
  virtual bool checkpoint_at_stop_after_step() { return false; }
  virtual bool diverged() const = 0;
  // Divergence ends the training at once (one rank's mean gradient), or every step still runs
  // (exchange partners and servers expect them all).
  virtual bool divergence_ends_training() const = 0;
  // The test evaluation after an epoch (collective).
  virtual Evaluation evaluate() = 0;
  // Checkpoints: the weights and optimizer state into `c` on rank 0 (collective), this rank's own
  // state, and a restart from `c` (sizes checked) as rank `rank` of `ranks`.
  virtual void save_weights(TrainingCheckpoint& c) = 0;
  virtual RankState rank_state() = 0;
  virtual void restore(const TrainingCheckpoint& c, std::size_t rank, std::size_t ranks) = 0;
};

// The loop over the epochs. `loader` and `steps` must outlive it; `ranks`: the training ranks.
class EpochDriver {
 public:
  struct Plan {
    int epochs = 1;
    std::size_t steps_per_epoch = 0;
    long checkpoint_every = 0;       // epochs or steps; 0: no checkpoints
    bool checkpoint_steps = false;   // checkpoint_every counts steps
    std::string checkpoint;          // the point's checkpoint file, or ""
    std::string reproducer;          // the settings a checkpoint belongs to
    bool checkpoints() const { return checkpoint_every > 0 && !checkpoint.empty(); }
    std::size_t total_steps() const { return steps_per_epoch * static_cast<std::size_t>(epochs); }
  };
  EpochDriver(Plan plan, MPI_Comm ranks, data::BatchLoader& loader, EpochSteps& steps);

  // Continue from a checkpoint (before train()): the loop's state here, the suite's by restore().
  void resume(const TrainingCheckpoint& c);
  // Every epoch from where the training stands, until the end, a stop signal or a data file that
  // failed on any rank.
  TrainingEnd train();

  const EpochSeries& series() const { return series_; }
  std::int64_t steps() const { return steps_done_; }
  const std::string& checkpoint_file() const { return plan_.checkpoint; }
  // Rank 0: the files' reads (k = 0) and bytes (k = 1) of every rank before a restart.
  double file_reads_before(int k) const { return file_reads_before_[k]; }
  int resumed_epochs() const { return resumed_epochs_; }
  std::int64_t resumed_steps() const { return resumed_steps_; }

 private:
  bool ended() const { return steps_.divergence_ends_training() && steps_.diverged(); }
  bool run_epoch(EpochPosition& at);  // false: a stop ended it
  // Collective: has a data file failed on any rank? Remembered (storage_stop_) once one has.
  bool storage_failed_anywhere();
  TrainingEnd end_of_training(const std::string& signal);
  void finish_epoch(const EpochPosition& at);
  bool step_checkpoint_due() const;
  void save_checkpoint(const EpochPosition& at);

  Plan plan_;
  MPI_Comm ranks_;
  int rank_ = 0, size_ = 1;
  data::BatchLoader& loader_;
  EpochSteps& steps_;
  EpochSeries series_;
  EpochPosition start_;  // where train() begins: restored, or the start
  std::int64_t steps_done_ = 0;
  double wall_ = 0;  // the training time so far (slowest rank's epochs)
  double file_reads_before_[2] = {0, 0};  // rank 0: the reads of every rank before a restart
  int resumed_epochs_ = 0;
  std::int64_t resumed_steps_ = 0;
  std::string storage_failure_;  // this rank's first data::StorageError
  bool storage_stop_ = false;    // some rank's data files failed: no checkpoint, evaluation or page drop from here on
};

}  // namespace hpcnn
