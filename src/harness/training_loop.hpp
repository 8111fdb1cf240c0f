// The one training (and inference) loop of every suite: hpcnn-train and hpcnn-infer on synthetic
// data, hpcnn-train --data on real data, hpcnn-scale with an exchange scheme, hpcnn-blas --sweep
// model. It owns the phase clocks (the backend synchronized at every phase boundary, so a clock
// reads finished work), the warm-up split, the divergence rule and the per-iteration series; what
// happens to the gradients between backward and the weights is a GradientSync (the local
// optimizer, an exchange scheme, a mean over ranks).
//
// State that a checkpoint saves lives in the objects the loop is given (the networks' parameters
// and buffers, the optimizer's state, the data position of the caller) plus the loop's own
// counters and series (iterations(), series()), all of which are plain values between steps.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/buckets.hpp"
#include "engine/network.hpp"
#include "engine/optimizer.hpp"
#include "harness/point_error.hpp"

namespace hpcnn {

// The clock readings of one iteration, by phase. `total` runs from the start of load to a clock
// read of its own after the step's bookkeeping, so "phases add up to the iteration" is a real check.
struct StepTimes {
  double load = 0, forward = 0, backward = 0, comm_wait = 0, update = 0;
  double total = 0;
  double phase_sum() const { return load + forward + backward + comm_wait + update; }
};

// One rank's series over a loop: warm-up iterations' totals, and the timed iterations by phase.
struct PhaseSeries {
  std::vector<double> warmup, iter, load, forward, backward, comm_wait, update;
  double phase_gap_max = 0;  // largest |iter - sum of phases| / iter of a timed iteration
  void add_timed(const StepTimes& t);
};

// What a step's batch did on this rank, for the gradient synchronization and the statistics.
struct StepStats {
  double loss = 0;         // batch-mean loss (0 without a batch)
  std::int64_t images = 0; // 0: this rank had no batch this step (the end of a sharded epoch)
  std::int64_t correct = 0;
};

// What happens between backward and the weights.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Before the step's clock starts (a barrier of a synchronous exchange).
  virtual void before_step() {}
  // Buckets reported during backward (on_bucket), or nullptr for none.
  virtual const GradientBuckets* buckets() const { return nullptr; }
  virtual void on_bucket(int /*bucket*/, Network& /*net*/) {}
  // The comm_wait phase: the gradients in net.grads() become the ones to apply. Returns the loss
  // the divergence rule judges: this rank's, or the global one when the sync combines them.
  virtual double wait(Network& /*net*/, const StepStats& local) { return local.loss; }
  // The update phase: apply the gradients in net.grads() to `params`.
  virtual void update(float* params, Network& net) = 0;
  // The partners have agreed that the step just taken is this rank's last (a stop signal
  // somewhere; hpcnn-scale's parameter servers): run() stops before the next step, Interrupted.
  virtual bool stop_agreed() { return false; }
};

// One rank alone: the optimizer applied to its own gradients.
class LocalUpdate : public GradientSync {
 public:
  explicit LocalUpdate(Optimizer& optimizer) : optimizer_(optimizer) {}
  void update(float* params, Network& net) override { optimizer_.step(params, net.grads()); }

 private:
  Optimizer& optimizer_;
};

struct LoopSettings {
  Mode mode = Mode::Train;  // Infer: load and forward only
  int warmup = 0;           // untimed iterations of run(): their totals go to series().warmup
  int iters = 0;            // timed iterations of run()
  // A non-finite training loss: true stops the loop (run() returns the reason, step() skips the
  // update); false notes it and goes on, for exchange partners that expect every step.
  bool stop_on_divergence = true;
  // With more than one rank, run() starts every iteration (outside the clock) with an agreement
  // on errors over this communicator, so a rank that fails stops every rank at the same iteration.
  MPI_Comm agree = MPI_COMM_NULL;
  // A stop signal (harness/signals.hpp) on any rank of `agree` (or this process alone) ends run()
  // at the next iteration boundary with status Interrupted. Off where partners outside `agree`
  // expect every step (hpcnn-scale's parameter servers): there the GradientSync says when to stop
  // (stop_agreed).
  bool stop_on_signal = false;
  // --min-time: after `iters` timed iterations, go on until the timed iterations add up to this many
  // seconds on every rank of `agree` (0: exactly `iters`). Ranks outside `agree` that expect a
  // fixed number of steps (parameter servers) cannot follow: the suites refuse it there.
  double min_time = 0;
};

// The most timed iterations --min-time may add up to. Every timed iteration's time is kept, in
// memory and in the result file (8 bytes per rank): 100,000 keep a point's series under 1 MB per
// rank, where a 4 KiB allreduce of a few microseconds would otherwise store 16 MB at 2 ranks for
// 3 s of calls; 100,000 calls are more than any statistic of the point needs.
inline constexpr int kMaxTimedIterations = 100000;

// A batch on the host: `size` images (N x C x H x W plain) and labels; size 0 = no batch.
struct BatchView {
  const float* images = nullptr;
  const std::int32_t* labels = nullptr;
  int size = 0;
};

struct StepResult {
  StepTimes times;
  StepStats local;
  double judged_loss = 0;  // what GradientSync::wait returned
  bool diverged = false;   // judged_loss is not finite (training)
};

// Called by run() around the iterations; all optional.
class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  virtual void before_iteration(int /*k*/) {}     // outside the clock, before the sync's before_step
  virtual void timed_start() {}                   // the first timed iteration is about to start
  virtual void after_iteration(int /*k*/, const StepResult& /*r*/) {}
};

class TrainingLoop {
 public:
  // sync: required for training, unused for inference.
  TrainingLoop(Backend& backend, const LoopSettings& settings, GradientSync* sync);

  // One iteration on `net`: load the batch, forward, and when training backward, the sync's wait
  // and update (of `owner`'s parameters: a network of another batch size may compute the
  // gradients of its parameters, as hpcnn-train --data's short last batch does). A rank without
  // a batch (size 0) skips load, forward and backward but still takes part in wait and update.
  StepResult step(Network& net, const BatchView& batch, Network* owner = nullptr);

  // settings.warmup + settings.iters steps over batch(k) (more with settings.min_time: timed_iterations()
  // says how many); the series gets every iteration.
  // Returns the error that stopped the loop with its status (none(): it ran to the end); never
  // throws. A divergence with stop_on_divergence is such an error (Diverged).
  PointError run(Network& net, const std::function<BatchView(int)>& batch, LoopObserver* observer = nullptr);

  const PhaseSeries& series() const { return series_; }
  long iterations() const { return iterations_; }  // steps taken, warm-up included
  int timed_iterations() const { return static_cast<int>(series_.iter.size()); }
  float last_loss() const { return last_loss_; }
  // "diverged: loss nan at iteration 3 (warm-up included)" for the first non-finite loss, or "".
  const std::string& divergence() const { return divergence_; }

 private:
  // Collective over settings_.agree when it has several ranks: the OR of every rank's flags.
  int agree_flags(int mine);

  Backend& backend_;
  LoopSettings settings_;
  GradientSync* sync_;
  PhaseSeries series_;
  long iterations_ = 0;
  float last_loss_ = 0;
  std::string divergence_;
};

}  // namespace hpcnn
