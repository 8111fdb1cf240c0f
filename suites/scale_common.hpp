// What hpcnn-scale's two kinds of points share: the typed point, the exchange scheme as the
// training loop's gradient synchronization, the exchange's set-up, and the record of the figures
// every scale point has. Synthetic batches: scale_suite.cpp; real data (--data): scale_data.cpp.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/exchange.hpp"
#include "collectives/exchange_step.hpp"
#include "engine/buckets.hpp"
#include "engine/graph.hpp"
#include "harness/rank_series.hpp"
#include "harness/sweep.hpp"
#include "harness/training_loop.hpp"
#include "results/result_file.hpp"
#include "suites/model_point.hpp"

namespace hpcnn {

// A point of hpcnn-scale, in types.
struct ScalePoint {
  ModelPoint mp;  // mp.batch: per worker
  const ExchangeInfo* scheme = nullptr;
  int servers = 0, workers = 1;
  bool strong = false;
  int global_batch = 0;
  int baseline_batch = 0;  // what one rank alone runs for the efficiency's denominator
  double bucket_mb = 0;
  bool exchange_bf16 = false;  // --exchange-precision bf16
  bool measure_baseline = false;
  std::string baseline_file;  // --baseline-file, or empty
  bool synchronous() const { return !scheme->asynchronous; }
};

ScalePoint scale_point(const PointSettings& s, MPI_Comm comm);

// The exchange scheme as the training loop's gradient synchronization: buckets start as backward
// finishes them, the wait is the comm_wait phase, and the scheme applies the update (the
// optimizer after an allreduce; the weights that came back from a parameter server).
class ExchangeSync : public GradientSync {
 public:
  ExchangeSync(Exchange& exchange, const ExchangeInfo& scheme, const GradientBuckets& buckets)
      : exchange_(exchange), step_(exchange, scheme), buckets_(buckets) {}
  void before_step() override {
    in_backward_s_ = 0;
    step_.align();
  }
  const GradientBuckets* buckets() const override { return &buckets_; }
  void on_bucket(int b, Network& net) override {
    const auto t0 = std::chrono::steady_clock::now();
    // No synchronize here: each exchange orders its reads after the backend's kernels itself
    // (nccl on the device, the others by synchronizing when the memory is the device's).
    step_.bucket_ready(b, net.params(), net.grads());
    in_backward_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double wait(Network& net, const StepStats& local) override {
    step_.wait(net.params(), net.grads());
    return local.loss;
  }
  void update(float* params, Network& net) override { step_.update(params, net.grads()); }
  bool stop_agreed() override { return exchange_.stop_agreed(); }
  // Seconds of the last step's backward phase spent in the exchange's calls (bucket starts and
  // progress, with the sums they make): what separates the node's backward compute from the
  // exchange's work in the record (backward_compute_s, what hpcnn-simulate takes).
  double in_backward_seconds() const { return in_backward_s_; }

 private:
  Exchange& exchange_;
  ExchangeStep step_;
  const GradientBuckets& buckets_;
  double in_backward_s_ = 0;
};

// What one worker measured.
struct WorkerTimes {
  PhaseSeries phases;
  std::vector<double> exchange_in_backward;  // per timed iteration: ExchangeSync::in_backward_seconds
  Traffic traffic_timed;  // bytes over the timed iterations
  double isolated_comm = -1;
  float last_loss = 0;
  std::string diverged;  // "diverged: loss nan at iteration k ...": the first non-finite loss, or empty
  std::string interrupted;  // a stop signal ended the timed loop: the reason, or empty
};

// Bytes per iteration of every rank (workers: timed iterations; servers: the whole run / steps),
// the staleness of every push, and the largest peak RSS; gathered to rank 0.
struct RankFigures {
  Array sent = make_array("bytes_sent_per_rank", {}, {}), received = make_array("bytes_received_per_rank", {}, {});
  std::vector<double> staleness;
  double max_rss = 0;
};

RankFigures gather_rank_figures(Exchange& exchange, const WorkerTimes& t, const ModelPoint& mp, std::int64_t steps,
                                MPI_Comm comm);

ExchangeSetup exchange_setup(const ScalePoint& sp, const Graph& graph, const GradientBuckets& buckets, Backend& backend,
                             MPI_Comm comm);

// Set-up failures that are not the user's (no GPU, NCCL refusing the placement) fail the point on
// every rank together instead of aborting the job; a UsageError is the same on every rank: exit 2.
std::unique_ptr<Exchange> make_exchange(const ExchangeInfo& scheme, const ExchangeSetup& setup, MPI_Comm comm);

// The record of a scale point (rank 0): scheme, workers, batch, phases, img_per_s, traffic and
// staleness (with their arrays), efficiency against `baseline` (> 0), peak RSS, final loss.
void set_scale_fields(ResultPoint& out, const ScalePoint& sp, const PhaseArrays& phases, const RankFigures& f,
                      const WorkerTimes& t, ExchangeMemory memory, std::size_t buckets, double baseline);

}  // namespace hpcnn
